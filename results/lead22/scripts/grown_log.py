"""grown_log.py ARGS...: `remc ARGS...` with every CompileClock.grown call logged to stderr (the phase, the ratio,
the slowdown now); GROWTH=0 in the environment sets timebudget.SCALE_BY_GROWTH off."""
import os
import sys

import remc.timebudget as tb

if os.environ.get("GROWTH") == "0":
    tb.SCALE_BY_GROWTH = False
_orig = tb.CompileClock.grown


def grown(self, name):
    g = _orig(self, name)
    print(f"[grown] {name}: {g:.2f} (slowdown now {self.slowdown():.2f}, at {self.elapsed():.1f} s)", file=sys.stderr)
    return g


tb.CompileClock.grown = grown
from remc.cli import main  # noqa: E402

sys.exit(main(sys.argv[1:]))
