import math, pickle
from remc.ir.schedule import checkpoint_all
from remc.backends.strategies import _highs
from remc.passes.coverbound import cover_bound
dag = pickle.load(open("/tmp/pub22/r50piece_dag.pkl", "rb"))
s = pickle.load(open("/tmp/pub22/r50piece_0.9.pkl", "rb"))
base = float(dag.cost.sum())
budget = math.ceil(0.9 * checkpoint_all(dag).peak(dag))
print("sched", 100 * (s.cost(dag) / base - 1), s.report.status, s.report.bound)
for d in ():
    cb = cover_bound(dag, budget, _highs(), time_limit=120, threads=1, depth=d, max_columns=None)
    print(d, cb.status, 100 * (cb.bound / base - 1), cb.bound - s.cost(dag), flush=True)
import remc.passes.coverbound as cbm
cbm.COVER_MERGE = False
cb = cover_bound(dag, budget, _highs(), time_limit=120, threads=1, depth=2, max_columns=None)
print("unmerged 2", cb.status, 100 * (cb.bound / base - 1), cb.bound - s.cost(dag), flush=True)
