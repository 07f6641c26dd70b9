# (the DAGs pickled by session 18 under /tmp/bound18: tools/bench_scale.py _graph, paper size, fine)
import pickle, sys, time
from remc.passes.coverbound import gap_cover_bound
from remc.backends.highs import HighsBackend
from remc.ir.schedule import checkpoint_all
dag = pickle.load(open(f"/tmp/bound18/{sys.argv[1]}.pkl", "rb")); ratio = float(sys.argv[2])
budget = int(ratio * checkpoint_all(dag).peak(dag)); base = float(dag.cost.sum())
t0 = time.time()
cb = gap_cover_bound(dag, budget, HighsBackend(), time_limit=60, threads=1)
print(sys.argv[1], ratio, f"{100*(cb.bound/base-1):.5f}%", cb.status, cb.columns, f"{time.time()-t0:.1f}s")
