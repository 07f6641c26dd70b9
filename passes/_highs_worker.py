"""Child process of a time-limited HiGHS MILP solve (see ``passes/_lp.py``, ``_solve_isolated``)."""
import sys

from remc.passes._lp import isolated_main

if __name__ == "__main__":
    isolated_main(int(sys.argv[1]))
