"""Which side is loose on ResNet50 at ONNX-node granularity, on a cut-down piece: ResNet50 (paper size, fine) with
one bottleneck block per stage, checkmate for SECONDS (CP-SAT applies up to 400 units), the Lagrangian and the
covering MILP (depth 1 and 4) beside it. python probe_r50.py RATIO SECONDS [STAGES, e.g. 1,1,1,1]"""
from __future__ import annotations

import json
import math
import sys
import time

from remc import zoo
from remc.backends.highs import HighsBackend
from remc.backends.strategies import make_options, solve
from remc.ir.schedule import checkpoint_all
from remc.passes.bounds import gap_bound
from remc.passes.coverbound import cover_bound
from remc.pipeline import State, compile_pipeline, run

ratio, secs = float(sys.argv[1]), float(sys.argv[2])
stages = tuple(int(x) for x in (sys.argv[3] if len(sys.argv) > 3 else "1,1,1,1").split(","))
cfg = dict(zoo.paper_config("resnet50"))
batch = cfg.pop("batch")
model = zoo.export("resnet50", batch, train=True, weights="shape-only", stages=stages, **cfg)
dag = run(compile_pipeline(granularity="fine")[:3], State(model=model)).dag
base = float(dag.cost.sum())
budget = math.ceil(ratio * checkpoint_all(dag).peak(dag))
row: dict = dict(graph=f"resnet50 fine stages {stages}", n=dag.n, ratio=ratio, seconds=secs)
t = time.perf_counter()
gb = gap_bound(dag, budget, iterations=2000)
row.update(lag=100 * (gb.bound / base - 1), lag_s=time.perf_counter() - t)
for depth in (1, 4):
    cb = cover_bound(dag, budget, HighsBackend(), time_limit=60, threads=1, depth=depth, max_columns=None)
    row[f"cover{depth}"] = 100 * (cb.bound / base - 1) if math.isfinite(cb.bound) else None
    row[f"cover{depth}_status"] = f"{cb.status} ({cb.columns} columns, {cb.seconds:.0f} s)"
s = solve("checkmate", dag, budget, make_options("checkmate", time_limit=secs, threads=1))
rep = s.report
row.update(status=rep.status, over=100 * (rep.cost / base - 1), bound_over=100 * (rep.bound / base - 1),
           source=rep.bound_source, gap=rep.gap, wall=rep.seconds)
print(json.dumps(row), flush=True)
with open("results/bound14/probe_r50.jsonl", "a") as f:
    f.write(json.dumps(row) + "\n")
