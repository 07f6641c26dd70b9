"""The depth-2 covering MILP on ResNet50 fine cut to one block per stage at 0.9, with its cover rows as built (scaled
by 1/e_k) and unscaled (bytes), to tell numerics from the model: python probe_scale.py"""
from __future__ import annotations

import dataclasses
import math

import numpy as np
import scipy.sparse as sp

from remc import zoo
from remc.backends.highs import HighsBackend
from remc.ir.schedule import checkpoint_all
from remc.passes.coverbound import _pairs, build_cover
from remc.pipeline import State, compile_pipeline, run

cfg = dict(zoo.paper_config("resnet50"))
batch = cfg.pop("batch")
model = zoo.export("resnet50", batch, train=True, weights="shape-only", stages=(1, 1, 1, 1), **cfg)
dag = run(compile_pipeline(granularity="fine")[:3], State(model=model)).dag
base = float(dag.cost.sum())
budget = math.ceil(0.9 * checkpoint_all(dag).peak(dag))
_, _, _, over, excess, _ = _pairs(dag, budget)
e = excess[over]
print("over stages", len(over), "excess min/median/max", e.min(), np.median(e), e.max(), flush=True)
for depth in (1, 2):
    cm = build_cover(dag, budget, depth=depth, max_columns=None)
    m = cm.model
    for name, scale in (("scaled 1/e", np.ones(len(e))), ("bytes", e)):
        d = np.ones(m.num_row)
        d[:len(e)] = scale
        A = sp.diags(d) @ m.A
        lo = m.row_lower * d
        mm = dataclasses.replace(m, A=sp.csc_matrix(A), row_lower=lo, row_upper=np.where(np.isfinite(lo), np.inf, 0.0))
        res = HighsBackend().solve(mm, integral=True, time_limit=60, threads=1, gap=1e-9)
        print(f"depth {depth} {name}: {res.status} bound +{100 * res.bound * cm.cost_unit / base:.6f}% "
              f"objective +{100 * res.objective * cm.cost_unit / base:.6f}%", flush=True)
