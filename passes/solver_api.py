"""What the solver passes need from an LP/MIP solver, as Protocols: the passes build models (eq. 9 as
matrices, passes/milp_model.py) and hand them to a backend they receive as an argument (HiGHS or Gurobi,
remc.backends), so no pass imports a solver."""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

import numpy as np

if TYPE_CHECKING:
    from .milp_model import CheckmateModel


@dataclass
class SolveResult:
    """What a solver run left: status, best column vector (or None), objective and bound in model units
    (``model.col_cost @ x``; the objective offset a backend passes to its solver is not included)."""

    status: str
    """"optimal", "time_limit", "infeasible", "interrupted", or another solver status in lower case."""
    x: np.ndarray | None
    objective: float
    bound: float
    seconds: float
    nodes: int = 0


@dataclass(frozen=True)
class ProgressEvent:
    """One progress report of a running strategy (cost units; None where not known yet)."""

    elapsed: float
    """Seconds since the strategy started."""
    phase: str = ""
    """What runs now: "baselines", "lp", "rounding", "refine", "milp", ..."""
    incumbent: float | None = None
    """Cost of the best schedule so far."""
    bound: float | None = None
    """Best proven lower bound so far."""
    gap: float | None = None


Progress = Callable[[ProgressEvent], None]
"""A progress callback; an exception raised in it stops the solve and propagates."""


class LpSession(Protocol):
    """The LP relaxation of one model, re-solvable at other budgets (bound changes on its budget rows)."""

    def solve(self, budget: int, *, time_limit: float | None = None) -> SolveResult: ...


class SolverBackend(Protocol):
    """An LP/MIP solver for Checkmate models (remc.backends.highs.HighsBackend, remc.backends.gurobi)."""

    name: str

    def solve(self, model: CheckmateModel, *, integral: bool, time_limit: float | None = None,
              threads: int | None = None, gap: float = 1e-4, start: np.ndarray | None = None,
              progress: Callable[[float, float, float], None] | None = None) -> SolveResult:
        """Solve the MILP (``integral``) or its LP relaxation. ``gap``: relative gap on the objective
        including ``model.offset`` (the recomputation overhead). ``progress(incumbent, bound, elapsed)`` in
        model units (offset excluded) while a MILP runs. A MILP with a time limit stops at it for
        certain, returning the best solution it had."""
        ...

    def lp_session(self, model: CheckmateModel, *, threads: int | None = None) -> LpSession: ...


class Clock:
    """A strategy's wall clock: started once, shared by every phase, so that ``time_limit`` covers all."""

    def __init__(self, time_limit: float | None) -> None:
        import time
        self._now = time.perf_counter
        self._cpu = time.process_time
        self.start = self._now()
        self.cpu_start = self._cpu()
        self.time_limit = time_limit
        self.late_baseline: tuple[str, float] | None = None
        """(name, cost) of the baseline taken after the limit had passed with no schedule in hand (the strategies'
        LATE_FIRST_FIT), for the report to say so; None if none was."""

    def elapsed(self) -> float:
        return self._now() - self.start

    def slowdown(self) -> float:
        """Wall seconds per second of this process's CPU since the clock started (at least 1, at most SLOWDOWN_CAP;
        1 before SLOWDOWN_MIN_SECONDS have passed): how much slower than on a free core this process runs now, measured,
        whatever the load average says (a run at nice 10 beside busy loops at nice 0 gets a tenth of what the load
        suggests). Where the work waits on another process (an LP's worker) it reads high: estimates made with it
        are cautious there."""
        wall = self._now() - self.start
        return 1.0 if wall < SLOWDOWN_MIN_SECONDS else measured_slowdown(wall, self._cpu() - self.cpu_start)

    def left(self) -> float | None:
        """Seconds left (None: no limit; never negative)."""
        return None if self.time_limit is None else max(self.time_limit - self.elapsed(), 0.0)

    def expired(self) -> bool:
        return self.time_limit is not None and self.elapsed() >= self.time_limit

    @property
    def deadline(self) -> float | None:
        """The ``time.perf_counter()`` value at which time runs out (None: no limit)."""
        return None if self.time_limit is None else self.start + self.time_limit


SLOWDOWN_MIN_SECONDS = 0.25
"""Wall seconds a ``Clock`` must have run before its ``slowdown`` is read from it (1 before: too short to say)."""
SLOWDOWN_CAP = 50.0
"""The largest slowdown reported (``Clock.slowdown``, ``timebudget.CompileClock.slowdown``)."""


def measured_slowdown(wall: float, cpu: float) -> float:
    """Wall seconds per CPU second, at least 1 and at most SLOWDOWN_CAP: how many times slower than on a free core
    the work of ``wall`` seconds that used ``cpu`` seconds of CPU ran."""
    return min(max(wall / max(cpu, 1e-6), 1.0), SLOWDOWN_CAP)


def slowdown(clock: Clock | None) -> float:
    """How many times slower than on a free core this process runs now: ``clock``'s measured ``slowdown`` where a
    clock is given and has run SLOWDOWN_MIN_SECONDS, else the load per core (``load_per_core``, which a process at
    another nice level than the load's sees wrongly either way)."""
    if clock is not None and clock.elapsed() >= SLOWDOWN_MIN_SECONDS:
        return clock.slowdown()
    return load_per_core()


def load_per_core() -> float:
    """The 1-minute load average per core this process may run on, at least 1: how many times slower than on idle
    cores an uninterruptible build (an LP, a CP-SAT model) runs, about, for estimates made before starting one."""
    import os
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    try:
        load = os.getloadavg()[0]
    except OSError:
        return 1.0
    return max(1.0, load / max(cores, 1))
