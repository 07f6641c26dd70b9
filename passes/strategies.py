"""Strategy names and the baseline side of the registry: baselines fix S and solve R (passes/baselines).

The solver strategies ('checkmate': the MILP, passes/milp.py; 'approx': LP relaxation, two-phase rounding
and local search, passes/approx.py) need an LP/MIP backend; the registry that wires them to one is
``remc.backends.strategies``.
"""
from __future__ import annotations

import time

from ..ir.dag import DAG
from ..ir.errors import InfeasibleError, RemcError
from ..ir.schedule import Schedule, checkpoint_all
from ..ir.sizes import describe_size
from .milp_model import lower_bound_text
from .options import BaselineOptions

BASELINE_NAMES = ("checkpoint-all", "griewank", "chen-sqrtn", "chen-greedy", "ap-sqrtn", "ap-greedy",
                  "lin-sqrtn", "lin-greedy")
SOLVER_NAMES = ("checkmate", "approx", "cpsat")
"""Strategies with a solver (options with a time limit, a live display)."""
STRATEGIES = SOLVER_NAMES + BASELINE_NAMES
_BY_SPEED = ("checkpoint-all", "chen-sqrtn", "ap-sqrtn", "lin-sqrtn", "griewank", "chen-greedy", "ap-greedy",
             "lin-greedy")
"""Baselines, quickest first (the greedy ones evaluate a family of schedules)."""
LARGE_GRAPH = 100
"""Units above which ``best_baseline`` evaluates at most GREEDY_POINTS values of a greedy knob."""
GREEDY_POINTS = 32
LATE_POINTS = 4
"""Knob values a greedy baseline (slots for griewank) evaluates when the deadline has passed."""


def solve_baseline_strategy(name: str, dag: DAG, budget: int | None,
                            options: BaselineOptions | None = None) -> Schedule:
    """Run baseline ``name``; raise InfeasibleError when its schedule cannot fit ``budget``."""
    if name not in BASELINE_NAMES:
        raise RemcError(f"unknown baseline {name!r}; choose one of {', '.join(BASELINE_NAMES)}")
    options = options or BaselineOptions()
    if name == "checkpoint-all":
        sched = checkpoint_all(dag)
        sched.report = {"status": "heuristic", "cost": sched.cost(dag), "peak": sched.peak(dag)}
    else:
        from .baselines import solve_baseline
        kw = {k: v for k, v in (("max_points", options.max_points), ("max_slots", options.max_slots),
                                 ("deadline", options.deadline))
              if v is not None and (k != "max_slots" or name == "griewank")
              and (k not in ("max_points", "deadline") or name.endswith("greedy"))}
        if not options.explain and (name == "griewank" or name.endswith("greedy")):
            kw["explain"] = False
        sched = solve_baseline(name, dag, budget, **kw)
    if budget is not None:
        peak = sched.peak(dag)
        if peak > budget:
            raise InfeasibleError(
                f"{name} needs {describe_size(peak)}, above the budget of {describe_size(budget)} "
                f"({lower_bound_text(dag)})", peak)
    return sched


def best_baseline(dag: DAG, budget: int, *, deadline: float | None = None,
                  hard: float | None = None, first: bool = False) -> Schedule | None:
    """The cheapest baseline schedule that fits ``budget``, or None. Baselines run quickest first; on graphs
    above LARGE_GRAPH units the greedy ones evaluate at most GREEDY_POINTS knob values, and after
    ``deadline`` (a ``time.perf_counter()`` value) at most LATE_POINTS (so a fitting one is found even when
    time is short, at the price of running past the deadline by that much); when those fit nothing, the
    whole search runs after all (past the deadline: a schedule beats none), unless ``hard`` is given on a graph
    above LARGE_GRAPH units (the
    caller's time limit, a ``time.perf_counter()`` value; the caller has its own feasibility phases): then it
    does not run, and the greedy baselines stop walking and evaluating knob values at ``deadline`` (else at
    ``hard``; after it each evaluates one; none but checkpoint-all starts after ``hard``) (random layered
    n = 1000 at 0.8: lin-greedy's 32 knob values took 9 s, its whole search 13 s more, of a 10 s limit; 900 s
    before the limits were enforced). Every baseline still starts (each non-greedy one takes at most a few
    tenths of a second at 1000 units): a schedule in hand beats none. A family that fits nothing is not searched
    again for its least peak (``BaselineOptions.explain``): on RegNetY-400MF fine (2716 units) just above its
    least feasible budget, where no baseline fits, that search took 41 of the baselines' 69 s. ``first``: the
    first baseline that fits, quickest first, for a caller that needs a schedule within budget to start from
    and improves on any baseline by far (approx where no LP is built)."""
    # the greedy knobs' walk ends (graphs up to LARGE_GRAPH units: milliseconds, walked whole)
    walk = None if hard is None or dag.n <= LARGE_GRAPH else (deadline if deadline is not None else hard)
    opts = BaselineOptions(max_points=GREEDY_POINTS if dag.n > LARGE_GRAPH else None, deadline=walk, explain=False)
    best, late = None, False
    for k, name in enumerate(_BY_SPEED):
        if k and hard is not None and time.perf_counter() >= hard:
            # the caller's limit has passed: no other baseline starts (checkpoint-all, first, always runs):
            # Moccasin's n=1000 at 0.8, `remc solve --time-limit 10` at a load of 10 on 2 cores, the greedy
            # baselines' first evaluations ran 5.4 s past the solve's limit
            break
        if deadline is not None and time.perf_counter() >= deadline:
            # past the deadline every baseline still runs once, cheaply: a schedule in hand beats none
            opts, late = BaselineOptions(max_points=LATE_POINTS, max_slots=LATE_POINTS, deadline=walk,
                                         explain=False), True
        try:
            s = solve_baseline_strategy(name, dag, budget, opts)
        except RemcError:
            continue
        if best is None or s.cost(dag) < best.cost(dag):
            best = s
        if first:
            return best
    if best is None and late and (hard is None or dag.n <= LARGE_GRAPH):  # the few knob values fit nothing:
        # the whole search, late (above LARGE_GRAPH units, where the caller has a limit of its own, ``hard``,
        # not: it is the slowest part, unbounded)
        return best_baseline(dag, budget)
    return best
