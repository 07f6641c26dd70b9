"""Chen et al. (2016) checkpointing — sqrt(n) and greedy — and their generalizations to DAGs (paper §6.1,
appendix B): on the linear forward graph itself (chen-*), on the articulation points of the forward graph
(ap-*), and on the forward graph linearized in topological order (lin-*).

Each selects checkpoints among candidate forward units; ``checkpoint_s`` turns the checkpoint set into S
with Chen's semantics, and R is the least recomputation for that S. Chen's candidates are the layer
boundaries of a linear network (``linear_chain``), which are its articulation points: chen-* and ap-* agree
wherever chen-* applies, and on a path graph (every unit a layer) all three give identical schedules.
"""
from __future__ import annotations

import time
import weakref
from dataclasses import dataclass
from math import isqrt

import numpy as np

from ...ir.dag import DAG
from ...ir.schedule import Schedule
from .common import (
    articulation_candidates,
    forward_units,
    forward_window_end,
    keep_until_last_use,
    late_backward_uses,
    require_linear,
    unit_names,
)
from .search import Candidate, cheapest, peak_lower_bound


def checkpoint_s(dag: DAG, checkpoints: np.ndarray) -> np.ndarray:
    """S for a checkpoint set (see ``checkpoint_plan``)."""
    return checkpoint_plan(dag, checkpoints)[0]


def checkpoint_plan(dag: DAG, checkpoints: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(S, recomputed) for a checkpoint set, with the semantics of Chen et al.'s memory-optimized gradient
    graph; ``recomputed`` marks the values the backward computes a second time.

    - Backward units stay resident from their computation to their last use.
    - Forward pass: every forward value lives from its computation until its last forward use (it is
      freed as soon as the forward no longer needs it); checkpoints (and no-recompute units) are kept on.
    - Backward pass: a dropped value is recomputed once, in the first stage that needs it again — by a
      backward unit, or as an input of another value being recomputed — and stays resident until its
      last such need. A checkpoint stays until its last need of either kind.

    On a linear forward graph with its mirrored backward this is Chen's schedule exactly: when the
    backward reaches a segment (the layers between two checkpoints), the whole segment is recomputed
    from its checkpoint in one stage and each value is kept until its gradient has used it; every
    non-checkpoint value the backward needs is computed exactly twice (one extra forward pass, the
    last segment included). On a DAG, a value a later segment's recomputation needs (a skip edge over
    a checkpoint) is recomputed once, at that first need, and kept, never once per need.
    """
    base = _uses(dag)
    S = base.S.copy()
    kept = dag.no_recompute.tolist()
    for c in np.asarray(checkpoints, dtype=np.int64).tolist():
        kept[c] = True
    first_need = [-1] * dag.n                               # stage a dropped value is recomputed in
    for v in base.fwd_reversed:
        end, lo, hi = base.end[v], base.late_first[v], base.late_last[v]
        for w in base.fwd_users[v]:
            f = first_need[w]
            if f > end:
                lo, hi = min(lo, f), max(hi, f)
        if kept[v]:
            if hi > end:
                S[end + 1:hi + 1, v] = True
        elif hi > end:
            first_need[v] = lo
            S[lo + 1:hi + 1, v] = True
    return S, np.array(first_need) >= 0


@dataclass(frozen=True)
class _Uses:
    """What ``checkpoint_plan`` needs of a DAG whatever the checkpoints: S with every backward unit kept to
    its last use and every forward value through its forward window, and per forward unit its window's
    end, its first and last later backward use (n and -1 when none) and its forward users."""

    S: np.ndarray
    fwd_reversed: list[int]
    end: list[int]
    late_first: list[int]
    late_last: list[int]
    fwd_users: list[list[int]]


_USES: weakref.WeakKeyDictionary[DAG, _Uses] = weakref.WeakKeyDictionary()


def _uses(dag: DAG) -> _Uses:
    if dag not in _USES:
        n = dag.n
        S = np.zeros((n, n), dtype=bool)
        keep_until_last_use(dag, S, np.flatnonzero(dag.backward))
        fwd = forward_units(dag)
        last_fwd = int(fwd[-1]) if len(fwd) else -1
        users: list[list[int]] = [[] for _ in range(n)]
        end, first, last = list(range(n)), [n] * n, [-1] * n
        for v in fwd.tolist():
            end[v] = forward_window_end(dag, v, last_fwd)
            S[v + 1:end[v] + 1, v] = True
            late = late_backward_uses(dag, v, end[v])
            if len(late):
                first[v], last[v] = int(late[0]), int(late[-1])
            succ = dag.succs[v]
            users[v] = succ[~dag.backward[succ]].tolist()
        _USES[dag] = _Uses(S, fwd[::-1].tolist(), end, first, last, users)
    return _USES[dag]


def sqrtn_select(candidates: np.ndarray) -> np.ndarray:
    """Every floor(sqrt(n))-th of the n candidates (the k-th, 2k-th, ...), as Chen et al. and Checkmate."""
    n = len(candidates)
    if n == 0:
        return np.asarray(candidates, dtype=np.int64)
    k = max(1, isqrt(n))
    return np.asarray(candidates, dtype=np.int64)[k - 1::k]


def greedy_select(dag: DAG, candidates: np.ndarray, b: float) -> tuple[np.ndarray, list[int]]:
    """Chen et al.'s greedy (their Algorithm 3): walk the forward units in topological order summing
    their memory; a candidate where the running sum exceeds ``b`` becomes a checkpoint and resets the sum.

    Returns the checkpoints and the running sum at each of them.
    """
    is_cand = np.zeros(dag.n, dtype=bool)
    is_cand[np.asarray(candidates, dtype=np.int64)] = True
    mem = dag.mem.tolist()
    temp, chosen, sums = 0, [], []
    for v in forward_units(dag).tolist():
        temp += mem[v]
        if is_cand[v] and temp > b:
            chosen.append(v)
            sums.append(temp)
            temp = 0
    return np.array(chosen, dtype=np.int64), sums


def greedy_sets(dag: DAG, candidates: np.ndarray, deadline: float | None = None) -> list[tuple[int, np.ndarray]]:
    """(b, checkpoints) for every distinct checkpoint set the greedy can produce, b increasing.

    The greedy's choice is constant for b in [b_i, b_{i+1}) where b_{i+1} is the least running sum at
    which it checkpointed under b_i; the walk starts at b = -1 (every candidate) and ends with no
    checkpoint at all, or at ``deadline`` (a ``time.perf_counter()`` value: the sets walked by then).
    """
    b: int = -1
    sets: list[tuple[int, np.ndarray]] = []
    while True:
        if deadline is not None and sets and time.perf_counter() >= deadline:
            return sets
        chosen, sums = greedy_select(dag, candidates, b)
        sets.append((b, chosen))
        if len(chosen) == 0:
            return sets
        b = min(sums)


def checkpoint_candidate(dag: DAG, checkpoints: np.ndarray, strategy: str, **report) -> Candidate:
    """A checkpoint set as a search candidate. Its cost bound, the total plus each value
    ``checkpoint_plan`` recomputes once, is what any R for its S must do (and what R does)."""
    S, again = checkpoint_plan(dag, checkpoints)
    return Candidate(strategy, lambda: checkpoint_s(dag, checkpoints), dag.total_cost + float(dag.cost[again].sum()),
                     peak_lower_bound(dag, S), {"checkpoints": unit_names(dag, checkpoints),
                                                "n_checkpoints": len(checkpoints), **report})


def sqrtn_schedule(dag: DAG, candidates: np.ndarray, strategy: str) -> Schedule:
    """Chen's sqrt(n) heuristic over ``candidates``."""
    k = max(1, isqrt(len(candidates)))
    return checkpoint_candidate(dag, sqrtn_select(candidates), strategy, n_candidates=len(candidates),
                                segment_size=k).evaluate(dag)


def greedy_family(dag: DAG, candidates: np.ndarray, strategy: str, max_points: int | None = None,
                  deadline: float | None = None) -> list[Candidate]:
    """One candidate per distinct checkpoint set over the knob b (at most ``max_points``, evenly spaced
    along the knob with both ends kept, when given; those walked by ``deadline``)."""
    sets = greedy_sets(dag, candidates, deadline)
    if max_points is not None and len(sets) > max_points:
        pick = np.unique(np.round(np.linspace(0, len(sets) - 1, max(2, max_points))).astype(int))
        sets = [sets[i] for i in pick]
    return [checkpoint_candidate(dag, chosen, strategy, n_candidates=len(candidates), b=b) for b, chosen in sets]


def _greedy(dag: DAG, budget: int | None, candidates: np.ndarray, strategy: str, b: float | None,
            max_points: int | None, deadline: float | None = None, explain: bool = True) -> Schedule:
    if b is not None:
        return checkpoint_candidate(dag, greedy_select(dag, candidates, b)[0], strategy,
                                    n_candidates=len(candidates), b=b).evaluate(dag)
    return cheapest(dag, greedy_family(dag, candidates, strategy, max_points, deadline), budget, strategy,
                    deadline=deadline, explain=explain)


def chen_sqrtn(dag: DAG, budget: int | None = None) -> Schedule:
    """Chen et al. sqrt(n) over the layers of a linear forward graph (RemcError otherwise; see
    ``linear_chain``). No knob: ``budget`` is unused."""
    return sqrtn_schedule(dag, require_linear(dag, "chen-sqrtn"), "chen-sqrtn")


def ap_sqrtn(dag: DAG, budget: int | None = None) -> Schedule:
    """Chen et al. sqrt(n) over the articulation points of the forward graph. ``budget`` is unused."""
    return sqrtn_schedule(dag, articulation_candidates(dag), "ap-sqrtn")


def lin_sqrtn(dag: DAG, budget: int | None = None) -> Schedule:
    """Chen et al. sqrt(n) over every forward unit in topological order. ``budget`` is unused."""
    return sqrtn_schedule(dag, forward_units(dag), "lin-sqrtn")


def chen_greedy(dag: DAG, budget: int | None = None, *, b: float | None = None,
                max_points: int | None = None, deadline: float | None = None,
              explain: bool = True) -> Schedule:
    """Chen et al. greedy over the layers of a linear forward graph (RemcError otherwise).

    With ``b`` (segment budget, bytes) that one schedule; else the cheapest over every distinct b (or
    ``max_points`` of them) whose peak fits ``budget``, InfeasibleError when none does (``deadline``,
    ``explain``: as ``search.cheapest``).
    """
    return _greedy(dag, budget, require_linear(dag, "chen-greedy"), "chen-greedy", b, max_points, deadline, explain)


def ap_greedy(dag: DAG, budget: int | None = None, *, b: float | None = None,
              max_points: int | None = None, deadline: float | None = None,
              explain: bool = True) -> Schedule:
    """Chen et al. greedy over the articulation points of the forward graph; knob as ``chen_greedy``."""
    return _greedy(dag, budget, articulation_candidates(dag), "ap-greedy", b, max_points, deadline, explain)


def lin_greedy(dag: DAG, budget: int | None = None, *, b: float | None = None,
               max_points: int | None = None, deadline: float | None = None,
              explain: bool = True) -> Schedule:
    """Chen et al. greedy over every forward unit in topological order; knob as ``chen_greedy``."""
    return _greedy(dag, budget, forward_units(dag), "lin-greedy", b, max_points, deadline, explain)
