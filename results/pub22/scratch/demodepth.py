"""The covering MILP on README's demo's (dag, budget) (demodag.py): depth 1 in the child with presolve (as beside
CP-SAT), depth 2 without presolve, wall seconds and the bound over computing each unit once."""
import pickle
import sys
import threading
import time

import remc.backends.strategies as st
from remc.passes.coverbound import cover_bound

dag, budget = pickle.load(open("/tmp/pub22/demo_dag.pkl", "rb"))
base = float(dag.total_cost)
for d, pre in ((1, True), (2, False)):
    t = time.perf_counter()
    cb = cover_bound(dag, budget, st._CancellableMip(st._highs(), threading.Event(), presolve=pre), time_limit=float(sys.argv[1]),
                     threads=1, depth=d, max_columns=st.COVER_BESIDE_COLUMNS)
    print(d, pre, cb.status, cb.columns, f"{cb.bound:.1f}", f"+{100 * (cb.bound / base - 1):.4f}%", f"{time.perf_counter() - t:.1f} s", flush=True)
