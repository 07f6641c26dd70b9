"""A CP-SAT model of rematerialization over retention intervals (after Moccasin, Bartan et al. 2023), with
Checkmate's stages and memory semantics, so that its schedules are remc schedules (R, S).

Events: stage t (0..n-1) computes, in order, units 0..t; event e(t, i) = t(t+1)/2 + i is "unit i computed
in stage t". Each unit v has up to ``copies`` computations (instances) c, the first one at e(v, v) (its
frontier stage). Instance c of v is an optional interval [start, end) of events in which its output is
resident, of demand M_v in one cumulative whose capacity is the budget less the constant overhead; a
length-1 interval at its start carries the workspace W_v. For each edge (u, v) and each instance j of v,
some instance i of u must be resident through v's computation: start_u^i < start_v^j < end_u^i. Instances
of one unit follow each other; the previous one ends by the start of the stage in which the next is
computed (in Checkmate a value resident at a stage's start is never recomputed in that stage, so this
loses nothing and keeps the two accountings equal). The objective is the total cost of the instances.

Unlike Moccasin (C=2, interval lengths from a log-spaced list) the number of computations per unit is an
option, capped at n - v (one per stage, the most any frontier-advancing schedule can use): with
``copies >= n`` the model is exact and its bound is a bound of the problem; with fewer, the bound holds
for schedules with at most that many computations per unit, and the report says so (``bound_scope``).

The solution becomes (R, S): S[t, i] when an instance of i computed before stage t is still used at or
after the start of stage t, R = the least R for that S (``solve_rs``). Its peak is then checked in remc's
own accounting; a schedule over the budget is never returned.
"""
from __future__ import annotations

import dataclasses
import importlib
import math
import os
import sys
import threading
import time
import types
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..ir.dag import DAG
from ..ir.errors import InfeasibleError, NoScheduleInTime, SolverError
from ..ir.report import gap_of
from ..ir.schedule import Schedule, check, checkpoint_all, solve_rs
from ..passes.solver_api import Progress, ProgressEvent, load_per_core


def load_cp_model():
    """OR-Tools' ``ortools.sat.python.cp_model`` module, imported without pandas where pandas is not loaded yet.

    cp_model imports pandas at its top only for its pandas helpers (``new_int_var_series`` and the like) and
    the annotations naming ``pd.Index`` and ``pd.Series``; remc uses none of them, and pandas' import was
    0.4-0.65 s of a 2.5 s ``remc solve`` (VGG16 at 0.9 of its peak). So the import runs against a placeholder
    ``pandas`` module that has only those two names, the placeholder is taken out of ``sys.modules`` at once,
    and cp_model's ``pd`` becomes ``_LazyPandas``, which imports the real pandas on first use: OR-Tools'
    pandas helpers still work in this process. When the placeholder does not suffice (another OR-Tools
    version), the module is imported as usual."""
    name = "ortools.sat.python.cp_model"
    if name in sys.modules or "pandas" in sys.modules:
        return importlib.import_module(name)
    stub = types.ModuleType("pandas")
    for attr in ("Index", "Series"):
        setattr(stub, attr, type(attr, (), {}))
    sys.modules["pandas"] = stub
    try:
        module = importlib.import_module(name)
    except Exception:  # noqa: BLE001 - the placeholder lacked something: import as usual below
        sys.modules.pop(name, None)
        module = None
    finally:
        if sys.modules.get("pandas") is stub:
            del sys.modules["pandas"]
    if module is None:
        return importlib.import_module(name)
    setattr(module, "pd", _LazyPandas())  # noqa: B010 - (mypy: a module's attribute)
    return module


class _LazyPandas:
    """Stands for the pandas module in cp_model (``load_cp_model``): imports it on the first attribute read."""

    def __getattr__(self, attr: str) -> object:
        return getattr(importlib.import_module("pandas"), attr)


@dataclass(frozen=True)
class CpSatOptions:
    """Options of the cpsat strategy."""

    time_limit: float | None = 600.0
    """Wall-clock seconds for the CP-SAT search (model building is not counted by CP-SAT; it is in the
    report's ``seconds``)."""
    threads: int | None = None
    """CP-SAT workers; default: the machine's CPU count."""
    copies: int = 3
    """Most computations of one unit (capped at n - v); Moccasin's C."""
    gap: float = 0.0
    """Stop when the relative gap on the objective is at most this."""
    seed: int = 0
    stall: float | None = None
    """Stop the search once no better solution has come for this share of the time since it started (and
    at least STALL_MIN seconds), after the first one; None: run to the time limit or the proof."""
    presolve: bool | None = None
    """CP-SAT's presolve; None: on up to PRESOLVE_UNITS units. Measured on 2 loaded cores, 4 workers, 60 s:
    Moccasin's random layered n=100 at 0.8 was proven optimal with it (+2.30%) and ended at +5.3% without;
    MobileNet (185 units) at 0.8 spent the whole limit in presolve with it and reached +0.37% without."""


PRESOLVE_UNITS = 150
STALL_MIN = 2.0
"""Least seconds without a better solution before ``stall`` stops a search. Measured (checkmate's C=2 model,
2 cores at load ~8): MobileNet at 0.8 found its last solution at 1.6 s and was proven (for C=2) at 13.6 s;
its CP-SAT phase took 21.8 s with 2 s here against 30.5 s with the former 5 s, ResNet50 at 0.9 12.1 against
15.1 s; no change where the model is proven before it stalls (segnet, Moccasin's n=100 at 0.8)."""
STALL_MIN_PER_UNIT = 0.012
"""On larger graphs the least stall is this many seconds a unit where that is more than STALL_MIN (``stall_min``):
Moccasin's random layered n=250 at 0.9, the C=2 model from the stage search's +1.222% (1 worker, CPU seconds), found
its first better schedule 2.1 s after its hint, so that STALL_MIN stopped it at the hint in one checkmate run of two
(60 s: +1.148% against +0.904%); own random layered n=200-250 improved 0.2-0.9 s after it. From the same hint
with 1 worker (results/pub19/c2stall_n250_09.txt, 4 runs each): 2 s stopped it at the hint (+1.222%) in 3 of 4 runs,
3 s (this rule) reached +0.904% in all 4."""


def stall_min(n: int) -> float:
    """Least seconds without a better solution before ``CpSatOptions.stall`` stops a search of ``n`` units."""
    return max(STALL_MIN, STALL_MIN_PER_UNIT * n)


def _event(t: int, i: int) -> int:
    return t * (t + 1) // 2 + i


def _stage_of(e: int) -> int:
    t = int((math.isqrt(8 * e + 1) - 1) // 2)
    return t


def _int_costs(cost: np.ndarray, floor: bool = False, room: float = 2.0 ** 52) -> tuple[list[int], float]:
    """Integer costs for the objective and the factor they were multiplied by: the costs divided by their
    greatest common divisor when they are integers that sum to less than ``room``, else scaled so that the
    largest is 1e9 (and the sum below ``room``), rounded (``floor``: rounded down, so that a bound computed
    with them is a bound of the true costs)."""
    total = float(cost.sum())
    if np.all(cost == np.round(cost)) and total < room:
        ints = [int(c) for c in cost]
        g = math.gcd(*ints) or 1
        return [c // g for c in ints], 1.0 / g
    top = float(cost.max(initial=0))
    scale = min(1e9 / top, room / total) if top > 0 else 1.0
    rnd = math.floor if floor else round
    return [int(rnd(c * scale)) for c in cost], scale


def _solver(cp_model, options: CpSatOptions, t0: float, presolve: bool):
    """A CP-SAT solver with the options' time limit (less what has passed since ``t0``), workers and seed."""
    solver = cp_model.CpSolver()
    prm = solver.parameters
    if options.time_limit is not None:
        prm.max_time_in_seconds = max(0.1, options.time_limit - (time.perf_counter() - t0))
    prm.num_workers = options.threads or os.cpu_count() or 1
    prm.random_seed = options.seed
    prm.cp_model_presolve = presolve
    return solver


def solve_cpsat(dag: DAG, budget: int, options: CpSatOptions = CpSatOptions(), *,
                hint: Schedule | None = None, progress: Callable[[dict], None] | None = None,
                stop: Callable[[float], bool] | None = None) -> Schedule:
    """The cheapest schedule of ``dag`` within ``budget`` bytes that the CP-SAT model finds in the time limit.

    ``hint`` (a schedule that fits, e.g. approx's) is given to CP-SAT as a whole starting solution; units
    that it computes more often than ``copies`` get as many instances as it uses; the hint is returned
    when CP-SAT finds nothing cheaper. Without a hint that fits, on graphs above PRESOLVE_UNITS the model
    starts from checkpoint-all with the memory capacity a variable above the budget, and minimizes its
    excess before the cost (the excess weighs more than any cost), as Moccasin's phase 1 does, in one
    search; on smaller graphs (presolve on) the budget is a hard capacity and no hint is given (measured:
    random layered n=100 at 0.8 was proven optimal in 34 s that way, and ended at +5.0% from
    checkpoint-all's excess). Raises InfeasibleError when CP-SAT proves that no schedule with at
    most ``copies`` computations per unit fits, NoScheduleInTime when its time limit ends the search before any
    schedule (a ``fit`` raise or the anytime phases may still find one), SolverError when it stops without a
    schedule otherwise (a model CP-SAT rejects). ``stop(cost)``
    (the cost of the best solution so far, inf before one; with the budget a hard capacity) is asked every
    WATCH_SECONDS and ends the search when true (e.g. a bound found beside it proves that solution).
    """
    try:
        cp_model = load_cp_model()
    except ImportError:
        raise SolverError("the CP-SAT model needs OR-Tools (a dependency of remc): pip install 'ortools>=9.10'") from None

    t0 = time.perf_counter()
    n = dag.n
    least = dag.constant + max(int(dag.mem[v] + dag.workspace[v] + dag.mem[dag.preds[v]].sum() + dag.kept_before[v]
                                   + dag.kept_first[v]) for v in range(n))
    if budget < least:  # every schedule computes each unit once, with its inputs resident
        raise InfeasibleError(f"no schedule fits {budget} bytes: one unit needs {least} bytes with its inputs "
                              f"resident (proven lower bound)", least)
    cap = budget - dag.constant
    g = _gcd(dag)
    mem = [int(x) // g for x in dag.mem]
    ws = [int(x) // g for x in dag.workspace]
    cap //= g
    costs, scale = _int_costs(dag.cost)
    copies = [1 if dag.no_recompute[v] else max(1, min(options.copies, n - v)) for v in range(n)]
    presolve = options.presolve if options.presolve is not None else n <= PRESOLVE_UNITS
    fits = hint is not None and hint.peak(dag) <= budget
    soft = not fits and not presolve
    if soft:  # start from checkpoint-all, over the budget, and drive its excess to 0 first (Moccasin's phase 1)
        hint = checkpoint_all(dag)
    instances = _hint_instances(dag, hint) if fits or soft else None
    if instances is not None:
        copies = [max(c, len(sv)) for c, sv in zip(copies, instances[0])]
    top = max(cap, -(-(hint.peak(dag) - dag.constant) // g)) if soft else cap
    if soft:  # the excess term (weight x excess) must fit CP-SAT's 64-bit objective too
        costs, scale = _int_costs(dag.cost, room=2.0 ** 60 / (max(copies) * (top - cap + 1)))
    m, pres, start, end, serve, level = _build(cp_model, dag, copies, mem, ws, cap, top)
    recompute = sum(costs[v] * p for v in range(n) for p in pres[v][1:])
    if top > cap:  # the excess over the budget first: one unit of it outweighs any cost
        weight = sum(costs[v] * (copies[v] - 1) for v in range(n)) + 1
        over = m.NewIntVar(0, top - cap, "excess")  # a variable of its own: weight x level (level up to
        m.Add(over == level - cap)  # top) overflowed CP-SAT's 64-bit check (MODEL_INVALID on U-Net b4 at 0.5)
        m.Minimize(recompute + weight * over)
    else:  # a hard capacity: the level is the constant cap (weight x cap alone can overflow too)
        m.Minimize(recompute)
    fixed = sum(costs)

    if instances is not None:
        _add_hint(m, instances, pres, start, end, serve, copies)
        m.AddHint(level, top)

    solver = _solver(cp_model, options, t0, presolve)
    solver.parameters.relative_gap_limit = options.gap
    status = _solve_watched(cp_model, solver, m, options.stall, stop if top == cap else None,
                            lambda obj: (fixed + obj) / scale, stall_min(n))
    name = solver.StatusName(status)
    if status == cp_model.INFEASIBLE:
        raise InfeasibleError(f"CP-SAT proved that no schedule with at most {options.copies} computations per "
                              f"unit fits {budget} bytes", None)
    found = status in (cp_model.OPTIMAL, cp_model.FEASIBLE)
    excess = solver.Value(level) - cap if found else None
    if soft and (not found or excess > 0):
        if status == cp_model.OPTIMAL:
            raise InfeasibleError(f"CP-SAT proved that no schedule with at most {options.copies} computations "
                                  f"per unit fits {budget} bytes", None)
        least = "" if excess is None else f" (the least memory it reached: {budget + excess * g} bytes)"
        raise NoScheduleInTime(f"CP-SAT found no schedule within the budget in the time limit{least}")
    if not found and not fits:
        if status == cp_model.UNKNOWN:  # its time limit (or ``stop``) came first: none is proven to exist or not
            raise NoScheduleInTime(f"CP-SAT found no schedule within {budget} bytes in its time limit (status "
                                   f"{name})")
        raise SolverError(f"CP-SAT stopped with status {name} and no schedule")
    if not found:
        return _report(Schedule(hint.R, hint.S, strategy="cpsat"), dag, t0, name, None, None, False, options,
                       m)

    sched = _extract(solver, dag, copies, pres, start, serve)
    peak = sched.peak(dag)
    if peak > budget:
        raise SolverError(f"CP-SAT's schedule needs {peak} bytes in remc's accounting, above the budget of "
                          f"{budget}: the model and the accounting disagree (a bug)")
    if fits and hint.cost(dag) < sched.cost(dag):
        sched = Schedule(hint.R, hint.S, strategy="cpsat")  # CP-SAT stopped at a worse one than its hint
    exact = all(copies[v] >= n - v or dag.no_recompute[v] for v in range(n))
    bound_c = (fixed + solver.BestObjectiveBound()) / scale
    sched = _report(sched, dag, t0, name, bound_c, (fixed + solver.ObjectiveValue()) / scale, exact, options, m)
    if status == cp_model.OPTIMAL:  # proven for the model: for every schedule only when it is exact, or when
        # the bound of every schedule (each unit once) proves it too (no recomputation needed)
        if not exact and sched.report["gap"] <= options.gap:
            exact, sched.report["bound_scope"] = True, "all schedules"
        sched.report["status"] = "optimal" if exact else f"optimal (C={options.copies})"
    if progress is not None:
        progress({"incumbent": sched.cost(dag), "bound": bound_c, "gap": sched.report["gap_c"],
                  "elapsed": sched.report["seconds"]})
    return sched


WATCH_SECONDS = 0.25
"""How often a watched CP-SAT search checks its stall and its ``stop`` condition."""


def _search_clock(workers: int) -> Callable[[], float]:
    """The clock of a search's stall: this process' CPU seconds per CP-SAT worker, not the wall clock, so that a
    loaded machine does not stop a search earlier in its work. Measured (MobileNet of Moccasin's set at 0.8, the
    C=2 model from the stage search's +0.401%, 1 worker, load ~7): without a stall it reached the optimum +0.370% at
    2.2 s of wall; checkmate's run with the wall-clock stall, the covering MILP's child process beside it, stopped it
    at its hint (+0.401%) after 4 s of wall, and its bound rounds proved nothing in the 37 s left."""
    return lambda: time.process_time() / workers


def _solve_watched(cp_model, solver, m, stall: float | None, stop: Callable[[float], bool] | None = None,
                   cost: Callable[[float], float] | None = None, least: float = STALL_MIN) -> int:
    """``solver.Solve(m)``; with ``stall``, a watchdog thread stops the search once no better solution has
    come for ``stall`` x the time since the start (at least ``least`` seconds), after the first one, both
    counted in the search's CPU seconds per worker (``_search_clock``); with ``stop``, once
    ``stop(cost(objective of the best solution so far))`` is true (inf before the first)."""
    if stall is None and stop is None:
        return solver.Solve(m)
    clock = _search_clock(max(1, solver.parameters.num_workers))
    t0 = clock()
    last: list[float | None] = [None]
    best = [math.inf]
    done = threading.Event()

    class _Seen(cp_model.CpSolverSolutionCallback):
        def on_solution_callback(self) -> None:
            last[0] = clock()
            if cost is not None:
                best[0] = min(best[0], cost(self.ObjectiveValue()))

    def watch() -> None:
        while not done.wait(WATCH_SECONDS):
            now = clock()
            seen = last[0]
            if stall is not None and seen is not None and now - seen >= max(least, stall * (now - t0)):
                solver.stop_search()
                return
            if stop is not None and stop(best[0]):
                solver.stop_search()
                return

    th = threading.Thread(target=watch, daemon=True)
    th.start()
    try:
        return solver.Solve(m, _Seen())
    finally:
        done.set()
        th.join()


def _extract(solver, dag: DAG, copies: list[int], pres, start, serve) -> Schedule:
    """The schedule (R, S) of a CP-SAT solution: S[t, i] when an instance of i computed before stage t is
    used at or after the start of stage t; R the least for that S."""
    n = dag.n
    S = np.zeros((n, n), dtype=bool)
    last_use: dict[tuple[int, int], int] = {}
    for (u, v, i, j), x in serve.items():
        if solver.BooleanValue(x) and (j == 0 or solver.BooleanValue(pres[v][j])):
            last_use[u, i] = max(last_use.get((u, i), -1), solver.Value(start[v][j]))
    for v in range(n):
        for c in range(copies[v]):
            if c and not solver.BooleanValue(pres[v][c]):
                continue
            s = solver.Value(start[v][c])
            lu = last_use.get((v, c), -1)
            if lu > s:
                S[_stage_of(s) + 1:_stage_of(lu) + 1, v] = True
    R, S = solve_rs(dag, S)
    return Schedule(R, S, strategy="cpsat")


@dataclass
class CpBound:
    """A lower bound on the cost of every schedule, from the relaxed CP-SAT model (``cpsat_bound``)."""

    bound: float
    """Cost units; valid for all schedules (any number of computations per unit)."""
    status: str
    """CP-SAT's status on the relaxed model: OPTIMAL means ``bound`` is the relaxation's optimum."""
    seconds: float
    schedule: Schedule | None = None
    """The relaxation's solution when it is a schedule within the budget in remc's accounting (then its
    cost may equal ``bound``: optimal for every schedule)."""


GROW = 3
"""Instances added per round of ``cpsat_bound`` to a unit whose merged instance was used at more than one
event. Measured (Moccasin's random layered n=100 at 0.8, 2 loaded cores, 2 workers, from its optimum as
hint): rounds to the proof took 22 s adding 1, 13 s adding 2, 11 s adding 3, 14 s adding 4 or 6."""


def cpsat_bound(dag: DAG, budget: int, options: CpSatOptions = CpSatOptions(), *,
                hint: Schedule | None = None, stop_at: float | None = None, rounds: int = 8,
                first: bool = False, quick: int = 0, stop: Callable[[], bool] | None = None) -> CpBound:
    """A lower bound on the cost of every schedule of ``dag`` within ``budget``, valid for any number of
    computations per unit: the CP-SAT model with ``options.copies`` instances per unit whose last one is
    merged (``_build``: it stands for every later computation, costs one, and holds memory from its
    computation to its first use and then only where it is used). When the relaxation's optimum uses a
    merged instance at more than one event, that unit gets one more instance and the model is solved
    again (at most ``rounds`` times, within ``options.time_limit`` in all): every round's bound holds, the
    best is kept. When the relaxation's solution is a schedule within the budget it is returned too (its
    cost then equals the bound: optimal for every schedule). ``hint`` (a schedule that fits) gives the rounds
    its instance counts and, without ``stop_at``, starts each search. ``stop_at`` (cost units, e.g. the
    incumbent less the gap asked for) is an objective cutoff: each round looks only for a relaxation below
    it, and when CP-SAT proves there is none the bound is ``stop_at`` and the status CUTOFF (a round that
    finds one below it goes on as without the cutoff). ``first``: each round stops at its first relaxation
    below the cutoff (a probe: a proof or a quick no). ``quick`` (with ``stop_at``): the first ``quick`` rounds
    stop at their first relaxation below the cutoff too, and the next round grows the units that relaxation uses
    a merged instance of more than once, without the relaxation's optimum (its bound) in between; a quick round
    whose relaxation is a schedule ends the rounds (it is returned: cheaper than the cutoff); the rounds after
    them solve each relaxation to its optimum as without it (QUICK_ROUNDS' measurements). ``stop()``, asked
    before each round and every WATCH_SECONDS during one, ends the rounds when true (the bound so far holds).
    Raises InfeasibleError when a relaxation without a cutoff is infeasible: then no schedule fits at all."""
    t0 = time.perf_counter()
    n = dag.n
    copies = [1 if dag.no_recompute[v] else max(1, min(options.copies, n - v)) for v in range(n)]
    best = CpBound(float(dag.total_cost), "not run", 0.0)
    for k in range(rounds):
        left = None if options.time_limit is None else options.time_limit - (time.perf_counter() - t0)
        if (left is not None and left <= 0.1) or (stop is not None and stop()):
            break
        fast = k < quick and stop_at is not None
        res, grow = _bound_round(dag, budget, copies, dataclasses.replace(options, time_limit=left), hint, stop_at,
                                 first or fast, stop)
        if res.bound >= best.bound or res.schedule is not None:
            best = CpBound(max(res.bound, best.bound), res.status, 0.0, res.schedule or best.schedule)
        grows = res.status == "OPTIMAL" or (fast and res.status == "FEASIBLE")
        if not grows or not grow or (stop_at is not None and best.bound >= stop_at - 1e-9):
            break
        copies = [min(c + GROW, n - v) if v in grow else c for v, c in enumerate(copies)]
    best.seconds = time.perf_counter() - t0
    return best



def _bound_round(dag: DAG, budget: int, copies: list[int], options: CpSatOptions, hint: Schedule | None,
                 stop_at: float | None, first: bool = False, stop: Callable[[], bool] | None = None
                 ) -> tuple[CpBound, set[int]]:
    """One relaxed model with ``copies`` instances per unit: its bound, and the units whose merged instance
    the solution uses at more than one event (where the relaxation may be below every schedule), in the last
    solution or, when the last has any, in any solution the search found on its way. Measured (Moccasin's
    random layered n=100, the CP-SAT phase from the same incumbent, 2 loaded cores, one run each), against the
    last solution's units alone: at 0.8 2 bound rounds instead of 3 (7.6 s of CPU against 10.4 s), at 0.9 3
    instead of 4 (5.0 against 5.5 s). (Growing the union also after a last solution without any, as first
    written, ran 8 bound rounds instead of 5 on an own n=100, seed 47 at 0.8, whose optimum needs C > 2.)"""
    cp_model = load_cp_model()

    t0 = time.perf_counter()
    n = dag.n
    cap = budget - dag.constant
    g = _gcd(dag)
    mem = [int(x) // g for x in dag.mem]
    ws = [int(x) // g for x in dag.workspace]
    cap //= g
    if cap < 0:
        raise InfeasibleError(f"no schedule fits {budget} bytes: the constant part needs {dag.constant}",
                              dag.constant)
    costs, scale = _int_costs(dag.cost, floor=True)
    fits = hint is not None and hint.peak(dag) <= budget
    instances = _hint_instances(dag, hint) if fits else None
    if instances is not None:
        copies = [max(c, len(sv)) for c, sv in zip(copies, instances[0])]
    relax = frozenset(v for v in range(n) if copies[v] < n - v and not dag.no_recompute[v])
    m, pres, start, end, serve, level = _build(cp_model, dag, copies, mem, ws, cap, cap, relax)
    objective = sum(costs[v] * p for v in range(n) for p in pres[v][1:])
    m.Minimize(objective)
    fixed = sum(costs)
    cutoff = None
    if stop_at is not None:
        # only a relaxation below the target is asked for (model units: the objective less the fixed part): where
        # there is none, CP-SAT proves that infeasibility faster than the optimum from the incumbent as hint
        # (Moccasin's n=100 at 0.9: 8.2-8.9 s against 18.4-20.6 s for the CP-SAT phase, 2 loaded cores)
        cutoff = math.ceil(stop_at * scale - fixed - 1e-9)
        m.Add(objective <= cutoff - 1)
    elif instances is not None:  # (a hint above the cutoff would be infeasible)
        _add_hint(m, instances, pres, start, end, serve, copies)
    solver = _solver(cp_model, options, t0, options.presolve if options.presolve is not None else n <= PRESOLVE_UNITS)
    solver.parameters.stop_after_first_solution = first
    merged = [(u, x, pres[u][copies[u] - 1]) for (u, _v, i, _j), x in serve.items()
              if u in relax and i == copies[u] - 1]
    seen: set[int] = set()

    class _Grow(cp_model.CpSolverSolutionCallback):  # every solution's multiply used merged instances
        def on_solution_callback(self) -> None:
            seen.update(_multi_use(merged, self.BooleanValue))

    if stop is None:
        status = solver.Solve(m, _Grow())
    else:
        done = threading.Event()

        def watch() -> None:
            while not done.wait(WATCH_SECONDS):
                if stop():
                    solver.stop_search()
                    return

        th = threading.Thread(target=watch, daemon=True)
        th.start()
        try:
            status = solver.Solve(m, _Grow())
        finally:
            done.set()
            th.join()
    name = solver.StatusName(status)
    if status == cp_model.INFEASIBLE and cutoff is not None:  # every relaxation costs at least the target
        return CpBound(max(float(dag.total_cost), (fixed + cutoff) / scale), "CUTOFF", time.perf_counter() - t0), set()
    if status == cp_model.INFEASIBLE:
        raise InfeasibleError(f"no schedule of the {n} units fits a budget of {budget} bytes (proven: CP-SAT "
                              f"found a relaxation of every schedule infeasible)", None)
    bound = max(float(dag.total_cost), (fixed + solver.BestObjectiveBound()) / scale)
    found, grow = None, set()
    if status in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        cand = _extract(solver, dag, copies, pres, start, serve)
        if cand.peak(dag) <= budget:
            found = cand
        last = _multi_use(merged, solver.BooleanValue)
        grow = last | seen if last else set()  # (a solution without any is a schedule: nothing to grow)
    return CpBound(bound, name, time.perf_counter() - t0, found), grow


def _multi_use(merged: list, value: Callable) -> set[int]:
    """The units whose merged instance a solution (``value``: its literal values) uses at more than one event;
    ``merged``: (unit, serve literal of its merged instance, that instance's presence)."""
    uses: dict[int, int] = {}
    for u, x, p in merged:
        if value(x) and value(p):
            uses[u] = uses.get(u, 0) + 1
    return {u for u, k in uses.items() if k > 1}

def _gcd(dag: DAG) -> int:
    """The bytes per model unit: the gcd of every M_v, W_v and K_v."""
    return math.gcd(*(int(x) for x in dag.mem), *(int(x) for x in dag.workspace), *(int(x) for x in dag.kept),
                    *(int(x) for x in dag.kept_first), 0) or 1


def _build(cp_model, dag: DAG, copies: list[int], mem: list[int], ws: list[int], cap: int, top: int,
           relax: frozenset[int] = frozenset()):
    """The CP-SAT model: (model, presences, starts, ends, serve literals, memory level). The memory level
    is ``cap`` (a hard capacity) when ``top == cap``, else a variable in [cap, top].

    Units in ``relax`` have their last instance *merged*: it stands for that computation and every later
    one, costs one computation, and holds memory only at its own computation and at the computations it
    serves (length-1 demands), not in between. Every schedule maps to a solution of that model at no
    more cost and no more memory at any event, so its optimum is a lower bound for all schedules."""
    n = dag.n
    g = _gcd(dag)
    horizon = _event(n - 1, n - 1) + 1
    m = cp_model.CpModel()
    pres, start, end = [], [], []
    ivs, dem = [], []
    first: dict[int, cp_model.IntVar] = {}
    for v in range(n):
        pv, sv, ev = [], [], []
        later = [_event(t, v) for t in range(v + 1, n)] or [_event(v, v)]
        for c in range(copies[v]):
            if c == 0:
                p, s = m.NewConstant(1), m.NewConstant(_event(v, v))
            else:
                p = m.NewBoolVar(f"p{v}_{c}")
                s = m.NewIntVarFromDomain(cp_model.Domain.FromValues(later), f"s{v}_{c}")
                m.AddImplication(p, pv[-1])
                # the previous instance is gone before the stage of this one starts: e(t, v) - v = e(t, 0)
                m.Add(ev[-1] <= s - v).OnlyEnforceIf(p)
            e = m.NewIntVar(0, horizon, f"e{v}_{c}")
            if v in relax and c == copies[v] - 1:  # merged: resident from its computation to its first use,
                m.Add(e >= s + 1)  # then only where it is used (length-1 demands below)
                f = m.NewIntVar(0, horizon, f"f{v}_{c}")
                first[v] = f
                size = m.NewIntVar(1, horizon, f"l{v}_{c}")
                iv = m.NewOptionalIntervalVar(s, size, f, p, f"m{v}_{c}")
                if mem[v]:
                    ivs.append(iv)
                    dem.append(mem[v])
            else:
                size = m.NewIntVar(1, horizon, f"l{v}_{c}")
                iv = m.NewOptionalIntervalVar(s, size, e, p, f"i{v}_{c}")
                if mem[v]:
                    ivs.append(iv)
                    dem.append(mem[v])
            if ws[v]:
                ivs.append(m.NewOptionalFixedSizeIntervalVar(s, 1, p, f"w{v}_{c}"))
                dem.append(ws[v])
            if c == 0 and dag.kept_first[v]:  # what the first computation holds of its own while it runs
                ivs.append(m.NewFixedSizeIntervalVar(_event(v, v), 1, f"kf{v}"))
                dem.append(int(dag.kept_first[v]) // g)
            if c == 0 and dag.kept[v] and _event(v, v) + 1 < horizon:  # then held to the end
                ivs.append(m.NewFixedSizeIntervalVar(_event(v, v) + 1, horizon - _event(v, v) - 1, f"k{v}"))
                dem.append(int(dag.kept[v]) // g)
            pv.append(p)
            sv.append(s)
            ev.append(e)
        pres.append(pv)
        start.append(sv)
        end.append(ev)
    serve: dict[tuple[int, int, int, int], cp_model.IntVar] = {}
    firsts: dict[int, list] = {u: [] for u in first}
    for u, v in dag.edges.tolist():
        for j in range(copies[v]):
            lits = []
            for i in range(copies[u]):
                x = m.NewBoolVar(f"x{u}_{v}_{i}_{j}")
                m.AddImplication(x, pres[u][i])
                m.Add(start[u][i] < start[v][j]).OnlyEnforceIf(x)
                m.Add(end[u][i] > start[v][j]).OnlyEnforceIf(x)
                if u in first and i == copies[u] - 1:  # the merged instance is resident at each use
                    if mem[u]:
                        ivs.append(m.NewOptionalFixedSizeIntervalVar(start[v][j], 1, x, f"r{u}_{v}_{j}"))
                        dem.append(mem[u])
                    m.Add(first[u] <= start[v][j]).OnlyEnforceIf(x)
                    y = m.NewBoolVar(f"y{u}_{v}_{j}")  # its first use
                    m.AddImplication(y, x)
                    m.Add(first[u] == start[v][j]).OnlyEnforceIf(y)
                    firsts[u].append(y)
                serve[u, v, i, j] = x
                lits.append(x)
            if j == 0:
                m.AddBoolOr(lits)
            else:
                m.AddBoolOr(lits).OnlyEnforceIf(pres[v][j])
    for u, ys in firsts.items():  # a recomputation is used (removing one that is not costs nothing)
        if ys and copies[u] > 1:
            m.AddExactlyOne(ys + [pres[u][copies[u] - 1].Not()])
    level = m.NewIntVar(cap, top, "level")
    m.AddCumulative(ivs, dem, level)
    return m, pres, start, end, serve, level


def _report(sched: Schedule, dag: DAG, t0: float, name: str, bound_c: float | None, cp_objective: float | None,
            exact: bool, options: CpSatOptions, m) -> Schedule:
    """Fill the solver report: the bound of the problem (the CP bound when the model is exact, else each
    unit computed once) and the CP model's own bound for schedules within ``copies`` computations, each gap
    on the recomputation overhead (the CP objective; ``gap_measure``)."""
    cost = sched.cost(dag)
    base = float(dag.total_cost)
    bound = bound_c if exact and bound_c is not None else dag.total_cost
    sched.report = {
        "status": "time_limit", "objective": cost, "cp_objective": cp_objective, "bound": bound,
        "gap": gap_of(cost, bound, base), "gap_measure": "overhead", "bound_c": bound_c,
        "gap_c": None if bound_c is None else gap_of(cost, bound_c, base),
        "bound_scope": "all schedules" if exact else f"schedules with at most {options.copies} computations "
                                                     f"per unit",
        "seconds": time.perf_counter() - t0, "solver": f"cp-sat ({name})", "copies": options.copies,
        "n_vars": len(m.Proto().variables), "n_cons": len(m.Proto().constraints),
    }
    return sched


def _hint_instances(dag: DAG, hint: Schedule) -> tuple[list[list[int]], list[list[int]], dict]:
    """The instances of ``hint``: per unit its start events and end events, and which instance of each
    parent serves each computation (the latest one computed before it)."""
    R = np.asarray(hint.R, dtype=bool)
    starts = [[_event(t, v) for t in np.flatnonzero(R[:, v]).tolist()] for v in range(dag.n)]
    ends = [[s + 1 for s in sv] for sv in starts]
    served: dict[tuple[int, int, int, int], bool] = {}
    for u, v in dag.edges.tolist():
        for j, sv in enumerate(starts[v]):
            i = max(c for c, su in enumerate(starts[u]) if su < sv)
            ends[u][i] = max(ends[u][i], sv + 1)
            served[u, v, i, j] = True
    return starts, ends, served


def _add_hint(m, hint: tuple[list[list[int]], list[list[int]], dict], pres, start, end, serve,
              copies: list[int]) -> None:
    """Hint a whole solution: presence, start and end of every instance and who serves whom."""
    starts, ends, served = hint
    for v, cv in enumerate(copies):
        for c in range(cv):
            on = c < len(starts[v])
            if c:
                m.AddHint(pres[v][c], on)
                if on:
                    m.AddHint(start[v][c], starts[v][c])
            if on:
                m.AddHint(end[v][c], ends[v][c])
    for key, x in serve.items():
        m.AddHint(x, served.get(key, False))


CP_UNITS = 400
"""Largest graph (units) on which checkmate runs its CP-SAT phases: above it the models are too large for
the search to finish a round in a typical limit (ResNet50, 353 units: one C=3 model used all of 60 s)."""
CP_NO_LIMIT = 120.0
"""Seconds each CP-SAT phase of checkmate gets when checkmate has no time limit."""


MODEL_SHARE = 0.7
"""Most of checkmate's CP-SAT phase that its C=2 model may use; it stops sooner when proven optimal (for
C=2) or stalled (STALL), leaving the rest to the bound rounds. Measured on MobileNet at 0.8 (2 loaded
cores): the C=2 model improved until 14 s and was proven at 20-25 s, then one bound round of 20 s proved
it optimal for every schedule; the former fixed half of a 42 s phase stopped it at +0.43%."""
STALL = 0.5
"""The C=2 model stops once no better schedule came for this share of its running time (CpSatOptions.stall)."""
HINTED_PRESOLVE = False
"""CP-SAT's presolve in checkmate's CP-SAT phase when it starts from a schedule that fits (the probe, the C=2
model and the bound rounds; without one, ``CpSatOptions.presolve``'s default). Measured (the phase from the
same incumbent, 2 cores at load 5.6-6.7, one worker, one run each, presolve on up to PRESOLVE_UNITS before):
Moccasin's n=100 at 0.9 1.6 s against 11.5 s of wall (the C=2 model 0.11 against 1.6 s of CPU, each bound round
0.12-0.18 against 0.9 s), vgg_unet 0.8 1.1 against 3.1 s, VGG19 0.8 0.63 against 1.6 s, FCN8 0.9 0.31 against
0.81 s, segnet 0.8 4.0 against 5.1 s: on these models presolve took most of each solve."""
PROBE_UNITS = 100
"""Largest graph (units) on which checkmate's CP-SAT phase first probes whether its incumbent is optimal."""
PROBE_SECONDS = 1.0
"""Most seconds of that probe (where it proves, it took 0.1-0.7 s on the published graphs, 2 loaded cores)."""


QUICK_ROUNDS = 3
"""checkmate's first bound rounds after the C=2 model (this many) stop at their first relaxation below the target
(``cpsat_bound``'s ``quick``) instead of solving each relaxation to its optimum before growing it. Measured (the
CP-SAT phase from the stage search's schedule, one worker, CPU seconds of the process, 2 loaded cores, one run
each; results/pub13/scratch/quick*.txt), where more than one round ran: Moccasin's n=100 at 0.8 5.1 against 6.7
(4 quick rounds against 3), at 0.9 0.95 against 1.33, VGG19 0.8 0.23 against 0.38, own layered n=100 seed 102 at
0.9 3.1 against 3.6, n=80 seed 104 at 0.8 0.83 against 1.08; one round (segnet, vgg_unet, MobileNet at 0.8) the
same within the run-to-run spread. All rounds quick failed where the C=2 model stopped far from the optimum (a
stall limit of 0.3 s on Moccasin's n=100 at 0.8: no proof in 60 s, rounds grown 8 times over, `stallmin.txt`):
after these the rounds solve each relaxation to its optimum again."""


def free_workers() -> int:
    """CP-SAT workers for checkmate's CP-SAT phase when the user set no thread count: the cores that the
    1-minute load average leaves free, at least 1. Measured (the phase from the same incumbent, 2 cores at
    load 6-8, one worker against two, one run each): MobileNet at 0.8 14.4 s against 27.2 s of wall (5.8 against
    11.3 s of CPU: the one bound round 4.4 against 9.5 s), Moccasin's n=100 at 0.8 18.0 against 21.5 s,
    segnet 0.8 5.5 against 6.3 s, vgg_unet 0.8 3.1 against 3.6 s, VGG19 0.8 2.0 against 2.3 s: on busy cores
    a second worker takes CPU from the first rather than adding to it."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    try:
        load = os.getloadavg()[0]
    except OSError:
        return cores
    return max(1, min(cores, round(cores - load)))


def cpsat_phase(dag: DAG, budget: int, *, incumbent: Schedule | None, gap: float, threads: int | None,
                seconds: float | None, progress: Callable[[dict], None] | None = None,
                external: Callable[[], float] | None = None, probe: bool = True) -> tuple[Schedule | None, float, str]:
    """checkmate's CP-SAT phase, within ``seconds`` (None: CP_NO_LIMIT for each step): the model with at
    most 2 computations per unit (Moccasin's C) from ``incumbent``, for at most MODEL_SHARE of the time and
    less when it is proven or stalls (STALL); then, unless the model was still improving when its time ran
    out (then the time left goes back to the caller), ``cpsat_bound``'s rounds with the time left, started
    from the best schedule, which stop once the bound is within ``gap`` of the best schedule's recomputation
    overhead. ``threads``: CP-SAT's workers (None: ``free_workers()``). Returns the best schedule
    (``incumbent`` when nothing is cheaper), a lower bound valid for all schedules (cost units; the sum of
    costs when none was proven) and a note for the report. SolverError
    and time-outs are notes, never raised; InfeasibleError (a proven infeasibility) is raised.

    ``external()``: the best lower bound found beside this phase so far (cost units, -inf for none; e.g. the
    covering MILP's, run concurrently: backends/strategies.py). Once it proves the best schedule within
    ``gap``, the phase ends, whichever step is running (checked every WATCH_SECONDS). ``probe``: the cutoff round
    that first asks whether ``incumbent`` is optimal (PROBE_UNITS); off where a bound found before (checkmate's
    covering MILP) already says it may not be."""
    t0 = time.perf_counter()
    base = float(dag.total_cost)
    threads = threads if threads is not None else free_workers()

    def left(share: float = 1.0) -> float:
        if seconds is None:
            return CP_NO_LIMIT
        return max(0.0, share * seconds - (time.perf_counter() - t0))

    best = incumbent if incumbent is not None and incumbent.peak(dag) <= budget else None
    notes = []
    cut = False

    def target(s: Schedule) -> float:
        return s.cost(dag) - gap * max(s.cost(dag) - base, 0.0)

    def proven_beside(cost: float) -> bool:  # the external bound proves a schedule of this cost
        if external is None or not math.isfinite(cost):
            return False
        return cost - external() <= gap * max(cost - base, 0.0) + 1e-9 * max(cost, 1.0)

    def stop_rounds() -> bool:
        return best is not None and proven_beside(best.cost(dag))

    def stop_model(cost: float) -> bool:  # the C=2 model: its best solution so far or the hint
        return proven_beside(min(cost, best.cost(dag) if best is not None else math.inf))

    beside = "; stopped: the bound found beside CP-SAT proves it"

    if probe and best is not None and dag.n <= PROBE_UNITS and left() >= 0.5:
        # the incumbent is often optimal already (the stage search's, on VGG16/19 and FCN8): one cutoff round
        # proves it in 0.1-0.7 s, where the C=2 model and the bound took 0.6-2 s; else it stops at its first
        # relaxation below it (0.4-2.2 s measured on the other published graphs up to 100 units; capped)
        res = cpsat_bound(dag, budget, CpSatOptions(time_limit=min(PROBE_SECONDS, left()), threads=threads,
                                                    copies=2, presolve=HINTED_PRESOLVE), hint=best,
                          stop_at=target(best), rounds=1, first=True, stop=None if external is None else stop_rounds)
        notes.append("probe: no proof")  # (no CP-SAT status: it depends on the machine's speed, and the note
        # goes into the plan text)
        if res.schedule is not None and res.schedule.cost(dag) < best.cost(dag):
            best = res.schedule
        elif res.status == "CUTOFF":
            return Schedule(best.R, best.S, strategy=best.strategy or "cpsat"), max(base, res.bound), \
                f"incumbent proven by a cutoff round of the bound (cost {best.cost(dag):g})"
    if stop_rounds():
        return Schedule(best.R, best.S, strategy=best.strategy or "cpsat"), base, "; ".join(notes) + beside
    if left(MODEL_SHARE) >= 0.5:
        presolve = HINTED_PRESOLVE if best is not None else None
        try:
            given = left(MODEL_SHARE)
            sched = solve_cpsat(dag, budget, CpSatOptions(time_limit=given, threads=threads, copies=2,
                                                          stall=STALL, presolve=presolve), hint=best,
                                progress=progress, stop=None if external is None else stop_model)
            notes.append(f"C=2 model {sched.report['solver']}, cost {sched.cost(dag):g}")
            # still improving when its time ran out: a proof is out of reach, the time left goes back
            cut = "FEASIBLE" in sched.report["solver"] and sched.report["seconds"] >= 0.95 * given
            if best is None or sched.cost(dag) < best.cost(dag):
                best = sched
        except SolverError as e:
            notes.append(f"C=2 model: {e}")
        except InfeasibleError:
            if best is not None:
                raise SolverError("CP-SAT proved no schedule fits while one does (a bug)") from None
            notes.append("C=2 model infeasible")  # more computations may still fit: the bound decides
    bound = base
    if cut and seconds is not None:
        notes.append("bound not run (the C=2 model was still improving at its time limit)")
    else:
        while left() >= 0.5:
            if stop_rounds():
                notes.append(beside[2:])
                break
            res = cpsat_bound(dag, budget, CpSatOptions(time_limit=left(), threads=threads, copies=2,
                                                        presolve=HINTED_PRESOLVE if best is not None else None),
                              hint=best, stop_at=None if best is None else target(best), quick=QUICK_ROUNDS,
                              stop=None if external is None else stop_rounds)
            bound = max(bound, res.bound)
            notes.append(f"bound {res.bound:g} ({res.status})")  # no seconds: the note goes into the plan text
            if res.schedule is None or (best is not None and res.schedule.cost(dag) >= best.cost(dag)):
                break
            # a relaxation below the target that is a schedule: cheaper; where a quick round found it (not proven
            # by its bound), the rounds again with its own target
            again = best is not None and QUICK_ROUNDS > 0
            best = res.schedule
            if not again or bound >= target(best) - 1e-9:
                break
    if best is not None:
        best = Schedule(best.R, best.S, strategy=best.strategy or "cpsat")
    return best, bound, "; ".join(notes)


FIRST_COPIES = 3
"""Computations per unit (at least) of ``cpsat_first``'s model: where every heuristic missed the budget C=2
was often infeasible (tools/feasibility_exact.py: 5 of 8 cases, proven in 0.2-11 s)."""


def cpsat_first(dag: DAG, budget: int, seconds: float, stop: threading.Event,
                copies: int = FIRST_COPIES) -> Schedule | None:
    """A schedule within ``budget`` from the model with at most ``copies`` computations per unit whose memory
    capacity is a variable above the budget, minimized from checkpoint-all (Moccasin's phase 1: the excess
    guides the search, where a hard capacity leaves CP-SAT nothing to improve until its first schedule),
    1 worker, presolve off, within ``seconds``; None when it ends above the budget or ``stop`` was set.
    Measured (2 loaded cores, 60 s): on a 140-unit random layered DAG at 0.8 (tools/bench_moccasin.py's
    seed 12) it reached the budget in 7.6 s, where the hard-capacity model and HiGHS' zero-objective MILP
    found nothing in 60 s; on the 40-unit DAGs of tools/feasibility_exact.py it won some cases (0.3 s vs
    HiGHS' 19 s) and lost others (HiGHS 21 s; C=3 proven above the budget). For the race of
    passes/feasible.py (``ExactSearch``)."""
    cp_model = load_cp_model()

    n = dag.n
    g = _gcd(dag)
    cap = (budget - dag.constant) // g
    if cap < 0 or seconds < MODEL_MARGIN * build_seconds(n):  # (no time to build and search its model)
        return None
    hint = checkpoint_all(dag)
    top = max(cap, -(-(hint.peak(dag) - dag.constant) // g))
    instances = _hint_instances(dag, hint)
    cps = [max(1 if dag.no_recompute[v] else max(1, min(copies, n - v)), len(instances[0][v])) for v in range(n)]
    m, pres, start, end, serve, level = _build(cp_model, dag, cps, [int(x) // g for x in dag.mem],
                                               [int(x) // g for x in dag.workspace], cap, top)
    m.Minimize(level)  # its least value is the budget: reaching it ends the search (optimal)
    _add_hint(m, instances, pres, start, end, serve, cps)
    m.AddHint(level, top)
    if stop.is_set():
        return None
    solver = cp_model.CpSolver()
    solver.parameters.max_time_in_seconds = max(0.1, float(seconds))
    solver.parameters.num_workers = 1
    solver.parameters.cp_model_presolve = False
    done = threading.Event()

    def watch() -> None:
        while not done.wait(0.2):
            if stop.is_set():
                solver.stop_search()
                return

    th = threading.Thread(target=watch, daemon=True)
    th.start()
    try:
        status = solver.Solve(m)
    finally:
        done.set()
        th.join()
    if status not in (cp_model.OPTIMAL, cp_model.FEASIBLE) or solver.Value(level) > cap:
        return None
    sched = _extract(solver, dag, cps, pres, start, serve)
    return Schedule(sched.R, sched.S, strategy="cpsat (least memory)") if sched.peak(dag) <= budget else None


BUILD_SECONDS_PER_UNIT = 3e-3
"""Seconds per unit that building the CP-SAT model (C=2 copies, its hint) takes, about, on idle cores: random
layered n = 1000, 3-4 s on 2 cores; 15.6 s at a load of 7 on the 2 cores (``build_seconds`` scales it by the load
per core)."""
MODEL_MARGIN = 2.0
"""The ``cpsat`` strategy builds its model only with at least this many times ``build_seconds`` left: the build,
then the model's load into CP-SAT and the extraction (random layered n = 1000 at 0.8, load 7 on 2 cores: the
build 15.6 s, ``solve_cpsat`` 22.7 s in all, with 5.6 s left of a 10 s limit; the process ran 35 s)."""


def build_seconds(n: int) -> float:
    """About how long building the CP-SAT model of ``n`` units takes now: ``BUILD_SECONDS_PER_UNIT`` per unit,
    times the 1-minute load per core where it is above 1 (``load_per_core``)."""
    return BUILD_SECONDS_PER_UNIT * n * load_per_core()


def cpsat_strategy(dag: DAG, budget: int | None, options: CpSatOptions, progress: Progress | None) -> Schedule:
    """The 'cpsat' strategy as the registry (backends/strategies.py) calls it. The cheapest baseline
    schedule that fits is the hint (looked for in at most a quarter of the time limit), and is returned when
    CP-SAT finds nothing better in time; its search counts against the time limit (``options.time_limit``
    is the whole strategy's)."""
    from ..passes.strategies import best_baseline

    assert budget is not None
    t0 = time.perf_counter()
    deadline = None if options.time_limit is None else t0 + options.time_limit
    quarter = None if deadline is None else t0 + options.time_limit / 4
    # the model cannot be built within the whole limit at this load (NO_MODEL_STAGE_SEARCH): the first baseline
    # that fits (quickest first) and the stage search from it, or from nothing, with all the time
    hopeless = NO_MODEL_STAGE_SEARCH and options.time_limit is not None \
        and options.time_limit < MODEL_MARGIN * build_seconds(dag.n)
    hint = best_baseline(dag, budget, deadline=quarter, hard=deadline, first=hopeless)
    if hopeless:
        if time.perf_counter() < deadline:
            staged = _stage_search_hint(dag, budget, deadline, start=hint)
            if staged is not None and (hint is None or staged.cost(dag) < hint.cost(dag)):
                hint = staged
    elif hint is None and (quarter is None or time.perf_counter() < quarter):
        hint = _stage_search_hint(dag, budget, quarter)
    left = None if deadline is None else deadline - time.perf_counter()
    build = build_seconds(dag.n)
    if left is not None and left < MODEL_MARGIN * build:
        # too little time left to build the model (not interruptible: random layered n = 1000, 10 s limit, the
        # model's build ran 7 s past the limit): the hint, else the stage search with all the time left (at
        # n = 1000, 0.8, 10 s: its quarter found nothing, where approx's stage search found +26% in the limit)
        if hint is None and left > 0 and not hopeless:
            hint = _stage_search_hint(dag, budget, deadline)
            left = deadline - time.perf_counter()
        if hint is None:
            raise NoScheduleInTime(f"cpsat: {max(left, 0.0):.1f} s left of the {options.time_limit:g} s limit after "
                                   f"the baselines and the stage search, too little to build the CP-SAT model of "
                                   f"{dag.n} units (about {build:.1f} s at this load), and neither "
                                   f"found a schedule within {budget} bytes")
        hint.report = {"status": "time_limit", "cost": hint.cost(dag), "peak": int(hint.peak(dag)),
                       "seconds": time.perf_counter() - t0, "solver": "cp-sat", "hint": hint.strategy,
                       "cp_sat": f"not built (too little time left: {dag.n} units take about {build:.1f} s to "
                                 f"build at this load); the schedule is its hint, {hint.strategy}"}
        hint.strategy = "cpsat"
        return hint
    events = None if progress is None else (lambda d: progress(ProgressEvent(
        elapsed=time.perf_counter() - t0, phase="cp-sat", incumbent=d.get("incumbent"), bound=d.get("bound"),
        gap=d.get("gap"))))
    sched = solve_cpsat(dag, budget, dataclasses.replace(options, time_limit=left), hint=hint, progress=events)
    sched.report["seconds"] = time.perf_counter() - t0
    if hint is not None:
        sched.report["hint"] = hint.strategy
    return sched


NO_MODEL_STAGE_SEARCH = True
"""Where the ``cpsat`` strategy's model cannot be built within its whole time limit at this load (``build_seconds``
times MODEL_MARGIN above the limit: 1000 units at 10 s from a load of 1.7 per core), it takes the first baseline
that fits (quickest first; approx's BASELINE_FIRST_FIT) and gives the stage search from it, or from nothing, all
the time. Before, all eight baselines ran (their first evaluations 5.4 s at 1000 units under load), the stage
search had only what was left of a quarter of the limit where none fitted, and a fitting baseline was returned as
it was: Moccasin's n = 1000 at 0.8, `remc solve --strategy cpsat --time-limit 10` under load, no schedule."""


def _stage_search_hint(dag: DAG, budget: int, deadline: float | None,
                       start: Schedule | None = None) -> Schedule | None:
    """Where no baseline fits: the eviction pass and stage search (passes/evict.py) until ``deadline``, a schedule
    within budget for CP-SAT's hint, or None. Without a hint that fits, CP-SAT starts from checkpoint-all over
    the budget: MobileNetV2 b4 (test size) at 6.5 MiB found no schedule in 30 s, where approx's stage search
    found one at once."""
    from ..passes.evict import evict_search
    from ..passes.milp_model import clean
    found = evict_search(dag, budget, deadline=deadline, start=None if start is None else start.S)
    if found is None:
        return None
    R, S = clean(dag, found[0], found[1])
    sched = Schedule(R, S, strategy=f"stage search ({found[3] if start is None else 'from ' + str(start.strategy)})")
    return sched if not check(dag, R, S) and sched.peak(dag) <= budget else None


__all__ = ["load_cp_model", "CpSatOptions", "CpBound", "solve_cpsat", "cpsat_first", "cpsat_bound", "cpsat_phase", "cpsat_strategy"]
