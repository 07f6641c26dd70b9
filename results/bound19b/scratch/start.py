"""gap_cover_bound(start=True) -> cover_schedule, as checkmate's _gap_cover_first reads it: python start.py NAME RATIO"""
import pickle, sys, time
from remc.passes.coverbound import gap_cover_bound, cover_schedule
from remc.backends.highs import HighsBackend
from remc.ir.schedule import checkpoint_all
name, ratio = sys.argv[1], float(sys.argv[2])
dag = pickle.load(open(f"/tmp/bound18/{name}.pkl", "rb"))
budget = int(ratio * checkpoint_all(dag).peak(dag)); base = float(dag.cost.sum())
t0 = time.time()
cb = gap_cover_bound(dag, budget, HighsBackend(), time_limit=60, threads=1, start=True)
sched = cover_schedule(dag, budget, cb.start)
c = "over the budget" if sched is None else f"+{100 * (sched.cost(dag) / base - 1):.6f}%"
print(f"{name} {ratio}: bound +{100 * (cb.bound / base - 1):.6f}% ({cb.status}), its schedule {c}, {time.time() - t0:.1f} s")
