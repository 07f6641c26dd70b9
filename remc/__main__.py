"""``python -m remc``: the same as the ``remc`` command."""
import sys

from .entry import main

sys.exit(main())
