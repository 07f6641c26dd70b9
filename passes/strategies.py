"""The strategy registry: every strategy maps (dag, budget, options) to a Schedule.

Baselines fix S and solve R (passes/baselines.py); 'checkmate' is the MILP (passes/milp.py), seeded with
the best feasible baseline as its incumbent; 'approx' is LP relaxation + two-phase rounding
(passes/approx.py) followed by a local search on the rounded checkpoints (passes/refine.py). Solvers are
imported lazily.
"""
from __future__ import annotations

from typing import Any, Callable

from ..ir.errors import InfeasibleError, RemcError
from ..ir.dag import DAG
from ..ir.schedule import Schedule, checkpoint_all

BASELINE_NAMES = ("checkpoint-all", "griewank", "chen-sqrtn", "chen-greedy", "ap-sqrtn", "ap-greedy",
                  "lin-sqrtn", "lin-greedy")
STRATEGIES = ("checkmate", "approx", "cpsat") + BASELINE_NAMES


def _bytes(n: int) -> str:
    from ..ir.sizes import format_size
    return f"{format_size(n)} ({n} bytes)" if n >= 1024 else f"{n} bytes"


def solve(name: str, dag: DAG, budget: int | None, *, backend: Callable[..., Schedule] | None = None,
          **options: Any) -> Schedule:
    """Run strategy ``name``; raise InfeasibleError when its schedule cannot fit ``budget``. ``backend`` is
    the solver of a strategy that lives in remc.backends ('cpsat': backends.cpsat.cpsat_strategy), which
    the driver passes in (passes do not import backends)."""
    if name not in STRATEGIES:
        raise RemcError(f"unknown strategy {name!r}; choose one of {', '.join(STRATEGIES)}")
    if name == "cpsat":
        if backend is None or budget is None:
            raise RemcError("the cpsat strategy needs a budget and its backend (remc.backends.cpsat)")
        return backend(dag, budget, **options)
    if name == "checkmate":
        from .milp import solve_milp
        if budget is None:
            raise RemcError("the checkmate strategy needs a budget")
        incumbent = best_baseline(dag, budget)
        return solve_milp(dag, budget, incumbent=incumbent, **options)
    if name == "approx":
        from .approx import solve_approx
        if budget is None:
            raise RemcError("the approx strategy needs a budget")
        return solve_approx(dag, budget, **options)
    if name == "checkpoint-all":
        sched = checkpoint_all(dag)
        sched.report = {"status": "heuristic"}
    else:
        from .baselines import solve_baseline
        sched = solve_baseline(name, dag, budget, **options)
    if budget is not None:
        peak = sched.peak(dag)
        if peak > budget:
            from ._lp import simple_lower_bound
            raise InfeasibleError(
                f"{name} needs {_bytes(peak)}, above the budget of {_bytes(budget)} "
                f"(no schedule of this graph can need less than {_bytes(simple_lower_bound(dag))})", peak)
    return sched


def best_baseline(dag: DAG, budget: int) -> Schedule | None:
    """The cheapest baseline schedule that fits ``budget``, or None."""
    best = None
    for name in BASELINE_NAMES:
        try:
            s = solve(name, dag, budget)
        except RemcError:
            continue
        if best is None or s.cost(dag) < best.cost(dag):
            best = s
    return best


StrategyFn = Callable[..., Schedule]
