"""Random layered DAGs in the family of Moccasin's benchmark (``random_layered_n{N}_w{W}_...``): N nodes in
levels of about W nodes, each node reading 1-3 nodes of the previous level and, with probability
``skip``, one node of an earlier level; integer costs and memory drawn uniformly. For scale measurements
(tools/bench_scale.py); seeds other than Moccasin's, so nothing is tuned to the published instances."""
from __future__ import annotations

import numpy as np

from remc.ir.dag import DAG


def layered_dag(n: int, width: int, seed: int, *, skip: float = 0.2, cost_hi: int = 100,
                mem_hi: int = 100) -> DAG:
    """A random layered DAG of ``n`` nodes numbered level by level (a topological order)."""
    rng = np.random.default_rng(seed)
    levels = [list(range(s, min(s + width, n))) for s in range(0, n, width)]
    edges = []
    for li in range(1, len(levels)):
        prev = levels[li - 1]
        for v in levels[li]:
            for u in rng.choice(prev, size=min(len(prev), int(rng.integers(1, 4))), replace=False):
                edges.append((int(u), v))
            if li >= 2 and rng.random() < skip:
                earlier = levels[int(rng.integers(0, li - 1))]
                edges.append((int(rng.choice(earlier)), v))
    cost = rng.integers(1, cost_hi + 1, n).astype(float)
    mem = rng.integers(1, mem_hi + 1, n) * 1024
    return DAG(tuple(f"v{i}" for i in range(n)), cost, mem, np.array(edges, dtype=np.int64).reshape(-1, 2))
