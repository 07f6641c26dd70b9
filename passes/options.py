"""Typed options of the solver strategies, validated where they are made (the CLI builds them once)."""
from __future__ import annotations

import math
from dataclasses import dataclass

from ..ir.errors import RemcError

EPS_LIST = (0.0, 0.05, 0.1, 0.2, 0.3, 0.5)
"""Budget allowances tried by approx's eps search."""
ROUNDINGS = ("deterministic", "randomized", "both")
REFINE_SECONDS = 30.0
"""Default time for approx's local search after rounding (within its time limit when that is smaller)."""
FEASIBLE_SHARE = 0.4
"""Share of the time left that approx keeps for its exact feasibility phase (passes/feasible.py) when no
schedule fits at its start (no baseline, no warm start) and its stage search finds none either."""
STAGE_SEARCH_SHARE = 0.6
"""Share of the time limit approx's stage search may use before the LP (all of it when no LP is built). (This
and FEASIBLE_SHARE live here, re-exported by passes/approx.py, so that checkmate reads them without importing
approx and what it imports: 0.03-0.06 s of a VGG19 solve's process under load, results/pub14.)"""
MIP_SOLVERS = ("highs", "gurobi")
OPTIMIZERS = ("sgd", "adamw")
"""Optimizers the optimizer pass appends (passes/optimizer.py; here so that the CLI's parser need not import it)."""


def check_time_limit(value: float | None, what: str = "time limit") -> None:
    """RemcError unless ``value`` is None or a finite number of seconds > 0."""
    if value is not None and not (isinstance(value, (int, float)) and math.isfinite(value) and value > 0):
        raise RemcError(f"the {what} must be a finite number of seconds > 0, got {value!r}")


def check_threads(value: int | None) -> None:
    if value is not None and not (isinstance(value, int) and value >= 1):
        raise RemcError(f"threads must be an integer >= 1, got {value!r}")


@dataclass(frozen=True)
class CheckmateOptions:
    """Options of the ``checkmate`` strategy (passes/milp.py)."""

    time_limit: float | None = None
    """Wall-clock seconds for the whole strategy: baselines, approx, CP-SAT, local search, MILP (None: no
    limit)."""
    threads: int | None = None
    gap: float = 1e-4
    """Relative gap at which the MILP stops, measured on the recomputation overhead (cost minus computing
    every unit once); a schedule is called optimal when its proven gap is within it."""
    solver: str = "highs"
    """The MILP backend: highs or gurobi."""
    free_form: str = "tight"
    memory_form: str = "auto"
    warm_start: bool = True
    """Run approx's stage search and LP rounding (the rounding before CP-SAT where no baseline fits, else
    after it when CP-SAT did not prove the schedule) and its local search after CP-SAT, before the MILP."""
    approx_share: float = 0.3
    """Share of ``time_limit`` that approx's rounding (and its repair, when nothing fits) may use inside
    checkmate."""
    cpsat_share: float = 0.7
    """Share of the time left after the baselines that checkmate's CP-SAT phase may use (with OR-Tools
    installed, on graphs of at most backends.cpsat.CP_UNITS units); 0 turns it off."""
    window: bool = True
    """Where the whole MILP is too large to build, solve it on windows of stages from the best schedule
    with the time left (passes/window.py)."""

    def __post_init__(self) -> None:
        check_time_limit(self.time_limit)
        check_threads(self.threads)
        if not (isinstance(self.gap, (int, float)) and 0 <= self.gap < 1):
            raise RemcError(f"the gap must be a number in [0, 1), got {self.gap!r}")
        if self.solver not in MIP_SOLVERS:
            raise RemcError(f"unknown MILP solver {self.solver!r}; choose one of {', '.join(MIP_SOLVERS)}")
        if self.free_form not in ("paper", "tight"):
            raise RemcError(f"free_form must be 'paper' or 'tight', got {self.free_form!r}")
        if self.memory_form not in ("auto", "dense", "recurrence"):
            raise RemcError(f"memory_form must be 'auto', 'dense' or 'recurrence', got {self.memory_form!r}")
        if not 0 < self.approx_share <= 1:
            raise RemcError(f"approx_share must be in (0, 1], got {self.approx_share!r}")
        if not 0 <= self.cpsat_share <= 1:
            raise RemcError(f"cpsat_share must be in [0, 1], got {self.cpsat_share!r}")


@dataclass(frozen=True)
class ApproxOptions:
    """Options of the ``approx`` strategy (passes/approx.py: LP relaxation, two-phase rounding, local search)."""

    eps: float | None = 0.1
    """Budget allowance of the LP (the paper's 0.1); None searches ``eps_list``."""
    rounding: str = "both"
    samples: int = 50
    seed: int = 0
    thresholds: tuple[float, ...] | None = None
    eps_search: bool = False
    eps_list: tuple[float, ...] = EPS_LIST
    max_thresholds: int = 64
    time_limit: float | None = None
    """Wall-clock seconds for the whole strategy (None: no limit)."""
    threads: int | None = None
    free_form: str = "tight"
    refine: bool = True
    refine_seconds: float = REFINE_SECONDS
    refine_evals: int | None = None
    window: bool = True
    """Where no LP is built, the MILP on windows of stages from the stage search's schedule with the time
    left (passes/window.py)."""

    def __post_init__(self) -> None:
        check_time_limit(self.time_limit)
        check_threads(self.threads)
        if self.rounding not in ROUNDINGS:
            raise RemcError(f"rounding must be one of {', '.join(ROUNDINGS)}, got {self.rounding!r}")
        if self.eps is not None and not (isinstance(self.eps, (int, float)) and 0 <= self.eps < 1):
            raise RemcError(f"eps must be a number in [0, 1), got {self.eps!r}")
        if self.samples < 0 or self.max_thresholds < 1:
            raise RemcError("samples must be >= 0 and max_thresholds >= 1")
        check_time_limit(self.refine_seconds, "refine time")
        if self.free_form not in ("paper", "tight"):
            raise RemcError(f"free_form must be 'paper' or 'tight', got {self.free_form!r}")


@dataclass(frozen=True)
class BaselineOptions:
    """Options of the checkpointing baselines (passes/baselines)."""

    max_points: int | None = None
    """Greedy baselines: evaluate at most this many values of the segment budget."""
    max_slots: int | None = None
    """griewank: most checkpoint slots tried."""
    deadline: float | None = None
    """Greedy baselines: a ``time.perf_counter()`` value after which no more knob values are walked or evaluated
    (the schedules evaluated by then compete; a solver's baselines inside its time limit)."""
    explain: bool = True
    """Knob baselines: where no schedule of the family fits, find the least peak it reaches for the message
    (evaluates the family again); off where only a fitting schedule matters (``best_baseline``)."""


StrategyOptions = CheckmateOptions | ApproxOptions | BaselineOptions
