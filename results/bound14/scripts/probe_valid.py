"""Is the covering MILP's bound above a schedule? ResNet50 (paper size, fine) with one bottleneck block per stage at
RATIO: checkmate for SECONDS (its schedule checked: correct, within budget, cost recomputed), then the covering MILP at
depths 1-4 (60 s each). python probe_valid.py RATIO SECONDS"""
from __future__ import annotations

import json
import math
import sys

from remc import zoo
from remc.backends.highs import HighsBackend
from remc.backends.strategies import make_options, solve
from remc.ir.schedule import check, checkpoint_all, memory_profile
from remc.passes.coverbound import cover_bound
from remc.pipeline import State, compile_pipeline, run

ratio, secs = float(sys.argv[1]), float(sys.argv[2])
cfg = dict(zoo.paper_config("resnet50"))
batch = cfg.pop("batch")
model = zoo.export("resnet50", batch, train=True, weights="shape-only", stages=(1, 1, 1, 1), **cfg)
dag = run(compile_pipeline(granularity="fine")[:3], State(model=model)).dag
base = float(dag.cost.sum())
budget = math.ceil(ratio * checkpoint_all(dag).peak(dag))
s = solve("checkmate", dag, budget, make_options("checkmate", time_limit=secs, threads=1))
errs = check(dag, s.R, s.S)
peak = int(memory_profile(dag, s.R, s.S).max())
cost = float(s.R.sum(axis=0) @ dag.cost)
row: dict = dict(n=dag.n, ratio=ratio, budget=budget, errors=len(errs), peak=peak, cost=cost, over=100 * (cost / base - 1),
                 report_cost=s.report.cost, status=s.report.status, bound_over=100 * (s.report.bound / base - 1),
                 source=s.report.bound_source, pinned=int(dag.no_recompute.sum()),
                 zero_mem=int((dag.mem == 0).sum()), zero_cost=int((dag.cost == 0).sum()))
print(json.dumps(row), flush=True)
for depth in (1, 2, 3, 4):
    cb = cover_bound(dag, budget, HighsBackend(), time_limit=60, threads=1, depth=depth, max_columns=None)
    row[f"cover{depth}"] = 100 * (cb.bound / base - 1) if math.isfinite(cb.bound) else None
    row[f"cover{depth}_above_schedule"] = bool(cb.bound > cost)
    row[f"cover{depth}_status"] = f"{cb.status} ({cb.columns} columns, {cb.seconds:.0f} s)"
    print(depth, row[f"cover{depth}"], cb.status, flush=True)
print(json.dumps(row), flush=True)
with open("results/bound14/probe_valid.jsonl", "a") as f:
    f.write(json.dumps(row) + "\n")
