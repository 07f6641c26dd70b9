"""Checkmate's optimal rematerialization: the MILP of paper eq. (9), solved with HiGHS (or Gurobi).

The model (built in ``passes/milp_model.py``) is eq. (9) with the implied-constraint elimination of §4.7 and a
workspace term in the budget rows, in an equivalent form that solves faster: U substituted into dense
budget rows (or kept as a recurrence on large graphs), redundant (6b) dropped, (6c) disaggregated with
continuous FREE, and variable fixing and valid rows that keep an optimum. The search starts from the
cheapest of the given incumbent, checkpoint-all and LP rounding (passes/approx.py). The solver's schedule
is cleaned of useless entries and checked again in exact bytes; its dual bound is always reported.
"""
from __future__ import annotations

import math

from ..ir.dag import DAG
from ..ir.errors import InfeasibleError, NoScheduleInTime, SolverError
from ..ir.report import SolveReport, gap_of, within_gap
from ..ir.schedule import Schedule, check, checkpoint_all, stage_peaks
from .milp_model import (
    CheckmateModel,
    build_model,
    clean,
    cost_floor_for,
    least_budget_bound,
    model_columns,
    simple_lower_bound,
)
from .options import ApproxOptions, CheckmateOptions
from .solver_api import Clock, Progress, ProgressEvent, SolverBackend, SolveResult, load_per_core

MAX_RETRIES = 2
"""Re-solves with a lowered model budget when tolerances let a solution exceed the budget in exact bytes."""
MAX_MILP_COLUMNS = 1_000_000
"""Largest MILP checkmate builds; above it the time goes to approx (its LP, or its local search) alone."""
MIN_MILP_SECONDS = 1.0
"""The MILP is not started with less time than this left."""
BUILD_SECONDS_PER_COLUMN = 6e-5
"""Seconds per column that building the MILP and handing it to the solver take, about, on idle cores (as the
feasibility MILP's, passes/feasible.py); times the load per core, the MILP is not started with less time left
(Moccasin's n=500 at 0.8, `remc solve --strategy checkmate --time-limit 120` at a load of 10 on 2 cores: the MILP
started with 4.6 s left and ran 20 s, the process 144-148 s)."""


def solve_milp(dag: DAG, budget: int, options: CheckmateOptions | None = None, *, mip: SolverBackend,
               lp: SolverBackend, incumbent: Schedule | None = None, progress: Progress | None = None,
               clock: Clock | None = None, bounds: dict[str, float] | None = None) -> Schedule:
    """The least-cost frontier-advancing schedule of ``dag`` whose peak fits ``budget`` bytes (MILP solved by
    backend ``mip``; approx's LP by ``lp``), anytime: the best schedule in hand when time runs out.

    Portfolio, all within ``options.time_limit`` (or ``clock``, started by the caller, who may have spent
    some of it on baselines): ``incumbent`` (e.g. the best baseline) and checkpoint-all when they fit; with
    ``warm_start``, the approx strategy's schedule (LP rounding and its local search, passes/approx.py,
    refine time at most ``approx_share`` of the limit; it starts from the incumbent), which HiGHS' own
    heuristics often do not match on training graphs; then the MILP with the time left, started from the
    cheapest of those. The cheapest schedule of all is returned, so checkmate is never worse than what
    approx reached inside it.

    ``options.gap`` is a relative gap on the recomputation overhead (cost minus computing every unit
    once): the MILP stops there, and status "optimal" means the proven gap (report ``gap``, measure
    ``gap_measure``) is within it. ``free_form`` ("tight" or "paper", eq. 6c as printed) and
    ``memory_form`` ("auto", "dense" or "recurrence") choose equivalent formulations (see
    passes/milp_model.py); "auto" is the recurrence here (the LP passes use dense rows): HiGHS' MIP
    presolve does not check its time limit inside some reductions on dense rows (small U-Net, 1.5M
    nonzeros: still presolving after 100 s under a 20 s limit; the recurrence model, 0.25M, was proven
    optimal in 13 s), and the recurrence MILP was faster on 6 of the 8 small zoo graphs.

    A solution that exceeds the budget in exact bytes (possible only through solver tolerances with a
    float memory unit) is never returned: the model is solved again with the budget lowered by the
    excess (at most MAX_RETRIES times; ``budget_retries`` in the report). The report's ``bound`` is the
    best proven one and ``bound_source`` says which: "solver" (the MILP's dual bound), "lp" (approx's LP
    relaxation), "sum of costs" (each unit runs at least once) or a name of ``bounds`` (lower bounds
    proven by the caller, e.g. CP-SAT's; when one already proves ``seed`` within the gap, neither approx
    nor the MILP runs). Raises InfeasibleError (with a proven
    lower bound on the least feasible budget) when no schedule fits, SolverError when no schedule was found
    or the solver returned an unusable one.
    """
    o = options or CheckmateOptions()
    clock = clock or Clock(o.time_limit)
    if budget < simple_lower_bound(dag):
        raise_infeasible(dag, budget, lp, o.threads, clock.left())
    base = float(dag.cost.sum())
    seed, seed_note = _pick(dag, budget, [("given", incumbent), ("checkpoint-all", checkpoint_all(dag))])
    lp_bound, approx_note = -math.inf, "not run"
    given = dict(bounds or {})
    proven = seed is not None and within_gap(seed.cost(dag), max(given.values(), default=base), base, o.gap, float(dag.cost.max()))
    if o.warm_start and not proven and (seed is None or seed.cost(dag) > base * (1 + 1e-12)):
        sched, lp_bound, approx_note = _approx_seed(dag, budget, o, lp, seed, progress, clock)
        if sched is not None:
            seed, seed_note = _pick(dag, budget, [("incumbent", seed), ("approx", sched)])
    sources = {"lp": lp_bound, "sum of costs": base, **given}
    extras: dict = dict(incumbent=seed_note, approx=approx_note, solver=o.solver)
    res, model, retries = None, None, 0
    if seed is not None and seed.cost(dag) <= base * (1 + 1e-12):
        extras["milp"] = "not needed (nothing is recomputed)"
    elif proven:
        extras["milp"] = f"not needed (the gap is closed by the {max(given, key=lambda k: given[k])} bound)"
    elif model_columns(dag) > MAX_MILP_COLUMNS:
        extras["milp"] = f"not built ({model_columns(dag)} columns > {MAX_MILP_COLUMNS})"
        if o.window and seed is not None and not clock.expired():
            # eq. (9) on windows of stages instead, from the best schedule (passes/window.py)
            from .window import window_search  # (imported where it runs: see backends/strategies.py)
            ws = window_search(dag, budget, seed.R, seed.S, mip, deadline=clock.deadline, threads=o.threads)
            extras["window_search"] = ws.note()
            if ws.cost < seed.cost(dag):
                seed, seed_note = Schedule(ws.R, ws.S, strategy="windows"), f"{seed_note}, windows"
    elif (left := clock.left()) is not None and left < max(MIN_MILP_SECONDS, BUILD_SECONDS_PER_COLUMN *
                                                               model_columns(dag) * load_per_core()):
        extras["milp"] = "not started (time limit reached)" if left < MIN_MILP_SECONDS else \
            f"not started ({left:.1f} s left, too little to build its {model_columns(dag)} columns)"
    else:
        milp_sched, res, model, retries, solver_bound = _run_milp(dag, budget, o, mip, lp, seed, progress, clock)
        sources["solver"] = solver_bound
        extras.update(milp=res.status, solver_seconds=res.seconds, nodes=res.nodes, budget_retries=retries,
                      free_form=o.free_form, memory_form="recurrence" if (model.p >= 0).any() else "dense",
                      memory_unit=model.scale.unit, memory_exact=model.scale.exact,
                      cost_floor=model.cost_floor, cost_floor_correction=model.bound_correction * model.cost_unit,
                      **_sizes(model))
        if milp_sched is not None and (seed is None or milp_sched.cost(dag) < seed.cost(dag)):
            seed = milp_sched
    if seed is None:
        if res is not None and model is not None and res.status == "infeasible":
            raise_infeasible(dag, budget, lp, o.threads, clock.left(), proven=model.scale.exact)
        raise NoScheduleInTime(f"checkmate found no schedule within {budget} bytes in {clock.elapsed():.1f} s"
                               + (f" (time limit {o.time_limit:g} s)" if o.time_limit else "")
                               + f"; the least budget for this order is at least {simple_lower_bound(dag)} bytes "
                               "(proven lower bound)")
    return _finish(dag, budget, seed, base, sources, extras, o, clock, res)


def _finish(dag: DAG, budget: int, seed: Schedule, base: float, sources: dict, extras: dict,
            o: CheckmateOptions, clock: Clock, res: SolveResult | None) -> Schedule:
    """``seed`` (cleaned, checked) as checkmate's schedule with its typed report."""
    R, S = clean(dag, seed.R, seed.S)
    sched = Schedule(R, S, strategy="checkmate")
    cost = sched.cost(dag)
    sources = {k: v for k, v in sources.items() if math.isfinite(v) and v <= cost * (1 + 1e-6) + 1e-9}
    source = max(sources, key=lambda k: sources[k])
    rep = SolveReport(cost=cost, peak=sched.peak(dag), bound=min(sources[source], cost), solver=o.solver,
                      bound_source=source, seconds=clock.elapsed(), extras=extras)
    rep.set_gap(base)
    if rep.gap is not None and (rep.gap <= o.gap + 1e-12 or within_gap(cost, rep.bound, base, o.gap, float(dag.cost.max()))):
        rep.status = "optimal"
    elif clock.expired() or (res is not None and res.status == "time_limit") \
            or str(extras.get("milp", "")).startswith("not started"):  # too little time left to start it
        rep.status = "time_limit"
    else:
        rep.status = "feasible"
    rep.extras.update({"budget": int(budget), "from": seed.strategy or "unnamed"})
    sched.report = rep
    return sched


def _run_milp(dag: DAG, budget: int, o: CheckmateOptions, mip: SolverBackend, lp: SolverBackend,
              seed: Schedule | None, progress: Progress | None, clock: Clock):
    """The MILP from ``seed`` with the time left: (schedule or None, result, model, retries, proven bound)."""
    model_budget, retries, valid_bound = budget, 0, -math.inf
    # raised tiny costs may weaken the proven bound by at most a tenth of the gap asked for (on the
    # overhead of the schedule in hand), so they cannot stand between the solver's proof and "optimal"
    overhead = (seed.cost(dag) - float(dag.cost.sum())) if seed is not None else float(dag.cost.sum())
    floor = cost_floor_for(dag, 0.1 * max(o.gap, 1e-9) * max(overhead, 0.0))
    while True:
        model = build_model(dag, model_budget, free_form=o.free_form, cost_floor=floor,
                            memory_form="recurrence" if o.memory_form == "auto" else o.memory_form)
        start = None
        if seed is not None and model.representable(seed.R, seed.S):
            start = model.encode(seed.R, seed.S)
        cb = None if progress is None else _scaled_progress(progress, model, clock)
        left = clock.left()
        try:
            res = mip.solve(model, integral=True, time_limit=None if left is None else max(left, 1e-3),
                            threads=o.threads, gap=o.gap, start=start, progress=cb)
        except SolverError as e:
            if seed is None:
                raise
            return None, SolveResult(f"error ({e})", None, math.inf, -math.inf, 0.0), model, retries, valid_bound
        if retries == 0:  # the model at the true budget is a relaxation: its bound holds
            valid_bound = model.bound_of(res.bound) if res.status != "infeasible" else math.inf
        if res.x is None:
            return None, res, model, retries, valid_bound
        try:
            return _schedule_from(dag, budget, model, res), res, model, retries, valid_bound
        except _OverBudget as over:
            if retries == MAX_RETRIES or clock.expired():
                return None, res, model, retries, valid_bound
            retries += 1
            model_budget -= over.peak - budget + math.ceil(model.scale.unit)


def _pick(dag: DAG, budget: int, cands: list) -> tuple[Schedule | None, str]:
    """The cheapest of ``cands`` ((name, Schedule or None)) that is correct and fits, cleaned; and a note."""
    best, note = None, "none"
    for name, cand in cands:
        if cand is None:
            continue
        if check(dag, cand.R, cand.S) or stage_peaks(dag, cand.R, cand.S).max() > budget:
            if name == "given":
                note = "given incumbent rejected (incorrect or over budget)"
            continue
        R, S = clean(dag, cand.R, cand.S)
        cost = float(R.sum(axis=0) @ dag.cost)
        if best is None or cost < best.cost(dag):
            best = Schedule(R, S, strategy=cand.strategy)
            note = f"{name} ({cand.strategy or 'unnamed'}, cost {cost:g})"
    return best, note


def _approx_seed(dag: DAG, budget: int, o: CheckmateOptions, lp: SolverBackend, seed: Schedule | None,
                 progress: Progress | None, clock: Clock) -> tuple[Schedule | None, float, str]:
    """approx's schedule (None when it has none in time), the best proven lower bound its LP at ``budget``
    reached (cost units; -inf when none), and a note. It shares the clock; its local search gets at most
    ``approx_share`` of the time limit (30 s without one)."""
    share = 30.0 if o.time_limit is None else max(o.approx_share * o.time_limit, 1e-3)
    opts = ApproxOptions(threads=o.threads, refine_seconds=min(30.0, share))
    from .approx import LpUnfinished, solve_approx  # (imported where it runs: see backends/strategies.py)
    try:
        sched = solve_approx(dag, budget, opts, lp=lp, incumbent=seed, progress=progress, clock=clock)
        rep = sched.report
        return sched, float(rep.extras.get("lp_bound", -math.inf)), f"{rep.status}, cost {rep.cost:g}"
    except LpUnfinished as e:  # out of time: keep what its LP proved
        return None, e.lp_bound, str(e)
    except (InfeasibleError, SolverError) as e:  # rounding and repair found nothing: the MILP may
        return None, -math.inf, str(e)


def _schedule_from(dag: DAG, budget: int, model: CheckmateModel, res: SolveResult) -> Schedule:
    """The solver's schedule, cleaned and checked in exact bytes (_OverBudget when it exceeds the budget)."""
    assert res.x is not None
    R, S = clean(dag, *model.decode(res.x))
    errs = check(dag, R, S)
    if errs:
        raise SolverError(f"the MILP solution is not a correct schedule: {errs[0]}")
    peak = int(stage_peaks(dag, R, S).max())
    if peak > budget:
        raise _OverBudget(peak)
    return Schedule(R, S, strategy="checkmate")


class _OverBudget(Exception):
    def __init__(self, peak: int) -> None:
        super().__init__(peak)
        self.peak = peak


def _sizes(model: CheckmateModel) -> dict:
    return dict(n_vars=model.num_col, n_cons=model.num_row, n_binaries=int(model.integral.sum()),
                n_nonzeros=int(model.A.nnz))


def _scaled_progress(progress: Progress, model: CheckmateModel, clock: Clock):
    """A backend progress callback (model units) forwarding ProgressEvents in cost units."""
    def forward(incumbent: float, bound: float, elapsed: float) -> None:
        inc = model.cost_of(incumbent) if math.isfinite(incumbent) else None
        bnd = model.bound_of(bound) if math.isfinite(bound) else None
        gap = None if inc is None or bnd is None else gap_of(inc, bnd, float(model.dag.total_cost))
        progress(ProgressEvent(clock.elapsed(), "milp", inc, bnd, gap))
    return forward


def raise_infeasible(dag: DAG, budget: int, lp: SolverBackend, threads: int | None,
                      time_limit: float | None = None, proven: bool = False) -> None:
    """InfeasibleError with a proven lower bound on the least feasible budget; ``proven``: the MILP showed
    that no schedule fits ``budget`` itself (the MILP, or the zero-objective MILP of passes/feasible.py, is
    infeasible), so the least feasible budget is above it."""
    lb = least_budget_bound(dag, lp, threads=threads, time_limit=time_limit)
    if proven:
        lb = max(lb, budget + 1)
    peak = checkpoint_all(dag).peak(dag)
    raise InfeasibleError(f"no schedule of the {dag.n} units fits a budget of {budget} bytes: every schedule "
                          f"needs at least {lb} bytes (proven lower bound); checkpoint-all needs {peak}", lb)
