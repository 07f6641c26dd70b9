"""Griewank & Walther's binomial checkpointing (REVOLVE, 2000) on a linear forward graph.

The reversal of a chain x_0 -> x_1 -> ... (x_0 the graph input, always resident) needs the states in
decreasing order. With ``slots`` snapshot slots besides the input and the current state, Griewank and
Walther's recursive binomial split minimizes the number of forward steps; the schedule is computed here
(no table) and expressed as S: which forward values stay resident across stages. R then follows from S.

Conventions: ``forward_steps(l, s)`` is Griewank & Walther's t(l, s) for l reverse steps and s snapshots
where s counts the snapshot of x_0; since the graph input costs no slot here, ``slots`` = s - 1.
"""
from __future__ import annotations

from math import comb

import numpy as np

from ...ir.dag import DAG
from ...ir.schedule import Schedule
from .common import (finish, forward_window_end, keep_until_last_use, late_backward_uses, require_linear,
                     solve_r_keeping_no_recompute, unit_names)
from .search import Candidate, cheapest, peak_lower_bound


def beta(snaps: int, reps: int) -> int:
    """beta(s, r) = C(s + r, s): the longest chain s snapshots reverse with r repetitions (0 when r < 0)."""
    return comb(snaps + reps, snaps) if reps >= 0 else 0


def repetition_number(steps: int, snaps: int) -> int:
    """The least r with beta(snaps, r) >= steps."""
    r = 0
    while beta(snaps, r) < steps:
        r += 1
    return r


def forward_steps(steps: int, snaps: int) -> int:
    """Griewank & Walther's minimal number of forward steps to reverse ``steps`` steps with ``snaps``
    >= 1 snapshots: t(l, s) = r l - beta(s + 1, r - 1), r = repetition_number(l, s). It counts the first
    sweep x_0 -> x_{l-1} and every repeated step, not the forward part of each reverse step."""
    if snaps < 1:
        raise ValueError("binomial checkpointing needs at least one snapshot (the initial state's)")
    r = repetition_number(steps, snaps)
    return r * steps - beta(snaps + 1, r - 1)


def advances(steps: int, slots: int) -> int:
    """Forward steps to reverse ``steps`` steps from a free initial state with ``slots`` snapshot slots."""
    return forward_steps(steps, slots + 1)


def best_split(steps: int, slots: int) -> int:
    """The least optimal first snapshot position m in 1..steps-1 (the cost m + advances(steps - m,
    slots - 1) + advances(m, slots) is convex in m, so a binary search on its slope finds it)."""
    def cost(m: int) -> int:
        return m + advances(steps - m, slots - 1) + advances(m, slots)
    lo, hi = 1, steps - 1
    while lo < hi:
        mid = (lo + hi) // 2
        if cost(mid + 1) >= cost(mid):
            hi = mid
        else:
            lo = mid + 1
    return lo


def binomial_plan(steps: int, slots: int) -> list[tuple[int, int]]:
    """The snapshots of the optimal binomial reversal as (position, top) pairs.

    Reversing states top-1 .. position from a snapshot at ``position`` (x_position stays in its slot
    until state x_position itself has been used). Snapshots with top == steps are taken in the first
    forward sweep; the others while advancing for the reverse step that needs state top-1.
    """
    plan: list[tuple[int, int]] = []
    stack = [(0, steps, slots)]
    while stack:
        base, top, s = stack.pop()
        while top - base > 1 and s > 0:
            m = base + best_split(top - base, s)
            plan.append((m, top))
            stack.append((m, top, s - 1))
            top = m
    return plan


def _reversal(dag: DAG, chain: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Base S (backward units kept to their last use; forward values through their forward use and, once
    needed by the backward, from then to their last backward use) and, per chain position 1..L, the first
    and last stage the backward needs that state in (a, z; inf and -1 when never)."""
    n, length = dag.n, len(chain)
    S = np.zeros((n, n), dtype=bool)
    keep_until_last_use(dag, S, np.flatnonzero(dag.backward))
    first = np.full(length + 1, np.iinfo(np.int64).max, dtype=np.int64)
    last = np.full(length + 1, -1, dtype=np.int64)
    for p, u in enumerate(chain.tolist(), start=1):
        end = forward_window_end(dag, u, int(chain[-1]))
        S[u + 1:end + 1, u] = True
        late = late_backward_uses(dag, u, end)
        if len(late):
            first[p], last[p] = late[0], late[-1]
            start = end if first[p] == end + 1 else first[p]    # the current state carries straight over
            S[start + 1:last[p] + 1, u] = True
    return S, first, last


def griewank_s(dag: DAG, chain: np.ndarray, slots: int,
               reversal: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None) -> tuple[np.ndarray, dict]:
    """S of the binomial schedule of a linear forward graph with ``slots`` snapshot slots, and a report.

    Each snapshot stays resident from the stage that computes it (its forward stage when it is taken in
    the first sweep) until the last stage that needs a state of the range it is the base of.
    """
    S, first, last = reversal if reversal is not None else _reversal(dag, chain)
    S = S.copy()
    needed = np.flatnonzero(last >= 0)
    steps = int(needed[-1]) + 1 if len(needed) else 1
    snapshots = []
    for pos, top in binomial_plan(steps, slots):
        release = int(last[pos:top].max())
        if release < 0:
            continue
        u = int(chain[pos - 1])
        start = u if top == steps else int(first[pos:top].min())
        S[start + 1:release + 1, u] = True
        snapshots.append(u)
    used = min(slots, max(0, steps - 2))
    return S, {"slots": slots, "steps": steps, "snapshots": unit_names(dag, sorted(snapshots)),
               "predicted_forward_steps": advances(steps, used)}


def griewank_family(dag: DAG, max_slots: int | None = None) -> list[Candidate]:
    """One candidate per useful number of slots, 0 .. steps - 2 (or ``max_slots``); more never help."""
    chain = require_linear(dag, "griewank")
    rev = _reversal(dag, chain)
    needed = np.flatnonzero(rev[2] >= 0)
    top = max(0, (int(needed[-1]) + 1 if len(needed) else 1) - 2)
    family = []
    for slots in range(0, (top if max_slots is None else min(top, max_slots)) + 1):
        S, report = griewank_s(dag, chain, slots, rev)
        build = (lambda k: lambda: griewank_s(dag, chain, k, rev)[0])(slots)
        family.append(Candidate("griewank", build, lambda b=build: _cost(dag, b()), peak_lower_bound(dag, S),
                                report))
    return family


def _cost(dag: DAG, S: np.ndarray) -> float:
    return float(solve_r_keeping_no_recompute(dag, S)[0].sum(axis=0) @ dag.cost)


def griewank(dag: DAG, budget: int | None = None, *, slots: int | None = None,
             max_slots: int | None = None) -> Schedule:
    """Griewank & Walther log(n) on a linear forward graph (RemcError otherwise).

    With ``slots`` that schedule; else the cheapest over every slot count whose peak fits ``budget``,
    InfeasibleError (with the least peak reached) when none does.
    """
    if slots is not None:
        if slots < 0:
            raise ValueError(f"griewank needs slots >= 0, got {slots}")
        S, report = griewank_s(dag, require_linear(dag, "griewank"), slots)
        return finish(dag, S, "griewank", report)
    return cheapest(dag, griewank_family(dag, max_slots), budget, "griewank")
