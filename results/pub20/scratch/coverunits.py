"""Which units the covering MILP's start (cover_start: S of its solution) computes more than once, against the
units the bound rounds grow and the optimum recomputes: coverunits.py GRAPH RATIO"""
import math
import pickle
import sys
from pathlib import Path

import numpy as np

from remc.backends.strategies import _CancellableMip, _highs
import threading
from remc.passes.coverbound import cover_bound
from remc.ir.schedule import solve_rs
from remc.ir.nodelink import load_nodelink
from remc.ir.schedule import checkpoint_all

path, ratio = sys.argv[1], float(sys.argv[2])
dag = load_nodelink(path)
budget = math.ceil(checkpoint_all(dag).peak(dag) * ratio)
cb = cover_bound(dag, budget, _CancellableMip(_highs(), threading.Event()), time_limit=30, threads=1, depth=1,
                 max_columns=None, kept=True, start=True)
R, S = solve_rs(dag, cb.start)
print("cover", cb.status, cb.bound, "recomputes", sorted(int(v) for v in np.flatnonzero(np.asarray(R, bool).sum(0) > 1)))
best = pickle.loads(Path(f"/tmp/pub20/opt_{Path(path).stem}_{ratio}.pkl").read_bytes())
print("optimum recomputes", sorted(int(v) for v in np.flatnonzero(np.asarray(best.R, bool).sum(0) > 1)))
