"""Checkmate's optimal rematerialization: the MILP of paper eq. (9), solved with HiGHS (or Gurobi).

The model (built in ``passes/_lp.py``) is eq. (9) with the implied-constraint elimination of §4.7 and a
workspace term in the budget rows, in an equivalent form that solves faster: U substituted into dense
budget rows (or kept as a recurrence on large graphs), redundant (6b) dropped, (6c) disaggregated with
continuous FREE, and variable fixing and valid rows that keep an optimum. The search starts from the
cheapest of the given incumbent, checkpoint-all and LP rounding (passes/approx.py). The solver's schedule
is cleaned of useless entries and checked again in exact bytes; its dual bound is always reported.
"""
from __future__ import annotations

import math
import time
from typing import Callable

import numpy as np

from ..ir.errors import InfeasibleError, SolverError
from ..ir.dag import DAG
from ..ir.schedule import Schedule, check, checkpoint_all, memory_profile
from ._lp import (CheckmateModel, SolveResult, build_model, clean, least_budget_bound, simple_lower_bound,
                  solve_highs)

SOLVERS = ("highs", "gurobi")
WARM_SHARE = 0.8
"""Share of the MILP's time limit the LP-rounding warm start may use (on graphs whose root LP does not
finish in time, the warm start is the schedule the MILP returns)."""
MAX_RETRIES = 2
"""Re-solves with a lowered model budget when tolerances let a solution exceed the budget in exact bytes."""


def solve_milp(dag: DAG, budget: int, *, time_limit: float | None = None, threads: int | None = None,
               gap: float = 1e-4, incumbent: Schedule | None = None, solver: str = "highs",
               progress: Callable[[dict], None] | None = None, free_form: str = "tight",
               memory_form: str = "auto", warm_start: bool = True) -> Schedule:
    """The least-cost frontier-advancing schedule of ``dag`` whose peak fits ``budget`` bytes.

    ``time_limit`` (seconds), ``threads`` and ``gap`` (relative MIP gap) are passed to the solver.
    ``incumbent`` (e.g. the best baseline) starts the search when it is correct and fits; checkpoint-all
    is used when it is cheaper and fits, and with ``warm_start`` so is the approx strategy's schedule (LP
    rounding and its local search, passes/approx.py, with its default options), which HiGHS' own heuristics
    often do not match on training graphs. ``progress``
    receives dicts (incumbent, bound, gap, elapsed) in cost units while the solver runs. ``free_form``
    ("tight" or "paper", eq. 6c as printed) and ``memory_form`` ("auto", "dense" or "recurrence") choose
    equivalent formulations (see passes/_lp.py); "auto" is the recurrence here (the LP passes use dense
    rows): HiGHS' MIP presolve does not check its time limit inside some reductions on dense rows (small
    U-Net, 1.5M nonzeros: still presolving after 100 s under a 20 s limit; the recurrence model, 0.25M,
    was proven optimal in 13 s), and the recurrence MILP was faster on 6 of the 8 small zoo graphs.

    A solution that exceeds the budget in exact bytes (possible only through solver tolerances with a
    float memory unit) is never returned: the model is solved again with the budget lowered by the
    excess (at most MAX_RETRIES times; ``budget_retries`` in the report).

    The report holds status ("optimal", "time_limit", ...), objective and bound (cost units), gap,
    seconds, n_vars, n_cons, n_binaries, solver, bound_source (which proven bound is reported: "solver" (the
    MILP's dual bound), "lp" (the LP relaxation's, from the warm start) or "sum of costs" (each unit runs at
    least once)). On a time-out the best schedule found is returned with
    its gap. Raises InfeasibleError (with a proven lower bound on the least feasible budget) when no
    schedule fits, SolverError when the solver stops without any schedule or returns an unusable one.
    """
    if solver not in SOLVERS:
        raise SolverError(f"unknown MILP solver {solver!r}; choose one of {', '.join(SOLVERS)}")
    if budget < simple_lower_bound(dag):
        _raise_infeasible(dag, budget, threads, time_limit)
    start_time = time.perf_counter()
    seed, seed_note, lp_bound = _pick_incumbent(dag, budget, incumbent, warm_start, threads, time_limit)
    model_budget, retries, valid_bound = budget, 0, None
    while True:
        model = build_model(dag, model_budget, free_form=free_form,
                            memory_form="recurrence" if memory_form == "auto" else memory_form)
        start = None
        if seed is not None and model.representable(seed.R, seed.S):
            start = model.encode(seed.R, seed.S)
        cb = None if progress is None else _scaled_progress(progress, model.cost_unit)
        left = None if time_limit is None else max(time_limit - (time.perf_counter() - start_time), 1e-3 * time_limit)
        opts = dict(time_limit=left, threads=threads, gap=gap, start=start, progress=cb)
        res = _solve_gurobi(model, **opts) if solver == "gurobi" else solve_highs(model, integral=True, **opts)
        if valid_bound is None:  # the model at the true budget is a relaxation: its bound holds
            # so does the warm start's LP bound (where HiGHS' root LP did not finish), and the sum of all
            # costs (every unit is computed at least once)
            sources = {"solver": res.bound * model.cost_unit, "lp": lp_bound, "sum of costs": float(dag.cost.sum())}
            bound_source = max(sources, key=lambda k: sources[k])
            valid_bound = sources[bound_source]
        if res.status == "infeasible" and seed is None:
            if retries == 0:
                # with memory in exact units the solver proved that nothing fits this budget
                _raise_infeasible(dag, budget, threads, time_limit, proven=model.scale.exact)
            raise SolverError(f"the MILP at a budget lowered by {budget - model_budget} bytes (to absorb solver "
                              "tolerances) has no solution; no schedule within the exact budget was found")
        try:
            sched = _schedule_from(dag, budget, model, res, seed, time_limit, valid_bound)
            break
        except _OverBudget as over:
            if retries == MAX_RETRIES:
                raise SolverError(f"the MILP solution needs {over.peak} bytes, over the budget of {budget} bytes, "
                                  f"after {retries} re-solves with a lowered budget (memory unit "
                                  f"{model.scale.unit:g} bytes)") from None
            retries += 1
            model_budget -= over.peak - budget + math.ceil(model.scale.unit)
    sched.report.update(_sizes(model), solver=solver, incumbent=seed_note, free_form=free_form,
                        memory_form="recurrence" if (model.p >= 0).any() else "dense",
                        seconds=time.perf_counter() - start_time, solver_seconds=res.seconds, nodes=res.nodes,
                        budget=int(budget), peak=sched.peak(dag), memory_unit=model.scale.unit,
                        memory_exact=model.scale.exact, budget_retries=retries, bound_source=bound_source)
    return sched


class _OverBudget(Exception):
    def __init__(self, peak: int) -> None:
        super().__init__(peak)
        self.peak = peak


def _pick_incumbent(dag: DAG, budget: int, incumbent: Schedule | None, warm_start: bool, threads: int | None,
                    time_limit: float | None) -> tuple[Schedule | None, str, float]:
    """The cheapest of ``incumbent``, checkpoint-all and approx's schedule that is correct and fits, cleaned;
    and the LP relaxation's objective at ``budget`` when approx solved it (a lower bound), else -inf."""
    best, note, lp_bound = None, "none", -math.inf
    cands = [("given", incumbent), ("checkpoint-all", checkpoint_all(dag))]
    if warm_start and cands[1][1].peak(dag) > budget:
        seed, lp_bound = _approx_seed(dag, budget, threads, time_limit)
        cands.append(("approx", seed))
    for name, cand in cands:
        if cand is None:
            continue
        if check(dag, cand.R, cand.S) or memory_profile(dag, cand.R, cand.S).max() > budget:
            if name == "given":
                note = "given incumbent rejected (incorrect or over budget)"
            continue
        R, S = clean(dag, cand.R, cand.S)
        cost = float(R.sum(axis=0) @ dag.cost)
        if best is None or cost < best.cost(dag):
            best = Schedule(R, S, strategy=cand.strategy)
            note = f"{name} ({cand.strategy or 'unnamed'}, cost {cost:g})"
    return best, note, lp_bound


def _approx_seed(dag: DAG, budget: int, threads: int | None,
                 time_limit: float | None) -> tuple[Schedule | None, float]:
    """The approx strategy's schedule with its default options (LP rounding and local search; None when
    nothing fits in time), so that checkmate starts from what approx returns, and the best proven lower
    bound its LP at ``budget`` reached (cost units; -inf when none): the LP optimum, or the bound of an LP
    stopped at the time limit (``safe_dual_bound``)."""
    from .approx import LpUnfinished, solve_approx

    left = None if time_limit is None else WARM_SHARE * time_limit
    try:
        sched = solve_approx(dag, budget, threads=threads, time_limit=left)
        return sched, float(sched.report.get("lp_bound", -math.inf))
    except LpUnfinished as e:  # out of time: keep what its LP proved
        return None, e.lp_bound
    except (InfeasibleError, SolverError):  # nothing fits
        return None, -math.inf


def _schedule_from(dag: DAG, budget: int, model: CheckmateModel, res: SolveResult, seed: Schedule | None,
                   time_limit: float | None, bound: float) -> Schedule:
    """The solver's schedule (or ``seed`` when it has none), cleaned and checked in exact bytes, with
    status, objective, ``bound`` (cost units; valid for the exact problem) and gap."""
    if res.x is None:
        if seed is None:
            raise SolverError(f"the MILP solver stopped ({res.status}) with no feasible schedule found within "
                              f"{res.seconds:.1f} s" + (f" (time limit {time_limit} s)" if time_limit else ""))
        R, S, status = seed.R, seed.S, f"{res.status} (solver found no schedule; incumbent returned)"
    else:
        R, S = clean(dag, *model.decode(res.x))
        status = res.status
    errs = check(dag, R, S)
    if errs:
        raise SolverError(f"the MILP solution is not a correct schedule: {errs[0]}")
    peak = int(memory_profile(dag, R, S).max())
    if peak > budget:
        raise _OverBudget(peak)
    sched = Schedule(R, S, strategy="checkmate")
    cost = sched.cost(dag)
    if not math.isfinite(bound) or bound > cost * (1 + 1e-6) + 1e-9:
        # no bound, or one the schedule in hand contradicts (numerical trouble): claim nothing
        bound, gap = -math.inf, math.inf
        status = status if res.x is not None else f"{res.status} (solver bound unusable; incumbent returned)"
    else:
        bound = min(bound, cost)
        gap = (cost - bound) / cost if cost > 0 else 0.0
    sched.report = dict(status=status, objective=cost, bound=bound, gap=gap)
    return sched


def _sizes(model: CheckmateModel) -> dict:
    return dict(n_vars=model.num_col, n_cons=model.num_row, n_binaries=int(model.integral.sum()),
                n_nonzeros=int(model.A.nnz))


def _scaled_progress(progress: Callable[[dict], None], unit: float) -> Callable[[dict], None]:
    def forward(d: dict) -> None:
        progress(dict(d, incumbent=d["incumbent"] * unit, bound=d["bound"] * unit))
    return forward


def _raise_infeasible(dag: DAG, budget: int, threads: int | None, time_limit: float | None = None,
                      proven: bool = False) -> None:
    """InfeasibleError with a proven lower bound on the least feasible budget; ``proven``: the MILP showed
    that no schedule fits ``budget`` itself, so the least feasible budget is above it."""
    lb = least_budget_bound(dag, threads=threads, time_limit=time_limit)
    if proven:
        lb = max(lb, budget + 1)
    peak = checkpoint_all(dag).peak(dag)
    raise InfeasibleError(f"no schedule of the {dag.n} units fits a budget of {budget} bytes: every schedule "
                          f"needs at least {lb} bytes (proven lower bound); checkpoint-all needs {peak}", lb)


def _solve_gurobi(model: CheckmateModel, *, time_limit: float | None, threads: int | None, gap: float,
                  start: np.ndarray | None, progress: Callable[[dict], None] | None) -> SolveResult:
    """The same model solved by Gurobi (needs gurobipy and a licence that covers its size)."""
    try:
        import gurobipy as gp
        from gurobipy import GRB
    except ImportError:
        raise SolverError("gurobipy is not installed; pip install remc[gurobi]") from None
    try:
        with gp.Env(params={"OutputFlag": 0}) as env, gp.Model("checkmate", env=env) as m:
            return _gurobi_run(m, model, gp, GRB, time_limit, threads, gap, start, progress)
    except gp.GurobiError as e:
        if e.errno == 10010:
            raise SolverError(f"Gurobi's licence is size-limited and this model has {model.num_col} variables and "
                              f"{model.num_row} constraints (the pip licence allows 2000 of each): install a full "
                              "Gurobi licence or use solver='highs'") from None
        raise SolverError(f"Gurobi failed: {e}") from None


def _gurobi_run(m, model: CheckmateModel, gp, GRB, time_limit: float | None, threads: int | None, gap: float,
                start: np.ndarray | None, progress: Callable[[dict], None] | None) -> SolveResult:
    """Load ``model`` into Gurobi model ``m``, optimize, and read the result back."""
    vtype = np.where(model.integral, GRB.BINARY, GRB.CONTINUOUS)
    x = m.addMVar(model.num_col, lb=model.col_lower, ub=model.col_upper, obj=model.col_cost, vtype=vtype)
    lo, hi = model.row_lower, model.row_upper
    sense = np.where(lo == hi, GRB.EQUAL, np.where(np.isfinite(hi), GRB.LESS_EQUAL, GRB.GREATER_EQUAL))
    m.addMConstr(model.A.tocsr(), x, sense, np.where(np.isfinite(hi), hi, lo))
    if time_limit is not None:
        m.Params.TimeLimit = float(time_limit)
    if threads:
        m.Params.Threads = int(threads)
    m.Params.MIPGap = float(gap)
    if start is not None:
        x.Start = start
    m.optimize(None if progress is None else _gurobi_callback(progress, GRB))
    status = {GRB.OPTIMAL: "optimal", GRB.TIME_LIMIT: "time_limit", GRB.INFEASIBLE: "infeasible",
              GRB.INTERRUPTED: "interrupted", GRB.INF_OR_UNBD: "infeasible"}.get(m.Status, f"gurobi_{m.Status}")
    has = m.SolCount > 0
    return SolveResult(status, np.asarray(x.X) if has else None, m.ObjVal if has else math.inf,
                       m.ObjBound if status != "infeasible" else math.inf, m.Runtime, int(m.NodeCount))


def _gurobi_callback(progress: Callable[[dict], None], GRB) -> Callable:
    def cb(m, where) -> None:
        if where == GRB.Callback.MIP:
            inc, bnd = m.cbGet(GRB.Callback.MIP_OBJBST), m.cbGet(GRB.Callback.MIP_OBJBND)
            gap = abs(inc - bnd) / abs(inc) if inc not in (0, GRB.INFINITY) else math.inf
            progress(dict(incumbent=inc, bound=bnd, gap=gap, elapsed=m.cbGet(GRB.Callback.RUNTIME)))
    return cb
