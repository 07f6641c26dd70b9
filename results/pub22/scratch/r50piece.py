"""bound14's ResNet50 piece (fine, one bottleneck block per stage, 741 units) at RATIO: checkmate SECONDS (cached), then
mapcheck at depths 1, 2: which rows of the covering MILP the checked schedule violates. r50piece.py RATIO SECONDS"""
import math
import pickle
import sys
from pathlib import Path

import numpy as np
from mapcheck import mapcheck

from remc import zoo
from remc.backends.strategies import make_options, solve
from remc.ir.schedule import check, checkpoint_all, memory_profile
from remc.pipeline import State, compile_pipeline, run

ratio, secs = float(sys.argv[1]), float(sys.argv[2])
cfg = dict(zoo.paper_config("resnet50"))
batch = cfg.pop("batch")
model = zoo.export("resnet50", batch, train=True, weights="shape-only", stages=(1, 1, 1, 1), **cfg)
dag = run(compile_pipeline(granularity="fine")[:3], State(model=model)).dag
pickle.dump(dag, open(f"/tmp/pub22/r50piece_dag.pkl", "wb"))
budget = math.ceil(ratio * checkpoint_all(dag).peak(dag))
cache = Path(f"/tmp/pub22/r50piece_{ratio}.pkl")
if cache.exists():
    s = pickle.loads(cache.read_bytes())
else:
    s = solve("checkmate", dag, budget, make_options("checkmate", time_limit=secs, threads=1))
    cache.write_bytes(pickle.dumps(s))
print("n", dag.n, "errors", len(check(dag, s.R, s.S)), "peak", int(memory_profile(dag, s.R, s.S).max()), "budget", budget,
      "overhead", float(s.R.sum(axis=0) @ dag.cost - dag.cost.sum()), flush=True)
for d in (1, 2):
    cm, x, bad, ax, obj, overhead, info = mapcheck(dag, budget, s.R, s.S, d)
    print("depth", d, "cols", len(x), "violated", len(bad), "obj", obj, "overhead", overhead, flush=True)
    for r in bad[:20]:
        A = cm.model.A.scipy().tocsr()
        cols = A.indices[A.indptr[r]:A.indptr[r + 1]]
        vals = A.data[A.indptr[r]:A.indptr[r + 1]]
        print("  row", r, "ax", ax[r], "lo", cm.model.row_lower[r], "hi", cm.model.row_upper[r],
              [(int(c), float(v), float(x[c])) for c, v in zip(cols, vals)], flush=True)
    pickle.dump((x, bad, info), open(f"/tmp/pub22/r50piece_map{d}.pkl", "wb"))
