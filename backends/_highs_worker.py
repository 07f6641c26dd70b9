"""Child process of a time-limited HiGHS MILP solve (see ``backends/highs.py``, ``_solve_isolated``)."""
import sys

from remc.backends.highs import isolated_main

if __name__ == "__main__":
    isolated_main(int(sys.argv[1]), int(sys.argv[2]))
