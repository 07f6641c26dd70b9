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
import math
import os
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..ir.dag import DAG
from ..ir.errors import InfeasibleError, SolverError
from ..ir.schedule import Schedule, checkpoint_all, solve_rs
from ..passes.solver_api import Progress, ProgressEvent


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
    presolve: bool | None = None
    """CP-SAT's presolve; None: on up to PRESOLVE_UNITS units. Measured on 2 loaded cores, 4 workers, 60 s:
    Moccasin's random layered n=100 at 0.8 was proven optimal with it (+2.30%) and ended at +5.3% without;
    MobileNet (185 units) at 0.8 spent the whole limit in presolve with it and reached +0.37% without."""


PRESOLVE_UNITS = 150


def _event(t: int, i: int) -> int:
    return t * (t + 1) // 2 + i


def _stage_of(e: int) -> int:
    t = int((math.isqrt(8 * e + 1) - 1) // 2)
    return t


def _int_costs(cost: np.ndarray) -> tuple[list[int], float]:
    """Integer costs for the objective and the factor they were multiplied by."""
    if np.all(cost == np.round(cost)) and cost.max(initial=0) < 2 ** 40:
        return [int(c) for c in cost], 1.0
    top = float(cost.max(initial=0))
    scale = 1e6 / top if top > 0 else 1.0
    return [int(round(c * scale)) for c in cost], scale


def solve_cpsat(dag: DAG, budget: int, options: CpSatOptions = CpSatOptions(), *,
                hint: Schedule | None = None, progress: Callable[[dict], None] | None = None) -> Schedule:
    """The cheapest schedule of ``dag`` within ``budget`` bytes that the CP-SAT model finds in the time limit.

    ``hint`` (a schedule that fits, e.g. approx's) is given to CP-SAT as a whole starting solution; units
    that it computes more often than ``copies`` get as many instances as it uses; the hint is returned
    when CP-SAT finds nothing cheaper. Without a hint that fits, on graphs above PRESOLVE_UNITS the model
    starts from checkpoint-all with the memory capacity a variable above the budget, and minimizes its
    excess before the cost (the excess weighs more than any cost), as Moccasin's phase 1 does, in one
    search; on smaller graphs (presolve on) the budget is a hard capacity and no hint is given (measured:
    random layered n=100 at 0.8 was proven optimal in 34 s that way, and ended at +5.0% from
    checkpoint-all's excess). Raises InfeasibleError when CP-SAT proves that no schedule with at
    most ``copies`` computations per unit fits, SolverError when it stops without a schedule.
    """
    try:
        from ortools.sat.python import cp_model
    except ImportError:
        raise SolverError("the CP-SAT model needs OR-Tools: pip install 'remc[cpsat]'") from None

    t0 = time.perf_counter()
    n = dag.n
    least = dag.constant + max(int(dag.mem[v] + dag.workspace[v] + dag.mem[dag.preds[v]].sum()) for v in range(n))
    if budget < least:  # every schedule computes each unit once, with its inputs resident
        raise InfeasibleError(f"no schedule fits {budget} bytes: one unit needs {least} bytes with its inputs "
                              f"resident (proven lower bound)", least)
    cap = budget - dag.constant
    g = math.gcd(*(int(x) for x in dag.mem), *(int(x) for x in dag.workspace), 0) or 1
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
    horizon = _event(n - 1, n - 1) + 1

    m = cp_model.CpModel()
    pres, start, end = [], [], []
    ivs, dem = [], []
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
            size = m.NewIntVar(1, horizon, f"l{v}_{c}")
            iv = m.NewOptionalIntervalVar(s, size, e, p, f"i{v}_{c}")
            if mem[v]:
                ivs.append(iv)
                dem.append(mem[v])
            if ws[v]:
                ivs.append(m.NewOptionalFixedSizeIntervalVar(s, 1, p, f"w{v}_{c}"))
                dem.append(ws[v])
            pv.append(p)
            sv.append(s)
            ev.append(e)
        pres.append(pv)
        start.append(sv)
        end.append(ev)
    top = max(cap, -(-(hint.peak(dag) - dag.constant) // g)) if soft else cap
    level = m.NewIntVar(cap, top if soft else cap, "level")
    m.AddCumulative(ivs, dem, level)

    serve: dict[tuple[int, int, int, int], cp_model.IntVar] = {}
    for u, v in dag.edges.tolist():
        for j in range(copies[v]):
            lits = []
            for i in range(copies[u]):
                x = m.NewBoolVar(f"x{u}_{v}_{i}_{j}")
                m.AddImplication(x, pres[u][i])
                m.Add(start[u][i] < start[v][j]).OnlyEnforceIf(x)
                m.Add(end[u][i] > start[v][j]).OnlyEnforceIf(x)
                serve[u, v, i, j] = x
                lits.append(x)
            if j == 0:
                m.AddBoolOr(lits)
            else:
                m.AddBoolOr(lits).OnlyEnforceIf(pres[v][j])
    weight = sum(costs[v] * (copies[v] - 1) for v in range(n)) + 1  # one unit of excess outweighs any cost
    m.Minimize(sum(costs[v] * p for v in range(n) for p in pres[v][1:]) + weight * (level - cap))
    fixed = sum(costs)

    if instances is not None:
        _add_hint(m, instances, pres, start, end, serve, copies)
        m.AddHint(level, top)

    solver = cp_model.CpSolver()
    prm = solver.parameters
    if options.time_limit is not None:
        prm.max_time_in_seconds = max(0.1, options.time_limit - (time.perf_counter() - t0))
    prm.num_workers = options.threads or os.cpu_count() or 1
    prm.relative_gap_limit = options.gap
    prm.random_seed = options.seed
    prm.cp_model_presolve = presolve
    status = solver.Solve(m)
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
        raise SolverError(f"CP-SAT found no schedule within the budget in the time limit{least}")
    if not found and not fits:
        raise SolverError(f"CP-SAT stopped with status {name} and no schedule")
    if not found:
        return _report(Schedule(hint.R, hint.S, strategy="cpsat"), dag, t0, name, None, None, False, options,
                       m)

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
    sched = Schedule(R, S, strategy="cpsat")
    peak = sched.peak(dag)
    if peak > budget:
        raise SolverError(f"CP-SAT's schedule needs {peak} bytes in remc's accounting, above the budget of "
                          f"{budget}: the model and the accounting disagree (a bug)")
    if fits and hint.cost(dag) < sched.cost(dag):
        sched = Schedule(hint.R, hint.S, strategy="cpsat")  # CP-SAT stopped at a worse one than its hint
    exact = all(copies[v] >= n - v or dag.no_recompute[v] for v in range(n))
    bound_c = (fixed + solver.BestObjectiveBound()) / scale
    sched = _report(sched, dag, t0, name, bound_c, (fixed + solver.ObjectiveValue()) / scale, exact, options, m)
    if status == cp_model.OPTIMAL:  # proven for the model: for every schedule only when it is exact
        sched.report["status"] = "optimal" if exact else f"optimal (C={options.copies})"
    if progress is not None:
        progress({"incumbent": sched.cost(dag), "bound": bound_c, "gap": sched.report["gap"],
                  "elapsed": sched.report["seconds"]})
    return sched


def _report(sched: Schedule, dag: DAG, t0: float, name: str, bound_c: float | None, cp_objective: float | None,
            exact: bool, options: CpSatOptions, m) -> Schedule:
    """Fill the solver report: the bound of the problem (the CP bound when the model is exact, else each
    unit computed once) and the CP model's own bound for schedules within ``copies`` computations."""
    cost = sched.cost(dag)
    bound = bound_c if exact and bound_c is not None else dag.total_cost
    sched.report = {
        "status": "time_limit", "objective": cost, "cp_objective": cp_objective, "bound": bound,
        "gap": (cost - bound) / cost if cost else 0.0, "bound_c": bound_c,
        "gap_c": None if bound_c is None else ((cost - bound_c) / cost if cost else 0.0),
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


def cpsat_strategy(dag: DAG, budget: int | None, options: CpSatOptions, progress: Progress | None) -> Schedule:
    """The 'cpsat' strategy as the registry (backends/strategies.py) calls it. The cheapest baseline
    schedule that fits is the hint (looked for in at most a quarter of the time limit), and is returned when
    CP-SAT finds nothing better in time; its search counts against the time limit (``options.time_limit``
    is the whole strategy's)."""
    from ..passes.strategies import best_baseline

    assert budget is not None
    t0 = time.perf_counter()
    deadline = None if options.time_limit is None else t0 + options.time_limit
    hint = best_baseline(dag, budget, deadline=None if deadline is None else t0 + options.time_limit / 4)
    left = None if deadline is None else max(1.0, deadline - time.perf_counter())
    events = None if progress is None else (lambda d: progress(ProgressEvent(
        elapsed=time.perf_counter() - t0, phase="cp-sat", incumbent=d.get("incumbent"), bound=d.get("bound"),
        gap=d.get("gap"))))
    sched = solve_cpsat(dag, budget, dataclasses.replace(options, time_limit=left), hint=hint, progress=events)
    sched.report["seconds"] = time.perf_counter() - t0
    if hint is not None:
        sched.report["hint"] = hint.strategy
    return sched


__all__ = ["CpSatOptions", "solve_cpsat", "cpsat_strategy"]
