"""The covering's start (``_gap_cover_first``) as approx receives it, then cleaned: its cost against main's schedule.
python clean_start.py PKL RATIO"""
import pickle
import sys
import time

from remc.backends import strategies as st
from remc.ir.schedule import checkpoint_all
from remc.passes.milp_model import clean
from remc.passes.options import CheckmateOptions
from remc.passes.solver_api import Clock

dag = pickle.load(open(sys.argv[1], "rb"))
budget = int(float(sys.argv[2]) * checkpoint_all(dag).peak(dag))
cb, start, note = st._gap_cover_first(dag, budget, CheckmateOptions(threads=1), Clock(300.0), None)
print("start", repr(start.cost(dag)), note)
inc = st._incumbent(dag, budget, Clock(300.0), start, first=True)
print("incumbent", repr(inc.cost(dag)))
t = time.perf_counter()
R, S = clean(dag, inc.R, inc.S)
print("cleaned", repr(float(R.sum(axis=0) @ dag.cost)), f"{time.perf_counter() - t:.2f} s")
