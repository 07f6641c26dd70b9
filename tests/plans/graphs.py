"""Small scheduling problems for the plan tests, small enough to follow by hand.

Loaded by path from tests/test_plan.py and tests/test_validate.py. Run ``python tests/plans/graphs.py``
to rewrite the golden plan files (tests/plans/*.plan) from the current printer, then review the diff.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from remc.ir.dag import DAG
from remc.ir.schedule import Schedule, check, checkpoint_all, pin_no_recompute, solve_r

HERE = Path(__file__).parent


def chain() -> DAG:
    """f1 -> f2 -> f3 -> loss, then g3 (loss, f3), g2 (g3, f2), g1 (g2, f1). Constant 100 bytes."""
    names = ("f1", "f2", "f3", "loss", "g3", "g2", "g1")
    edges = [(0, 1), (1, 2), (2, 3), (3, 4), (2, 4), (4, 5), (1, 5), (5, 6), (0, 6)]
    return DAG(names, [1.0] * 7, [10, 20, 30, 1, 30, 20, 10], edges, constant=100,
               backward=[0, 0, 0, 0, 1, 1, 1], ops=("Gemm", "Gemm", "Gemm", "Loss", "GemmGrad", "GemmGrad",
                                                    "GemmGrad"))


def chain_recompute() -> Schedule:
    """Keep f1 throughout, never keep f2: f2 is recomputed in stages 3 and 6 (0-based 2 and 5)."""
    S = np.zeros((7, 7), dtype=bool)
    for t, kept in {1: [0], 2: [0], 3: [0, 2], 4: [0, 2, 3], 5: [0, 4], 6: [0, 5]}.items():
        S[t, kept] = True
    return Schedule(solve_r(chain(), S), S, strategy="hand")


def residual() -> DAG:
    """a -> b, s = add(a, b) (the skip), loss(s); gs (loss, s), gb (gs, b), ga (gb, gs, a). Constant 64."""
    names = ("/block/conv1/Conv", "/block/conv2/Conv", "/block/Add", "loss", "grad/Add", "grad/conv2",
             "grad/conv1")
    edges = [(0, 1), (0, 2), (1, 2), (2, 3), (3, 4), (2, 4), (4, 5), (1, 5), (5, 6), (4, 6), (0, 6)]
    return DAG(names, [4.0, 4.0, 1.0, 1.0, 1.0, 8.0, 8.0], [8, 16, 8, 1, 8, 16, 8], edges, constant=64,
               workspace=[0, 4, 0, 0, 0, 0, 0], ops=("Conv", "Conv", "Add", "Loss", "AddGrad", "ConvGrad",
                                                       "ConvGrad"))


def residual_spurious() -> Schedule:
    """checkpoint all, plus a spurious checkpoint of the Add output (unit 2) in stage 6 (0-based 5)."""
    base = checkpoint_all(residual())
    S = base.S.copy()
    S[5, 2] = True
    return Schedule(solve_r(residual(), S), S, strategy="hand")


def unet() -> DAG:
    """e1 -> e2 -> m -> d1 (m, e1: the long skip) -> loss; gd1 (loss, d1), gm (gd1, m), ge2 (gm, e2),
    ge1 (ge2, gd1, e1). Constant 16."""
    names = ("e1", "e2", "m", "d1", "loss", "gd1", "gm", "ge2", "ge1")
    edges = [(0, 1), (1, 2), (2, 3), (0, 3), (3, 4), (4, 5), (3, 5), (5, 6), (2, 6), (6, 7), (1, 7),
             (7, 8), (5, 8), (0, 8)]
    return DAG(names, [1.0] * 9, [32, 8, 8, 32, 1, 32, 8, 8, 32], edges, constant=16)


def unet_recompute() -> Schedule:
    """Keep the skip e1 to the end; drop e2 and m after the forward pass (recomputed in the backward)."""
    S = np.zeros((9, 9), dtype=bool)
    for t, kept in {1: [0], 2: [0, 1], 3: [0, 2], 4: [0, 3], 5: [0, 3, 4], 6: [0, 5], 7: [0, 5, 6],
                    8: [0, 5, 7]}.items():
        S[t, kept] = True
    return Schedule(solve_r(unet(), S), S, strategy="hand")


def random_dag(rng: np.random.Generator, n: int, density: float, no_recompute: bool = False) -> DAG:
    """A random DAG on n units: a path plus random forward edges, random sizes, some workspace."""
    edges = [(i, j) for j in range(1, n) for i in range(j) if i == j - 1 or rng.random() < density]
    return DAG(tuple(f"/n{i}/Op" for i in range(n)), rng.integers(1, 10, n).astype(float),
               rng.integers(0, 100, n), edges, constant=int(rng.integers(0, 50)),
               workspace=rng.integers(0, 20, n) * (rng.random(n) < 0.3),
               no_recompute=(rng.random(n) < 0.15) if no_recompute else None)


def random_schedule(rng: np.random.Generator, dag: DAG, extra_r: bool = False) -> Schedule | None:
    """solve_r of a random S (pinned for no-recompute units); with extra_r also random extra recomputes
    (closed over parents, so some values are recomputed while checkpointed). None when the result breaks
    the no-recompute rule (a no-recompute parent of a recomputed unit)."""
    n = dag.n
    S = np.tril(rng.random((n, n)) < rng.random(), -1)
    S[:, dag.no_recompute] = False
    S = pin_no_recompute(dag, S)
    R = solve_r(dag, S)
    if extra_r:
        R |= np.tril(rng.random((n, n)) < 0.2)
        for t in range(n):
            for k in range(t, -1, -1):
                if R[t, k]:
                    p = dag.preds[k]
                    R[t, p[~S[t, p]]] = True
    return None if check(dag, R, S) else Schedule(R, S, strategy="random")


def golden() -> dict[str, tuple[DAG, Schedule, dict]]:
    """Golden plan files: name -> (dag, schedule, generate_plan keyword arguments)."""
    return {
        "chain.ckall": (chain(), checkpoint_all(chain()), dict(graph_name="chain")),
        "chain.recompute": (chain(), chain_recompute(), dict(graph_name="chain", budget=180)),
        "residual.ckall": (residual(), checkpoint_all(residual()), dict(graph_name="residual")),
        "residual.spurious.late": (residual(), residual_spurious(), dict(graph_name="residual",
                                                                         early_free=False)),
        "residual.spurious.early": (residual(), residual_spurious(), dict(graph_name="residual")),
        "unet.recompute": (unet(), unet_recompute(), dict(graph_name="unet", granularity="coarse")),
    }


if __name__ == "__main__":
    from remc.ir.plan import print_plan
    from remc.passes.plangen import generate_plan

    for name, (dag, sched, kw) in golden().items():
        (HERE / f"{name}.plan").write_text(print_plan(generate_plan(dag, sched, **kw)), encoding="utf-8")
        print("wrote", HERE / f"{name}.plan")
