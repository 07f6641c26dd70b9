"""Griewank & Walther's binomial checkpointing (REVOLVE, 2000) on a linear forward graph.

The states x_1, x_2, ... are the outputs of the layer boundaries (``linear_chain``; every forward unit of
a path graph), x_0 the graph input, always resident. The reversal needs them in decreasing order. With
``slots`` snapshot slots besides the input and the current state, Griewank and Walther's recursive
binomial split minimizes the number of forward steps; the schedule is computed here (no table) and
expressed as S: which forward values stay resident across stages. R then follows from S.

Conventions: ``forward_steps(l, s)`` is Griewank & Walther's t(l, s) for l reverse steps and s snapshots
where s counts the snapshot of x_0; since the graph input costs no slot here, ``slots`` = s - 1. On a path
graph whose gradients each need one state (their layer's input, or output), the recomputations are
exactly t(l, slots + 1) - (l - 1), l the number of reverse steps (tested).
"""
from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from math import comb

import numpy as np

from ...ir.dag import DAG
from ...ir.schedule import Schedule, solve_rs
from .common import (
    finish,
    forward_units,
    forward_window_end,
    keep_until_last_use,
    late_backward_uses,
    require_linear,
    unit_names,
)
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


@dataclass(frozen=True)
class Base:
    """A state the binomial reversal advances from: the graph input (position 0) or a snapshot."""

    pos: int
    top: int
    """It is the base of the states pos .. top - 1."""
    children: list[tuple[int, int]]
    """The snapshots (position, top) advanced from it, in the order they are taken."""
    rest: int
    """After them it serves the states pos + 1 .. rest - 1, advancing from it to each when needed."""


def binomial_bases(steps: int, slots: int) -> list[Base]:
    """The optimal binomial reversal of ``steps`` steps with ``slots`` slots: the input and the snapshots.

    A base with s free slots and range [b, e) takes a snapshot at b + best_split(e - b, s) (the base of
    its upper part with s - 1 slots) and goes on with the lower part, until one step is left or no slot.
    Snapshots with top == steps are taken in the first forward sweep; the others while advancing for the
    first reverse step of their range.
    """
    bases: list[Base] = []
    stack = [(0, steps, slots)]
    while stack:
        b, top, s = stack.pop()
        e, children = top, []
        while e - b > 1 and s > 0:
            m = b + best_split(e - b, s)
            children.append((m, e))
            stack.append((m, e, s - 1))
            e = m
        bases.append(Base(b, top, children, e))
    return bases


def binomial_plan(steps: int, slots: int) -> list[tuple[int, int]]:
    """The snapshots of the optimal binomial reversal as (position, top) pairs (see ``binomial_bases``)."""
    return [(b.pos, b.top) for b in binomial_bases(steps, slots) if b.pos > 0]


@dataclass(frozen=True)
class Reversal:
    """What every slot count shares: the states and when the backward needs them.

    State x_p (p = 1..K) is the output of layer boundary p (``linear_chain``; every unit of a path graph),
    x_0 the graph input. ``layers[p]`` is boundary p and the units after it up to the next boundary, which
    are recomputed from x_p. The backward needs x_p from ``first[p]`` to ``last[p]``: the first and last
    stage using one of ``layers[p]`` after its forward uses (int64 max and -1 when never). ``S`` keeps
    backward units to their last use, every forward value through its forward uses, and every value the
    backward needs from the stage it is (re)computed for that need to the last one, carried straight over
    from the forward pass when that need comes right after it (the current state).
    """

    S: np.ndarray
    layers: list[list[int]]
    first: np.ndarray
    last: np.ndarray
    unit_last: dict[int, int]
    """Per forward unit, the last stage the backward needs it in (absent when never)."""

    @property
    def steps(self) -> int:
        """Reverse steps: one more than the highest layer the backward needs."""
        needed = np.flatnonzero(self.last >= 0)
        return int(needed[-1]) + 1 if len(needed) else 1


def reversal(dag: DAG, chain: np.ndarray) -> Reversal:
    """The ``Reversal`` of a linear forward graph with layer boundaries ``chain``."""
    n, fwd = dag.n, forward_units(dag)
    S = np.zeros((n, n), dtype=bool)
    keep_until_last_use(dag, S, np.flatnonzero(dag.backward))
    first = np.full(len(chain) + 1, np.iinfo(np.int64).max, dtype=np.int64)
    last = np.full(len(chain) + 1, -1, dtype=np.int64)
    layers: list[list[int]] = [[] for _ in range(len(chain) + 1)]
    unit_last: dict[int, int] = {}
    for u, p in zip(fwd.tolist(), np.searchsorted(chain, fwd, side="right").tolist()):
        layers[p].append(u)
        end = forward_window_end(dag, u, int(fwd[-1]))
        S[u + 1:end + 1, u] = True
        late = late_backward_uses(dag, u, end)
        if len(late):
            first[p], last[p] = min(first[p], late[0]), max(last[p], late[-1])
            start = end if late[0] == end + 1 else int(late[0])
            S[start + 1:late[-1] + 1, u] = True
            unit_last[u] = int(late[-1])
    return Reversal(S, layers, first, last, unit_last)


def griewank_s(dag: DAG, chain: np.ndarray, slots: int, rev: Reversal | None = None) -> tuple[np.ndarray, dict]:
    """S of the binomial schedule of a linear forward graph with ``slots`` snapshot slots, and a report.

    A snapshot of x_p is kept from the stage that computes it (its forward stage when it is taken in the
    first sweep) until the last stage that needs it: its own backward uses, the states it is advanced to
    directly, and the stages that take the snapshots advanced from it. The units computed from it before
    the next boundary (none on a path graph) are kept with it until their own last backward need.
    """
    rev = rev if rev is not None else reversal(dag, chain)
    S = rev.S.copy()
    steps = rev.steps
    snapshots = []
    for base in binomial_bases(steps, slots):
        if base.pos == 0:
            continue
        boundary = int(chain[base.pos - 1])
        until = {u: rev.unit_last.get(u, -1) for u in rev.layers[base.pos]}
        until[boundary] = max([until[boundary], int(rev.last[base.pos + 1:base.rest].max(initial=-1))]
                              + [_creation(rev, m, top) for m, top in base.children if top != steps])
        if max(until.values()) < 0:
            continue                                # nothing in its range is ever needed again
        start = None if base.top == steps else _creation(rev, base.pos, base.top)
        for u, last in until.items():
            S[(u if start is None else max(u, start)) + 1:last + 1, u] = True
        snapshots.append(boundary)
    used = min(slots, max(0, steps - 2))
    return S, {"slots": slots, "steps": steps, "snapshots": unit_names(dag, sorted(snapshots)),
               "predicted_forward_steps": advances(steps, used)}


def _creation(rev: Reversal, pos: int, top: int) -> int:
    """The stage that takes a snapshot at ``pos`` outside the first sweep: the first need of its range
    (-1 when nothing in it is needed)."""
    first = int(rev.first[pos:top].min())
    return first if first < np.iinfo(np.int64).max else -1


def griewank_family(dag: DAG, max_slots: int | None = None) -> list[Candidate]:
    """One candidate per useful number of slots, 0 .. steps - 2 (or ``max_slots``); more never help."""
    chain = require_linear(dag, "griewank")
    rev = reversal(dag, chain)
    top = max(0, rev.steps - 2)
    family = []
    for slots in range(0, (top if max_slots is None else min(top, max_slots)) + 1):
        S, report = griewank_s(dag, chain, slots, rev)
        build = functools.partial(_griewank_schedule, dag, chain, slots, rev)
        family.append(Candidate("griewank", build, functools.partial(_built_cost, dag, build),
                                peak_lower_bound(dag, S), report))
    return family


def _cost(dag: DAG, S: np.ndarray) -> float:
    """The exact cost of the least R for S."""
    return float(solve_rs(dag, S)[0].sum(axis=0) @ dag.cost)


def griewank(dag: DAG, budget: int | None = None, *, slots: int | None = None,
             max_slots: int | None = None, explain: bool = True) -> Schedule:
    """Griewank & Walther log(n) on a linear forward graph (RemcError otherwise; see ``linear_chain``).

    With ``slots`` that schedule; else the cheapest over every slot count whose peak fits ``budget``,
    InfeasibleError (with the least peak reached) when none does.
    """
    if slots is not None:
        if slots < 0:
            raise ValueError(f"griewank needs slots >= 0, got {slots}")
        S, report = griewank_s(dag, require_linear(dag, "griewank"), slots)
        return finish(dag, S, "griewank", report)
    return cheapest(dag, griewank_family(dag, max_slots), budget, "griewank", explain=explain)


def _griewank_schedule(dag: DAG, chain: np.ndarray, slots: int, rev: Reversal) -> np.ndarray:
    return griewank_s(dag, chain, slots, rev)[0]


def _built_cost(dag: DAG, build: Callable[[], np.ndarray]) -> float:
    return _cost(dag, build())
