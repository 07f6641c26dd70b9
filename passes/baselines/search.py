"""Searching a baseline's knob without evaluating every schedule in full.

A knob (greedy's segment budget, griewank's slots) yields a family of checkpoint matrices. Each is a
``Candidate`` carrying cheap bounds: a lower bound on its cost and a lower bound on its peak (the
constant plus the bytes S keeps resident at the start of the worst stage; the first unit a stage runs
sees all of them). Searches evaluate candidates in bound order and stop once no unevaluated candidate
can win, so the answer is exactly the one a full sweep would give.
"""
from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from ...ir.dag import DAG
from ...ir.errors import InfeasibleError
from ...ir.schedule import Schedule, pin_no_recompute
from .common import finish


@dataclass
class Candidate:
    """One setting of a strategy's knob, not yet solved for R."""

    strategy: str
    build: Callable[[], np.ndarray]
    """Rebuilds S (kept lazy: a family can hold hundreds of n x n matrices)."""
    cost: float | Callable[[], float]
    """A lower bound on the schedule's cost (exact for the Chen family), or a function computing it once
    asked (``cost_bound``)."""
    peak_bound: int
    """A lower bound on the schedule's peak."""
    report: dict = field(default_factory=dict)

    @property
    def cost_bound(self) -> float:
        if callable(self.cost):
            self.cost = float(self.cost())
        return self.cost

    def evaluate(self, dag: DAG) -> Schedule:
        return finish(dag, self.build(), self.strategy, dict(self.report))


def peak_lower_bound(dag: DAG, S: np.ndarray) -> int:
    """constant + max over stages of the bytes S holds at the stage's start (no-recompute units pinned), with
    the kept outputs of the units before it."""
    held = pin_no_recompute(dag, S).astype(np.int64) @ dag.mem + dag.kept_before
    return int(dag.constant + held.max(initial=0))


def cheapest(dag: DAG, family: Sequence[Candidate], budget: int | None, strategy: str, *,
             deadline: float | None = None, explain: bool = True) -> Schedule:
    """The least-cost schedule of ``family`` whose peak fits ``budget`` (any peak when None); among equal
    costs the lower peak. InfeasibleError carries the least peak the family reaches when none fits; the least
    peak bound instead where ``deadline``, a ``time.perf_counter()`` value, has passed (no more schedules are
    evaluated after it, the first one always) or without ``explain`` (finding the least peak evaluates the
    family's schedules again: seconds at thousands of units, for a caller that only wants a fitting one)."""
    best: Schedule | None = None
    evaluated = 0
    viable = [c for c in family if budget is None or c.peak_bound <= budget]
    for c in sorted(viable, key=lambda c: (c.cost_bound, c.peak_bound)):
        if evaluated and deadline is not None and time.perf_counter() >= deadline:
            break
        if best is not None:
            if c.cost_bound > best.report["cost"]:
                break                                   # sorted: nothing left can be cheaper
            if c.cost_bound == best.report["cost"] and c.peak_bound >= best.report["peak"]:
                continue                                # at best as cheap, not lower
        s = c.evaluate(dag)
        evaluated += 1
        if budget is not None and s.report["peak"] > budget:
            continue
        if best is None or (s.report["cost"], s.report["peak"]) < (best.report["cost"], best.report["peak"]):
            best = s
    if best is None:
        if not explain or (deadline is not None and time.perf_counter() >= deadline):
            least = min(c.peak_bound for c in family)
            raise InfeasibleError(f"{strategy}: none of the {len(family)} schedules it tried fits the budget of "
                                  f"{budget} bytes; none of them can peak below {least} bytes", least)
        least = least_peak(dag, family)[0].report["peak"]
        raise InfeasibleError(f"{strategy}: none of its {len(family)} schedules fits the budget of {budget} "
                              f"bytes; the least peak it reaches is {least} bytes", least)
    best.report.update(candidates=len(family), candidates_evaluated=evaluated)
    return best


def least_peak(dag: DAG, family: Sequence[Candidate], cost_limit: float | None = None,
               slack: float = 0.0) -> list[Schedule]:
    """The schedules of ``family`` costing at most ``cost_limit`` whose peak is within ``slack`` bytes of
    the least such peak, by (peak, cost): the first has the least peak. InfeasibleError when none is
    cheap enough."""
    found: list[Schedule] = []
    least = None
    for c in sorted(family, key=lambda c: c.peak_bound):
        if least is not None and c.peak_bound > least + slack:
            break
        if cost_limit is not None and c.cost_bound > cost_limit:
            continue
        s = c.evaluate(dag)
        if cost_limit is not None and s.report["cost"] > cost_limit:
            continue
        found.append(s)
        least = s.report["peak"] if least is None else min(least, s.report["peak"])
    if least is None:
        name = family[0].strategy if family else "strategy"
        raise InfeasibleError(f"{name}: none of its {len(family)} schedules costs at most {cost_limit:.6g}")
    found = [s for s in found if s.report["peak"] <= least + slack]
    return sorted(found, key=lambda s: (s.report["peak"], s.report["cost"]))
