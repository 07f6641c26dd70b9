"""The strategy registry: strategy names wired to their functions and, for the solver strategies, to an
LP/MIP backend (HiGHS, or Gurobi for checkmate's MILP). The driver calls ``solve`` with typed options.

Every solver strategy is anytime under its time limit, which covers every phase: the clock starts here,
the baselines run first (quickest first, none started after the limit) and their best schedule is the
incumbent of approx and checkmate, so neither returns "no schedule" while a baseline fits.

Other strategies (e.g. a CP-SAT model) join with ``register``.
"""
from __future__ import annotations

import dataclasses
import importlib.util
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..ir.dag import DAG
from ..ir.errors import RemcError, SolverError
from ..ir.schedule import Schedule
from ..passes import approx as _approx
from ..passes import milp as _milp
from ..passes.bounds import bound_deadline, gap_bound, raise_bound
from ..passes.milp_model import least_budget_bound as _least_budget_bound
from ..passes.options import ApproxOptions, BaselineOptions, CheckmateOptions
from ..passes.solver_api import Clock, Progress, SolverBackend
from ..passes.stagesearch import repair_start
from ..passes.strategies import BASELINE_NAMES, best_baseline, solve_baseline_strategy
from .cpsat import CP_UNITS, CpSatOptions, cpsat_phase, cpsat_strategy
from .highs import HighsBackend

StrategyFn = Callable[[DAG, "int | None", Any, "Progress | None"], Schedule]
"""``fn(dag, budget, options, progress) -> Schedule``."""


@dataclass(frozen=True)
class Strategy:
    """A registered strategy: its function and the options dataclass it takes."""

    fn: StrategyFn
    options: type
    needs_budget: bool = False
    warm: bool = False
    """``fn`` takes ``start=`` (a schedule to repair and start from)."""


def backend(name: str) -> SolverBackend:
    """The solver backend called ``name`` ("highs" or "gurobi")."""
    if name == "highs":
        return HighsBackend()
    if name == "gurobi":
        from .gurobi import GurobiBackend
        if importlib.util.find_spec("gurobipy") is None:
            raise SolverError("gurobipy is not installed; pip install 'remc[gurobi]'")
        return GurobiBackend()
    raise RemcError(f"unknown solver backend {name!r}; choose highs or gurobi")


BASELINE_SHARE = 0.25
"""Share of the time limit after which the baselines evaluate only a few knob values each (they still all
run once): on large graphs the eviction pass and stage search (passes/evict.py) need the time more."""


def _baseline_deadline(clock: Clock) -> float | None:
    return None if clock.time_limit is None else clock.start + BASELINE_SHARE * clock.time_limit


WARM_SHARE = 0.7
"""Share of the time limit a warm start's repair (``start``: e.g. a previous fit round's schedule) may use."""


def _incumbent(dag: DAG, budget: int, clock: Clock, start: Schedule | None) -> Schedule | None:
    """``start`` repaired to fit (passes/stagesearch.py ``repair_start``, within WARM_SHARE of the limit), else
    the best baseline (a repaired schedule of a previous solve is far cheaper than any baseline: ResNet50
    fine at 0.995 of its peak +1.3%, the best baseline +14%, and the baselines take seconds there)."""
    if start is not None:
        at = None if clock.time_limit is None else clock.start + WARM_SHARE * clock.time_limit
        warm = repair_start(dag, budget, start.S, deadline=at)
        if warm is not None:
            return warm
    return best_baseline(dag, budget, deadline=_baseline_deadline(clock))


def _checkmate(dag: DAG, budget: int | None, o: CheckmateOptions, progress: Progress | None,
               start: Schedule | None = None) -> Schedule:
    """Baselines (and ``start`` repaired), then (OR-Tools installed, at most CP_UNITS units) CP-SAT's schedule
    and its bound valid for all schedules (``cpsat_phase``, ``cpsat_share`` of the time left), then the MILP
    from the best schedule, skipped when CP-SAT's bound already proves it within the gap."""
    assert budget is not None
    clock = Clock(o.time_limit)
    incumbent = _incumbent(dag, budget, clock, start)
    gb = gap_bound(dag, budget, iterations=2000, deadline=bound_deadline(clock)).bound  # passes/bounds.py
    bounds: dict[str, float] = {}
    note = "not run"
    if o.cpsat_share > 0 and dag.n <= CP_UNITS and importlib.util.find_spec("ortools") is not None:
        left = clock.left()
        incumbent, bounds["cp-sat"], note = cpsat_phase(
            dag, budget, incumbent=incumbent, gap=o.gap, threads=o.threads,
            seconds=None if left is None else o.cpsat_share * left)
    sched = _milp.solve_milp(dag, budget, o, mip=backend(o.solver), lp=HighsBackend(), incumbent=incumbent,
                             progress=progress, clock=clock, bounds=bounds)
    raise_bound(dag, sched, gb, gap=o.gap)
    sched.report.extras["cp_sat"] = note
    return sched


def _approx_fn(dag: DAG, budget: int | None, o: ApproxOptions, progress: Progress | None,
               start: Schedule | None = None) -> Schedule:
    assert budget is not None
    clock = Clock(o.time_limit)
    incumbent = _incumbent(dag, budget, clock, start)
    return _approx.solve_approx(dag, budget, o, lp=HighsBackend(), incumbent=incumbent, progress=progress,
                                clock=clock)


def _baseline(name: str) -> StrategyFn:
    def run(dag: DAG, budget: int | None, o: BaselineOptions, progress: Progress | None) -> Schedule:
        return solve_baseline_strategy(name, dag, budget, o)
    return run


REGISTRY: dict[str, Strategy] = {
    "checkmate": Strategy(_checkmate, CheckmateOptions, needs_budget=True, warm=True),
    "approx": Strategy(_approx_fn, ApproxOptions, needs_budget=True, warm=True),
    "cpsat": Strategy(cpsat_strategy, CpSatOptions, needs_budget=True),  # OR-Tools: the cpsat extra
    **{name: Strategy(_baseline(name), BaselineOptions) for name in BASELINE_NAMES},
}


def register(name: str, fn: StrategyFn, options: type, *, needs_budget: bool = True) -> None:
    """Add a strategy (e.g. a CP-SAT model) under ``name``."""
    REGISTRY[name] = Strategy(fn, options, needs_budget)


def names() -> tuple[str, ...]:
    return tuple(REGISTRY)


def make_options(name: str, **fields: Any) -> Any:
    """The options of strategy ``name`` with ``fields`` set (None values are left at their defaults);
    RemcError for an unknown strategy, a field it does not have, or a value out of range."""
    strat = _lookup(name)
    known = {f.name for f in dataclasses.fields(strat.options)}
    given = {k: v for k, v in fields.items() if v is not None}
    bad = sorted(set(given) - known)
    if bad:
        raise RemcError(f"strategy {name!r} has no option {', '.join(bad)}; options: {', '.join(sorted(known))}")
    return strat.options(**given)


def _lookup(name: str) -> Strategy:
    if name not in REGISTRY:
        raise RemcError(f"unknown strategy {name!r}; choose one of {', '.join(REGISTRY)}")
    return REGISTRY[name]


def solve(name: str, dag: DAG, budget: int | None, options: Any = None, *,
          progress: Progress | None = None, start: Schedule | None = None) -> Schedule:
    """Run strategy ``name`` with ``options`` (its options dataclass; None: defaults); InfeasibleError when
    no schedule of it fits ``budget``. ``start``: a schedule (e.g. a previous fit round's, over ``budget``)
    that approx and checkmate repair and start from; other strategies ignore it."""
    strat = _lookup(name)
    if options is None:
        options = strat.options()
    elif not isinstance(options, strat.options):
        raise RemcError(f"strategy {name!r} takes {strat.options.__name__}, not {type(options).__name__}")
    if strat.needs_budget and budget is None:
        raise RemcError(f"the {name} strategy needs a budget")
    if strat.warm and start is not None:
        return strat.fn(dag, budget, options, progress, start=start)
    return strat.fn(dag, budget, options, progress)


def solve_milp(dag: DAG, budget: int, *, incumbent: Schedule | None = None, progress: Progress | None = None,
               **fields: Any) -> Schedule:
    """passes.milp.solve_milp with HiGHS (or ``solver``) wired in and CheckmateOptions from ``fields``
    (for tools and tests; no baselines run)."""
    o = make_options("checkmate", **fields)
    return _milp.solve_milp(dag, budget, o, mip=backend(o.solver), lp=HighsBackend(), incumbent=incumbent,
                            progress=progress)


def solve_approx(dag: DAG, budget: int, *, incumbent: Schedule | None = None, progress: Progress | None = None,
                 **fields: Any) -> Schedule:
    """passes.approx.solve_approx with HiGHS wired in and ApproxOptions from ``fields`` (for tools and tests)."""
    if "thresholds" in fields and fields["thresholds"] is not None:
        fields["thresholds"] = tuple(fields["thresholds"])
    return _approx.solve_approx(dag, budget, make_options("approx", **fields), lp=HighsBackend(),
                                incumbent=incumbent, progress=progress)


def least_budget_bound(dag: DAG, *, time_limit: float | None = None, threads: int | None = None) -> int:
    """passes.milp_model.least_budget_bound with HiGHS."""
    return _least_budget_bound(dag, HighsBackend(), time_limit=time_limit, threads=threads)
