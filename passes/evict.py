"""A forward eviction heuristic for large general DAGs: one pass over the stages, as a runtime with a memory
cap would run them (in the spirit of Dynamic Tensor Rematerialization, Kirisame et al., ICLR 2021), but
producing a frontier-advancing schedule (R, S) that remc's memory model evaluates exactly.

Stage t computes unit t and, recursively, every parent that is not resident (the least R row for S[t]).
By default everything computed or resident that has a later use is kept for stage t+1. While stage t's
peak exceeds the budget, the kept value with the lowest score is evicted (dropped from S[t+1], and from
S[t] when stage t does not read it): score = (its cost + the cost of its parents that are not kept) /
(its bytes x the stages until its next use), so cheap, large values needed late go first. An evicted value
is recomputed where it is next needed. Each eviction only lowers the peaks of stages t-1 and t (a value
freed earlier), and stages before t-1 do not depend on S[t+1], so the pass never revisits a stage.

Stage t is evaluated with ``StageState`` rows (passes/stagesearch.py), O(units + edges) each; the whole pass
is O(n (n + m)) plus the evictions. The result is handed to the stage search's ``improve``, which keeps
values resident instead of recomputing them where that fits.
"""
from __future__ import annotations

import time

import numpy as np

from ..ir.dag import DAG
from ..ir.schedule import checkpoint_all
from .stagesearch import StageState


def evict_schedule(dag: DAG, budget: int, *, deadline: float | None = None) -> StageState | None:
    """The eviction pass's schedule as a StageState (every stage within ``budget``), or None when some
    stage cannot fit even with every evictable value gone, or when ``deadline`` (a ``time.perf_counter()``
    value) passes first."""
    n = dag.n
    st = StageState(dag, budget, checkpoint_all(dag).S)  # rows are overwritten stage by stage
    S = st.S
    S[:] = False
    need = dag.last_use.copy()
    """need[u]: the last stage that reads u, counting stages that recompute an evicted child of u."""
    pending: dict[int, list[int]] = {}
    """pending[u]: stages that will recompute an evicted child of u (u is read there too)."""
    evictable = ~dag.no_recompute
    for t in range(n):
        if deadline is not None and time.perf_counter() >= deadline:
            return None
        if t + 1 < n:
            keep = S[t] | st._row_r(t)
            keep[t + 1:] = False
            keep &= need > t
            S[t + 1] = keep
        if not st._set_row(t):
            return None
        while st.peak[t] > budget:
            v, at = _victim(dag, st, t, pending, evictable)
            if v < 0:
                return None
            S[t + 1, v] = False
            for p in dag.preds[v].tolist():  # v is recomputed at stage ``at``: its parents are read there
                pending.setdefault(p, []).append(at)
                need[p] = max(need[p], at)
            if S[t, v] and not _read_in_stage(dag, st, t, v):
                S[t, v] = False
                if t > 0 and not st._set_row(t - 1):
                    return None
            if not st._set_row(t):
                return None
        if t > 0 and st.peak[t - 1] > budget:  # cannot happen: evictions only free earlier
            return None
    return st


def _read_in_stage(dag: DAG, st: StageState, t: int, v: int) -> bool:
    users = dag.succs[v]
    return bool(len(users) and st.R[t, users].any())


def _victim(dag: DAG, st: StageState, t: int, pending: dict[int, list[int]],
            evictable: np.ndarray) -> tuple[int, int]:
    """(the kept value, other than t and t's parents, of lowest score; the stage that will read it next);
    (-1, -1) when none is left."""
    if t + 1 >= dag.n:
        return -1, -1
    cand = np.flatnonzero(st.S[t + 1] & evictable)
    cand = np.setdiff1d(cand[cand != t], dag.preds[t], assume_unique=True)
    if not len(cand):
        return -1, -1
    rc = _recompute_costs(dag, st.S[t + 1], t)
    nxt = np.array([_next_use(dag.succs[v], pending.get(v, ()), t) for v in cand.tolist()])
    h = rc[cand] / (np.maximum(dag.mem[cand], 1) * (nxt - t))
    k = int(np.argmin(h))
    return int(cand[k]), int(nxt[k])


def _next_use(users: np.ndarray, extra, t: int) -> int:
    """The first stage after t that reads a value (a user's frontier stage or a pending recomputation)."""
    nxt = users[users > t]
    first = int(nxt[0]) if len(nxt) else None
    later = [s for s in extra if s > t]
    if later:
        first = min(later) if first is None else min(first, min(later))
    return t + 1 if first is None else first


def _recompute_costs(dag: DAG, kept: np.ndarray, t: int) -> np.ndarray:
    """float[t+1]: for each unit u <= t, its cost plus, recursively, that of each parent not in ``kept``
    (shared ancestors counted once per path, capped): what recomputing u would cost, roughly."""
    rc = dag.cost[:t + 1].copy()
    cap = 1e6 * float(dag.cost.sum()) + 1.0
    preds = dag.preds
    for u in range(t + 1):
        p = preds[u]
        if len(p):
            p = p[~kept[p]]
            if len(p):
                rc[u] = min(rc[u] + float(rc[p].sum()), cap)
    return rc
