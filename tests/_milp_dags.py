"""Small scheduling DAGs and an exhaustive solver for the MILP and LP-rounding tests."""
from __future__ import annotations

import dataclasses
import itertools
import pickle

import numpy as np

from remc.ir.dag import DAG
from remc.ir.schedule import check, memory_profile, solve_r


def _dag(edges: set[tuple[int, int]], n: int, rng: np.random.Generator, *, mem_hi: int = 8, cost_hi: int = 6,
         workspace: bool = False, constant: int = 0, no_recompute: np.ndarray | None = None,
         backward: np.ndarray | None = None) -> DAG:
    return DAG(tuple(f"v{i}" for i in range(n)), rng.integers(1, cost_hi, n).astype(float),
               rng.integers(1, mem_hi, n), np.array(sorted(edges), dtype=np.int64).reshape(-1, 2), constant,
               rng.integers(0, 3, n) if workspace else None, backward, no_recompute)


def random_dag(n: int, rng: np.random.Generator, *, p: float = 0.3, no_recompute: bool = False,
               workspace: bool = False, constant: int = 0) -> DAG:
    """A chain 0 -> 1 -> ... -> n-1 plus random forward edges i -> j (j > i + 1) with probability p."""
    edges = {(i, i + 1) for i in range(n - 1)}
    edges |= {(i, j) for i in range(n) for j in range(i + 2, n) if rng.random() < p}
    nr = rng.random(n) < 0.2 if no_recompute else None
    return _dag(edges, n, rng, workspace=workspace, constant=constant, no_recompute=nr)


def training_graph(layers: int, rng: np.random.Generator, *, skips: tuple[tuple[int, int], ...] = (),
                   outputs: int = 1, mem_hi: int = 10, workspace: bool = False, constant: int = 0,
                   dropout: tuple[int, ...] = ()) -> DAG:
    """A forward chain f_0..f_{L-1}, a loss, and the mirrored backward b_{L-1}..b_0.

    b_k reads the gradient from above, f_k and f_{k-1} (as a ReLU/conv backward does). ``skips`` (a, c)
    add a forward skip f_a -> f_c (residual or U-Net long skip) and its backward b_c -> b_a. ``outputs``
    > 1 gives the last forward unit several heads that all feed the loss (multi-output). ``dropout``
    units are never recomputed.
    """
    L = layers
    heads = list(range(L, L + outputs - 1))
    loss = L + outputs - 1
    n = loss + 1 + L
    b = {k: loss + L - k for k in range(L)}
    edges = {(k - 1, k) for k in range(1, L)}
    edges |= {(L - 1, h) for h in heads} | {(h, loss) for h in heads} | {(L - 1, loss)}
    for k in range(L):
        edges.add((loss if k == L - 1 else b[k + 1], b[k]))
        edges.add((k, b[k]))
        if k > 0:
            edges.add((k - 1, b[k]))
    for a, c in skips:
        edges |= {(a, c), (b[c], b[a])}
    nr = np.zeros(n, dtype=bool)
    nr[list(dropout)] = True
    backward = np.arange(n) > loss
    return _dag(edges, n, rng, mem_hi=mem_hi, workspace=workspace, constant=constant, no_recompute=nr,
                backward=backward)


def layered_dag(n: int, width: int, seed: int, *, skip: float = 0.2) -> DAG:
    """A random layered DAG as tools/layered.py makes them: levels of ``width`` units, each unit reading 1-3 of
    the level before and, with probability ``skip``, one of an earlier level; costs 1-100, 1-20 KiB."""
    rng = np.random.default_rng(seed)
    levels = [list(range(s, min(s + width, n))) for s in range(0, n, width)]
    edges = []
    for li in range(1, len(levels)):
        for v in levels[li]:
            for u in rng.choice(levels[li - 1], size=min(len(levels[li - 1]), int(rng.integers(1, 4))), replace=False):
                edges.append((int(u), v))
            if li >= 2 and rng.random() < skip:
                edges.append((int(rng.choice(levels[int(rng.integers(0, li - 1))])), v))
    cost = rng.integers(1, 101, n).astype(float)
    mem = rng.integers(1, 21, n) * 1024
    return DAG(tuple(f"v{i}" for i in range(n)), cost, mem, np.array(edges, dtype=np.int64).reshape(-1, 2))


def correct_schedules(dag: DAG):
    """Every (R, S) with R = solve_r(S) that is correct, over every S: every frontier-advancing schedule up to
    cleaning (any feasible (R, S) can be cleaned to one with R = solve_r(S') and no more cost or memory; see
    passes/milp_model.clean)."""
    n = dag.n
    cells = [(t, i) for t in range(n) for i in range(t)]
    for bits in itertools.product((False, True), repeat=len(cells)):
        S = np.zeros((n, n), dtype=bool)
        for (t, i), on in zip(cells, bits):
            S[t, i] = on
        R = solve_r(dag, S)
        if not check(dag, R, S):
            yield R, S


_TABLES: dict[bytes, tuple[list[np.ndarray], list[np.ndarray]]] = {}


def _key(dag: DAG) -> bytes:
    """The DAG's defining fields (not its cached properties, which a first use adds to ``__dict__``)."""
    return pickle.dumps([getattr(dag, f.name) for f in dataclasses.fields(dag)])


def _stage_table(dag: DAG) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """Per stage t, over every pair (S[t], S[t+1]) as bit masks (a, b): the stage's peak and cost, or no entry
    (peak = int64 max) where R's row breaks the no-recompute rule.

    ``correct_schedules``' set, stage by stage: with R = solve_r(S), row t of R and of the memory profile
    depend on S[t] and S[t+1] only (solve_r materializes S[t+1] \\ S[t] in stage t, then closes over the
    parents not in S[t]; FREE in stage t reads S[t+1]; the kept outputs of a stage depend on t alone, every unit
    being first computed in its own stage), and every such R passes ``check`` but for the no-recompute rule,
    which is per stage. So a schedule is a path of rows and its peak the largest row peak: the same optima as
    enumerating every S (2^(n(n-1)/2) of them) with far fewer evaluations. Built once per DAG."""
    key = _key(dag)
    if key not in _TABLES:
        n = dag.n
        big = np.iinfo(np.int64).max
        peaks, costs = [], []
        other = ~np.eye(n, dtype=bool)
        for t in range(n):
            na, nb = 1 << t, (1 << (t + 1)) if t + 1 < n else 1
            pk = np.full((na, nb), big, dtype=np.int64)
            ct = np.zeros((na, nb))
            for a in range(na):
                for b in range(nb):
                    S = np.zeros((n, n), dtype=bool)
                    S[t, :t] = [(a >> i) & 1 for i in range(t)]
                    if t + 1 < n:
                        S[t + 1, :t + 1] = [(b >> i) & 1 for i in range(t + 1)]
                    R = solve_r(dag, S)
                    if (R[t] & other[t] & dag.no_recompute).any():
                        continue
                    pk[a, b] = int(memory_profile(dag, R, S)[t].max())
                    ct[a, b] = float(R[t] @ dag.cost)
            peaks.append(pk)
            costs.append(ct)
        _TABLES[key] = peaks, costs
    return _TABLES[key]


def exhaustive_optimum(dag: DAG, budget: int) -> float | None:
    """The least cost over every correct schedule (``correct_schedules``) within budget; None if none is (a
    shortest path over the stages' rows, ``_stage_table``)."""
    peaks, costs = _stage_table(dag)
    dist = np.zeros(1)
    for pk, ct in zip(peaks, costs):
        step = np.where(pk <= budget, ct, np.inf)
        dist = (dist[:, None] + step).min(axis=0)
    return None if not np.isfinite(dist[0]) else float(dist[0])


def least_peak(dag: DAG) -> int:
    """The least peak of any correct schedule (the path over ``_stage_table``'s rows whose largest row peak is
    least)."""
    peaks, _ = _stage_table(dag)
    worst = np.full(1, np.iinfo(np.int64).min, dtype=np.int64)
    for pk in peaks:
        worst = np.maximum(worst[:, None], pk).min(axis=0)
    return int(worst[0])


def budgets_against_exhaustive(dag: DAG, solve, on_solved=None) -> None:  # noqa: ANN001
    """Every budget from checkpoint-all's peak down: ``solve(budget)`` returns a schedule of the exhaustive
    optimum's cost within the budget, and raises InfeasibleError at the first budget no schedule fits.
    ``on_solved(schedule, optimum)`` adds a caller's checks."""
    import pytest

    from remc.ir.errors import InfeasibleError
    from remc.ir.schedule import checkpoint_all
    for budget in range(checkpoint_all(dag).peak(dag), -1, -1):
        best = exhaustive_optimum(dag, budget)
        if best is None:
            with pytest.raises(InfeasibleError):
                solve(budget)
            return
        s = solve(budget)
        assert s.peak(dag) <= budget and s.cost(dag) == pytest.approx(best)
        if on_solved is not None:
            on_solved(s, best)
