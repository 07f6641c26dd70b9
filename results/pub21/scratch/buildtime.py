"""CPU seconds of one bound round's model build (Python) against the whole round, Moccasin's n=100 at 0.8."""
import math
import pickle
import sys
import time

import remc.backends.cpsat as cpsat
from remc.ir.nodelink import load_nodelink
from remc.ir.schedule import checkpoint_all

path, ratio = sys.argv[1], float(sys.argv[2])
dag = load_nodelink(path)
budget = math.ceil(checkpoint_all(dag).peak(dag) * ratio)
ob = cpsat._build
spent = []


def timed(*a, **k):
    c = time.process_time()
    out = ob(*a, **k)
    spent.append(time.process_time() - c)
    return out


cpsat._build = timed
best = pickle.load(open(f"/tmp/pub21/opt_{path.split('/')[-1][:-5]}_{ratio}.pkl", "rb"))
c = time.process_time()
res = cpsat.cpsat_bound(dag, budget, cpsat.CpSatOptions(time_limit=600, threads=1, copies=2, presolve=False),
                        hint=best, stop_at=best.cost(dag), quick=cpsat.QUICK_ROUNDS)
print(res.status, f"{time.process_time() - c:.2f} cpu in all, _build", " ".join(f"{s:.3f}" for s in spent))
