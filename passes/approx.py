"""Checkmate's approximation (paper §5): LP relaxation of eq. (9) and two-phase rounding (Algorithm 2).

The LP is the MILP model of ``passes/milp_model.py`` with integrality off, solved at the reduced budget
(1 - eps) * budget. Its checkpoint matrix S* is rounded (deterministically over a set of thresholds, or
by Bernoulli sampling), no-recompute units are pinned, R is solved optimally for the rounded S (both
correction loops of Algorithm 2, ``solve_rs``; a no-recompute unit's checkpoints after a gap are dropped
first, since rejoining them would recompute it), and useless entries are dropped (``clean``, which never
raises memory or cost). Each candidate is checked against the true budget in exact bytes; the cheapest
that fits is returned. The LP at the true budget is also solved: its objective is a lower bound on the
optimal cost and is reported as ``lp_bound``.

Beyond the paper, ``refine`` (on by default) runs a local search on S (passes/refine.py) from the cheapest
rounded schedule within budget and from the cheapest rounded schedule of all, repaired to fit: on coarse
units entry-wise rounding loses much of what the LP knew (VGG16 at 0.8 of its peak: LP within 0.01% of the
optimum, best rounding 8% above it). The report keeps both: ``rounded_cost`` (Algorithm 2 alone; None when
no rounded schedule fit) and the returned cost; ``rule`` says where the schedule came from.
"""
from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..ir.dag import DAG
from ..ir.errors import InfeasibleError, NoScheduleInTime, SolverError
from ..ir.report import SolveReport, gap_of
from ..ir.schedule import Schedule, check, checkpoint_all, pin_no_recompute, solve_rs, stage_peaks
from .bounds import bound_deadline, gap_bound
from .evict import EvictSearch, evict_search
from .feasible import MAX_FEASIBLE_COLUMNS, ExactSearch, find_feasible
from .feasible import build_seconds as feasible_build_seconds
from .milp_model import build_model, clean, least_budget_bound, model_columns, simple_lower_bound
from .options import (  # noqa: F401 (re-exported)
    EPS_LIST,
    FEASIBLE_SHARE,
    REFINE_SECONDS,
    ROUNDINGS,
    STAGE_SEARCH_SHARE,
    ApproxOptions,
)
from .refine import Refiner
from .solver_api import Clock, Progress, ProgressEvent, SolverBackend, load_per_core, slowdown
from .window import window_applies, window_search

MAX_LP_COLUMNS = 250_000
"""Largest LP relaxation (columns of eq. 9 after variable fixing) approx builds; above it the LP does not fit
the memory and time of a small machine (random layered n=1000, 1.8M columns: out of memory at 7.3 GB; n=500,
450k columns: 1.8 GB RSS and unsolved in 120 s on 2 cores, its schedules the repair's +12-15%; n=250: 110k),
and approx relies on the eviction pass and stage search, with the retention-gap bound as its proven bound."""
LP_BUILD_SECONDS_PER_COLUMN = 4e-5
"""Seconds per column that building the LP and handing it to the solver's process take, at least (layered
n=250, 110k columns: 3.2 s on a loaded machine, not interruptible); with less time left the LP is not
started (it would overrun the time limit by that much: 33.4 s for a 30 s limit)."""
LP_LOAD_MARGIN = 1.5
"""``lp_build_seconds``' factor over LP_BUILD_SECONDS_PER_COLUMN times the load per core: Moccasin's n=250 at 0.9
(110k columns), `remc solve --strategy approx --time-limit 30` at a load of 8.5 on 2 cores: the build took 27.8 s
(2.5e-4 s a column) with 12 s left, and the process ran 55 s."""


STAGE_BUILD_SECONDS_PER_UNIT = 1e-4
"""CPU seconds per unit of one ``stagesearch.StageState`` build (every row; not interruptible): 0.23 s at 2277 units
(ResNet50 fine, results/time21), 0.86 s of wall a build at 1730 units (GPT-2 fine) at a load of 26 on 2 cores (seven
builds in 6.0 s). Times the slowdown (``solver_api.slowdown``: the load per core, or the solve's measured wall per
CPU second where higher)."""
STAGE_SEARCH_BUILDS = 3
"""Builds' worth of work (``stage_build_seconds``) the stage search from a schedule in hand needs before it can return
a better one: the start's rows, an eviction setting's pass (about two builds' rows) and the cleaning and check of
its schedule. With less time left it is not started: it would return the start past the limit (ResNet50 fine from
the ap-sqrtn baseline, a 7 s limit beside two busy loops: started with 2.2 s left, ended 1.8 s past the limit, with
the baseline)."""
SCIPY_SPARSE_SECONDS = 0.4
"""CPU seconds (0.38-0.40 here, results/time21) of the first import of scipy.sparse.linalg (the rows' sparse solve, above
stagesearch.ROW_SPARSE_FROM units): 4.3 s at a load of 26 on 2 cores."""


def stage_build_seconds(n: int, clock: Clock | None = None, builds: int = 1) -> float:
    """About how long the stage search's first ``StageState`` build at ``n`` units takes now (``load_per_core``),
    with the import of scipy.sparse.linalg where it is not imported yet. approx does not start its stage search from
    a schedule in hand with less time left than this: the search would return that schedule after the build, past
    the limit (GPT-2 fine at 0.82 with a 5 s limit at a load of 26: started with ~0 s left, ended at 11.5 s)."""
    import sys

    from .stagesearch import ROW_SPARSE_FROM
    first = n >= ROW_SPARSE_FROM and "scipy.sparse.linalg" not in sys.modules
    return (builds * STAGE_BUILD_SECONDS_PER_UNIT * n + (SCIPY_SPARSE_SECONDS if first else 0.0)) * slowdown(clock)


def lp_build_seconds(cols: int) -> float:
    """About how long building approx's LP of ``cols`` columns takes now (``load_per_core``)."""
    return LP_BUILD_SECONDS_PER_COLUMN * cols * LP_LOAD_MARGIN * load_per_core()


FEASIBLE_NO_LIMIT = 300.0
"""Seconds of the feasibility MILP (passes/feasible.py) when approx has no time limit."""
STAGE_SEARCH_UNITS = 120
"""Graphs above this many units (or with no given schedule within budget) get a schedule from the stage
search (passes/stagesearch.py) before the LP, so that one is in hand whatever the LP does."""
NO_LP_STAGE_SHARE = 0.85
"""Share of the time limit the stage search may use when no LP is built and ``window`` is on: the window
search (passes/window.py) gets the rest, from the stage search's schedule."""
LATE_BOUND_SHARE = 0.1
"""Share of the time left that the retention-gap bound keeps after the stage search, where it runs after it
(nothing fits at approx's start and no LP is built)."""


@dataclass
class _LpSolution:
    S: np.ndarray
    """float[n, n]: the fractional checkpoint matrix S*."""
    objective: float
    """LP objective in cost units."""
    bound: float
    """A proven lower bound on the LP optimum in cost units (``safe_dual_bound``; at most ``objective``)."""
    sizes: dict


class LpUnfinished(NoScheduleInTime):
    """approx ran out of time before it had a schedule; ``lp_bound`` is the best proven lower bound on the
    cost at the budget that its LP at the true budget reached (-inf when none)."""

    def __init__(self, message: str, lp_bound: float) -> None:
        super().__init__(message)
        self.lp_bound = lp_bound


@dataclass
class _Candidate:
    R: np.ndarray
    S: np.ndarray
    cost: float
    eps: float
    rule: str
    """How S was rounded: 'S* > 0.5', 'sample 7', ..."""


def solve_approx(dag: DAG, budget: int, options: ApproxOptions | None = None, *, lp: SolverBackend,
                 incumbent: Schedule | None = None, progress: Progress | None = None,
                 clock: Clock | None = None, state: dict | None = None, repair_only: bool = False,
                 race: ExactSearch | None = None, exact_phase: bool = True,
                 searched: bool = False, exact_reserve: float | None = None,
                 search: EvictSearch | None = None, enough: float = -math.inf) -> Schedule:
    """A schedule of ``dag`` within ``budget`` bytes by LP relaxation (solved by backend ``lp``) and two-phase
    rounding, then a local search; anytime: when ``options.time_limit`` (or ``clock``, shared with the
    caller) runs out, the best schedule in hand is returned.

    ``options.eps``: budget allowance of the LP (the paper uses 0.1); None or ``eps_search`` tries every
    value in ``eps_list`` (and ``eps``) and keeps the cheapest schedule; when the single ``eps`` yields
    nothing within budget, the list is tried as well (``eps_fallback`` in the report). ``rounding``:
    "deterministic" (S* > tau for tau in ``thresholds``, default 0.5 and up to ``max_thresholds`` distinct
    values of S*), "randomized" (``samples`` Bernoulli draws with ``seed``) or "both" (the default; on
    coarse units the thresholds alone often find nothing at small eps — VGG16 at 0.8 of its peak: nothing
    below eps 0.3 and 1.090x, where sampling also gives 1.080x at eps 0.05; the winning candidate's
    ``rule`` says which rounding made it). ``refine``: local search after rounding (module docstring) for
    at most ``refine_seconds`` and ``refine_evals`` evaluated schedules; False gives Algorithm 2 alone.

    ``incumbent`` (e.g. the best baseline) and checkpoint-all, when they fit, are candidates too and start
    the local search when rounding finds nothing. The report's ``bound`` is the best proven lower bound
    (the LP at the true budget, else the sum of costs) and ``gap`` is measured on the recomputation
    overhead. LPs above MAX_LP_COLUMNS columns are not built (``lp`` in the report says so).

    ``state`` (a dict), when given, receives the cheapest rounded schedule over the budget (``"over"``, its
    S matrix; None when there was none), so that a caller can resume the local search from it later, and the
    retention-gap bound's result (``"gap_bound"``, a ``bounds.GapBound`` with its multipliers) where it ran, so that
    a caller can go on with its ascent (``gap_bound(resume=...)``).
    ``repair_only``: the local search runs only when no schedule within the budget is in hand after the
    rounding, and then only repairs (no improving moves): a caller that resumes the search later does so.

    When nothing fits after all of that (every heuristic missed the budget), the zero-objective MILP runs
    with the time left until its first schedule (passes/feasible.py; FEASIBLE_NO_LIMIT seconds without a
    limit), raced against ``race`` (e.g. CP-SAT's first schedule, wired by the registry), and the local
    search starts from that schedule. ``exact_phase`` False leaves that phase out (a caller that runs it
    itself: checkmate).

    ``searched``: the caller already ran the stage search from nothing (``evict_search`` with no start) for at
    least the share this function would give it, and it found nothing: where no schedule fits at the start, it is
    not run again (it is deterministic in rows evaluated, so it would find nothing again), and the retention-gap
    bound waits until a schedule is in hand (it does not help find one: 1.1-1.5 s of a 10 s limit on 28-48-unit
    random DAGs under load). For checkmate, which runs approx alone's steps after its own stage search
    (``NOTHING_FITS_OWN`` in backends/strategies.py), so that it reaches each of them no later than approx alone.
    ``exact_reserve``: the seconds kept for the exact feasibility phase where nothing fits (default FEASIBLE_SHARE
    of the time left at the start; checkmate keeps FEASIBLE_SHARE of its whole limit, as approx alone keeps of
    what its baselines and bound leave, so that its exact phase starts no later than approx alone's).
    ``search``: the stage search's producers (``evict.EvictSearch`` for this dag and budget) as an earlier phase of
    the caller left them; each stage search here resumes it rather than starting over (by default one of its own,
    shared by its first run and its run with the time left, RESEARCH_LEFT). With ``searched``, the run with the
    time left resumes the caller's search where it was given.
    ``enough``: a cost at or below which a schedule is good enough for the caller (its proven bound within its gap
    target: checkmate's ``_approx_alone`` after the covering with one column per gap): a start that costs at most
    this is returned as it is (its report's bound approx's own: the caller has the better one). Where the stage search runs
    from a schedule in hand, it runs before the retention-gap bound (which the caller's bound makes less needed) and
    stops once a schedule costs at most this; then neither the retention-gap bound nor the window search runs.

    Raises InfeasibleError, with a proven lower bound on the least feasible budget, when the LP at the
    true budget is infeasible, when the feasibility MILP is (then the bound is above the budget), or when
    nothing fits; LpUnfinished when time ran out before any schedule.
    """
    o = options or ApproxOptions()
    clock = clock or Clock(o.time_limit)
    if budget < simple_lower_bound(dag):
        _raise(dag, budget, "no schedule can fit", lp, o.threads, clock.left())
    base = float(dag.cost.sum())
    given = _fitting(dag, budget, [("given", incumbent), ("checkpoint-all", checkpoint_all(dag))])
    if given is not None and given.cost <= base * (1 + 1e-12):  # nothing is recomputed: optimal
        return _finish(dag, budget, given, base, -math.inf, None, [], False, None, o, clock, "not needed")
    if given is not None and given.cost <= enough:  # the caller's bound proves the start: nothing to search
        return _finish(dag, budget, given, base, -math.inf, None, [], False, None, o, clock,
                       "not needed (the caller's bound proves the start)")
    note = _report_progress(progress, clock, given, base)
    cols = model_columns(dag)
    # the retention-gap bound (passes/bounds.py) first, within BOUND_SHARE of the time left; where nothing fits
    # yet and no LP is built, after the stage search instead (feasibility first: random layered n = 1000 seed
    # 3 at 0.8 spent 24 s in the baselines and the bound, and its stage search found nothing in the 96 s left)
    deferred = searched and given is None  # (the bound after the search: ``searched``)
    late_bound = given is None and cols > MAX_LP_COLUMNS and not deferred
    # nothing fits and an LP would be built: the bound after the stage search too (SEARCH_BEFORE_BOUND)
    search_first = SEARCH_BEFORE_BOUND and given is None and not late_bound and not deferred
    # a caller's bound that may prove the schedule (``enough``): the stage search first, the bound where it does not
    ahead = math.isfinite(enough) and given is not None and dag.n > STAGE_SEARCH_UNITS and not deferred
    # no LP is built and a start fits: the stage search before the bound too (SEARCH_BEFORE_BOUND_NO_LP)
    ahead = ahead or (SEARCH_BEFORE_BOUND_NO_LP and given is not None and cols > MAX_LP_COLUMNS
                      and dag.n > STAGE_SEARCH_UNITS and not deferred)
    gbr = None if late_bound or deferred or search_first or ahead else gap_bound(dag, budget, upper=None if given is None else given.cost,
                                                        iterations=2000, deadline=bound_deadline(clock))
    gb = -math.inf if gbr is None else gbr.bound
    staged, whole = None, False
    found: dict[str, Any] = {}
    # the caller's search (``searched`` does not mean it has ended); else one of approx's own, built where it runs
    resumable = search is not None and search.dag is dag and search.budget == budget
    if not resumable:
        search = None
    # nothing fits yet: keep FEASIBLE_SHARE of the time for the exact phase (find_feasible) in case every
    # heuristic misses (a 140-unit random layered DAG at 0.8: the heuristics used all of 60 s and found nothing)
    left0 = clock.left()
    reserve = (FEASIBLE_SHARE * left0 if exact_reserve is None else min(left0, exact_reserve)) \
        if exact_phase and given is None and left0 is not None and cols <= MAX_FEASIBLE_COLUMNS else 0.0
    late = given is not None and (left_now := clock.left()) is not None and \
        left_now < stage_build_seconds(dag.n, clock, STAGE_SEARCH_BUILDS)
    if (given is None or dag.n > STAGE_SEARCH_UNITS) and not clock.expired() and not deferred and not late:
        # (not started past the limit: Moccasin's n=1000 at 0.8, `remc solve --time-limit 10` at a load of 10 on 2
        # cores, the baselines' first evaluations used all of the solve's 4 s, and the stage search then ran 10 s
        # more and found nothing)
        note("stage search", bound=gb)
        share = (NO_LP_STAGE_SHARE if o.window and given is not None and window_applies(dag) else 1.0) \
            if cols > MAX_LP_COLUMNS \
            else STAGE_SEARCH_SHARE
        if reserve and left0:
            share *= 1.0 - reserve / left0
        if given is None and left0 is not None and cols <= MAX_LP_COLUMNS and \
                (1.0 - share) * left0 < min(lp_build_seconds(cols),
                                             feasible_build_seconds(cols) if reserve else math.inf):
            # what the search would leave is too little to start the LP or the feasibility MILP at this load, so
            # neither would run: the search gets it all (MobileNetV3-small b16 from torchvision, 171 units, 49k
            # columns, `remc compile --strategy approx --time-limit 60` at a load of 12 on 2 cores: the search
            # stopped at its share, neither was started, and approx said "no schedule" with 10 s of 20 left)
            share, reserve = 1.0, 0.0
        whole = share >= 1.0  # (no LP or exact phase follows the search: the bound after it takes what it leaves)
        if late_bound or search_first or ahead:
            share *= 1.0 - LATE_BOUND_SHARE
        search = search or EvictSearch(dag, budget)
        staged = _stage_search(dag, budget, given, clock, share, found,
                               on_best=lambda cost: note("stage search", bound=gb, cost=cost), search=search,
                               enough=enough)
        if staged is not None and not resumable:
            search = None  # (its producers' states, up to n x n each, are not held through the LP once one fits)
        given = _cheaper(given, staged)
    if late_bound and not clock.expired():
        gbr = gap_bound(dag, budget, upper=None if given is None else given.cost, iterations=2000,
                        deadline=clock.deadline)
        gb = gbr.bound
    good = given is not None and given.cost <= enough  # (the caller's bound proves it: nothing more to do)
    if (search_first or ahead) and given is not None and not good and not clock.expired():  # (the bound's turn)
        gbr = gap_bound(dag, budget, upper=given.cost, iterations=2000,
                        deadline=clock.deadline if whole else bound_deadline(clock))
        gb = gbr.bound
    if state is not None and found.get("improve_start") is not None:
        state["improve_start"] = found["improve_start"]  # (the stage search's schedule before its improve)
    if state is not None and gbr is not None:
        state["gap_bound"] = gbr  # (its multipliers: a caller may go on with the ascent, gap_bound(resume=...))
    windowed = None
    if cols > MAX_LP_COLUMNS and o.window and given is not None and not good and not late and not clock.expired():
        # no LP: eq. (9) on windows of stages from the best schedule, with the time left (passes/window.py)
        note("window search", best=given)
        ws = window_search(dag, budget, given.R, given.S, lp, deadline=clock.deadline, threads=o.threads)
        windowed = ws.note()
        if ws.cost < given.cost:
            given = _Candidate(ws.R, ws.S, ws.cost, math.nan, f"{given.rule}, windows")
    heur_end = clock.deadline  # the end of the heuristics (LP, rounding, repair): before the reserve
    if given is None and reserve and clock.deadline is not None:
        heur_end = clock.deadline - reserve
    note("lp" if cols <= MAX_LP_COLUMNS else "done", bound=gb, best=staged)  # (no LP is built above it)
    lp_status, exact, tried, fallback, over, lp_bound = "skipped", None, [], False, None, -math.inf
    best = None
    if cols > MAX_LP_COLUMNS:
        lp_status = f"not built ({cols} columns > {MAX_LP_COLUMNS})"
    elif clock.expired() or (heur_end is not None and time.perf_counter() >= heur_end):
        lp_status = "not started (time limit reached)"
    elif (left := clock.left()) is not None and left < lp_build_seconds(cols):
        lp_status = f"not started ({left:.1f} s left, too little to build its {cols} columns)"
    else:
        relax: _Relaxation | None = _Relaxation(dag, budget, o.free_form, lp, o.threads, heur_end)
        assert relax is not None
        try:
            exact = relax.at(budget)
        except _LpStopped as stop:
            lp_status, lp_bound = str(stop), stop.bound
        except SolverError:
            if not relax.out_of_time():
                raise
            lp_status = "not started (time limit reached)"
        else:
            if exact is None:
                _raise(dag, budget, "the LP relaxation is infeasible, so no schedule fits", lp, o.threads,
                       relax.left(), _exists_text(found.get("least_peak")), at_least=budget + 1)
            assert exact is not None  # _raise raised otherwise
            lp_status, lp_bound = "optimal", exact.bound
            note("rounding", bound=max(lp_bound, base))
            best, over, tried, fallback = _round(dag, budget, o, relax)
            if state is not None:
                state["over"] = None if over is None else over.S
        relax = None  # the LP and its HiGHS instance (1.1 GiB on GPT-2 s512): the refinement does not need them
    rounded_cost = None if best is None else best.cost
    refined = None
    if o.refine and cols <= MAX_LP_COLUMNS and not (repair_only and (best is not None or given is not None)):
        # (above MAX_LP_COLUMNS the stage search's own local search ran instead)
        end = clock.start + clock.elapsed() + o.refine_seconds
        if heur_end is not None and clock.deadline is not None:
            end = min(end, heur_end if best is None and given is None else clock.deadline)
        note("refine", bound=max(lp_bound, base), best=best)
        starts = [c for c in (best, given) if c is not None]
        refined = _refine(dag, budget, starts, over, Refiner(dag, budget, deadline=end, max_evals=o.refine_evals),
                          improve=not repair_only)
        best = _cheaper(best, refined.best)
    best = _cheaper(best, given)
    feasible = None
    if best is None and exact_phase and not clock.expired():
        # every heuristic missed: the zero-objective MILP until its first schedule (passes/feasible.py), then
        # the local search from it with the time left
        note("feasibility milp")
        left = clock.left()
        feasible = find_feasible(dag, budget, lp, time_limit=FEASIBLE_NO_LIMIT if left is None else left,
                                 threads=o.threads, race=race)
        if feasible.proven_infeasible:
            _raise(dag, budget, "the MILP with the budget is infeasible (proven by HiGHS), so no schedule fits",
                   lp, o.threads, clock.left(), at_least=budget + 1)
        if feasible.schedule is not None:
            found_c = _fitting(dag, budget, [("feasibility MILP", feasible.schedule)])
            best = found_c
            if o.refine and found_c is not None and not repair_only and not clock.expired():
                end = clock.start + clock.elapsed() + o.refine_seconds
                if clock.deadline is not None:
                    end = min(end, clock.deadline)
                note("refine", best=found_c)
                refined = _refine(dag, budget, [found_c], None,
                                  Refiner(dag, budget, deadline=end, max_evals=o.refine_evals))
                best = _cheaper(best, refined.best)
    if best is None and exact_phase and (resumable or not searched) and not clock.expired() and RESEARCH_LEFT \
            and (search is None or not search.exhausted()):
        # nothing fits and no phase above can use the time left (the LP or the exact phase not started, or done
        # without a schedule): the stage search again, with all of it, resumed where its first run stopped,
        # rather than no schedule before the limit
        note("stage search", bound=gb)
        search = search or EvictSearch(dag, budget)
        staged = _stage_search(dag, budget, None, clock, 1.0, found,
                               on_best=lambda cost: note("stage search", bound=gb, cost=cost), search=search)
        best = staged
    if best is None:
        eps_txt = ", ".join(f"{t['eps']:g}" for t in tried) or "none"
        feas_txt = "" if feasible is None else f"; feasibility MILP: {feasible.status} in {feasible.seconds:.1f} s"
        exists = _exists_text(found.get("least_peak"))
        if clock.expired():
            raise LpUnfinished(f"approx: the time limit of {clock.time_limit:g} s passed before any schedule within "
                               f"{budget} bytes was found (LP: {lp_status}; eps tried: {eps_txt}{feas_txt}); the least budget "
                               f"for this order is at least {simple_lower_bound(dag)} bytes (proven lower bound)"
                               f"{exists}", lp_bound)
        how = "LP rounding and repair" if o.refine else "LP rounding"
        _raise(dag, budget, f"{how} found no schedule within budget (LP: {lp_status}; eps tried: {eps_txt}{feas_txt})", lp,
               o.threads, clock.left(), exists)
    extras = dict(lp=lp_status, stage_search=None if staged is None else staged.cost, window_search=windowed,
                  first_fit_seconds=found.get("first_fit_seconds"),
                  rounded_cost=rounded_cost, eps_tried=tried, eps_fallback=fallback,
                  candidates=sum(t["candidates"] for t in tried), refined=refined is not None,
                  refine_evals=None if refined is None else refined.evals,
                  refine_seconds=None if refined is None else refined.seconds,
                  refine_stopped=None if refined is None else refined.stopped,
                  feasibility_milp=None if feasible is None
                  else f"{feasible.status} in {feasible.seconds:.1f} s" + (" (by the race)" if feasible.by == "race" else ""))
    if exact is not None:
        extras.update(lp_bound=exact.bound, lp_objective=exact.objective, **exact.sizes)
    elif math.isfinite(lp_bound):
        extras.update(lp_bound=lp_bound)
    assert best is not None  # raised above otherwise
    if (deferred or (search_first and gbr is None)) and not clock.expired():
        gbr = gap_bound(dag, budget, upper=best.cost, iterations=2000, deadline=bound_deadline(clock))
        gb = gbr.bound
        if state is not None:
            state["gap_bound"] = gbr
    if late:
        extras["stage_search_skipped"] = (f"not started: {left_now:.1f} s left, less than {STAGE_SEARCH_BUILDS} builds "
                                          f"of its rows (about {stage_build_seconds(dag.n, clock, STAGE_SEARCH_BUILDS):.1f} s "
                                          f"now)")
    sched = _finish(dag, budget, best, base, lp_bound, extras, tried, fallback, refined, o, clock, lp_status, gb)
    if late and sched.report.status == "feasible":
        sched.report.status = "time_limit"  # (its search was not started for lack of time)
    return sched


def _finish(dag: DAG, budget: int, best: _Candidate, base: float, lp_bound: float, extras: dict | None,
            tried: list, fallback: bool, refined, o: ApproxOptions, clock: Clock, lp_status: str,
            gb: float = -math.inf) -> Schedule:
    """The schedule of ``best`` with its typed report (bound: the LP's or the sum of costs)."""
    sched = Schedule(best.R, best.S, strategy="approx")
    bound, source = (lp_bound, "lp") if lp_bound > base else (base, "sum of costs")
    if math.isfinite(gb) and gb > bound:
        bound, source = gb, "retention gaps"
    extras = dict(extras or dict(lp=lp_status), gap_bound=gb)
    bound = min(bound, best.cost)
    rep = SolveReport(status="optimal" if best.cost <= bound * (1 + 1e-12) else "feasible", cost=best.cost,
                      peak=int(stage_peaks(dag, best.R, best.S).max()), bound=bound,
                      seconds=clock.elapsed(), solver="highs-lp", bound_source=source,
                      extras=extras)
    rep.set_gap(base)
    rep.extras.update(eps=best.eps, rule=best.rule, rounding=o.rounding, budget=int(budget))
    if (clock.expired() or lp_status.startswith("not started")) and rep.status != "optimal":
        rep.status = "time_limit"  # (an LP not started for lack of time counts as the limit reached)
    sched.report = rep
    return sched


SEARCH_BEFORE_BOUND = True
"""Where nothing fits at approx's start (no baseline, no warm start) and an LP would be built, the stage search runs
before the retention-gap bound, not after it (as where no LP is built, ``late_bound``, and after checkmate's search,
``searched``): the bound does not help find a schedule and took its BOUND_SHARE (20%) of the time left first.
Swin-T from torchvision (309 units, 169k columns) at 0.9x, the solve `remc compile --strategy approx --time-limit 60`
gave its first round: 11.8 s, of which the bound took 2.3 s, and the search, which needs ~6 s of CPU to its first
schedule there, found none in the rest. The search keeps LATE_BOUND_SHARE of its time for the bound, which runs once
the search has a schedule (with all the time left where no LP or exact phase follows, else BOUND_SHARE of it), else
at the end, after whatever phase found one."""

SEARCH_BEFORE_BOUND_NO_LP = True
"""Where no LP is built (above MAX_LP_COLUMNS) and a start fits (a baseline or a warm start), the stage search runs
before the retention-gap bound, as with a caller's ``enough``: the search's schedule is the result there, the bound
only its gap (ResNet50 at 2277 units, 16 GiB, `remc compile --strategy approx --time-limit 30`: the solve got
7.9 s at a load of 5, the bound took 1.2 s of it first, and the stage search, with about half a core, ended
without a schedule of its eviction settings: the ap-sqrtn baseline came back, +30.5%, where 8 s alone give
+0.028%). The search keeps LATE_BOUND_SHARE of its time for the bound, which runs after it."""

RESEARCH_LEFT = True
"""Where nothing fits after every phase and time is left (own random layered n = 250 seed 11 at 0.9, `remc solve
--strategy approx --time-limit 120` at a load of 11 on 2 cores: the stage search's 0.36 of the limit found
nothing, the LP was then not started, "58.3 s left, too little to build its 152145 columns", and approx raised
at 63 s), the stage search runs again with all the time left (from nothing: its first run's work is redone, so
its producers resume where the first run stopped (``evict.EvictSearch``), so the two runs find what one run of
their summed length finds; before, it started over). Not where a caller runs the exact phase itself (``exact_phase``
False: checkmate's approx share), nor where the caller ran the stage search already (``searched``) unless it passed
its search to resume (``search``), nor where every producer of the search ended without a schedule."""


def _stage_search(dag: DAG, budget: int, given: _Candidate | None, clock: Clock,
                  share: float, info: dict | None = None,
                  on_best: Callable[[float], None] | None = None,
                  search: EvictSearch | None = None, enough: float = -math.inf) -> _Candidate | None:
    """The eviction pass and stage search's schedule (passes/evict.py; ``search`` resumed; ``enough`` ends it) within ``share`` of the time left
    (30 s without a limit), cleaned and checked; None when it finds none. ``given`` (within budget: e.g. a
    warm start or the best baseline) competes as a start of the local search. ``info`` receives the
    least-memory phase's ``least_peak`` when it ran, and ``first_fit_seconds`` on ``clock`` where the search
    found the first schedule within budget (``evict_search``)."""
    left, began = clock.left(), clock.elapsed()
    end = time.perf_counter() + (30.0 if left is None else share * left)
    found = evict_search(dag, budget, deadline=end, start=None if given is None else given.S, info=info,
                         on_best=on_best, search=search, enough=enough)
    if info is not None and "first_fit_seconds" in info:  # on the solve's clock (the baselines before it included)
        info["first_fit_seconds"] += began
    if found is None:
        return None
    R, S = clean(dag, found[0], found[1])
    if check(dag, R, S) or stage_peaks(dag, R, S).max() > budget:  # its moves keep both: a bug
        raise SolverError("approx: the stage search returned an invalid schedule")
    return _Candidate(R, S, float(R.sum(axis=0) @ dag.cost), math.nan, found[3])


def _report_progress(progress: Progress | None, clock: Clock, given: _Candidate | None, dag_total: float):
    """A function reporting a phase change to ``progress`` (a no-op without one), with the cheapest schedule
    and the best bound seen so far; gaps on the overhead above ``dag_total`` (every unit computed once), as the
    report's."""
    seen: dict[str, float] = {} if given is None else {"cost": given.cost}

    def note(phase: str, bound: float | None = None, best: _Candidate | None = None,
             cost: float | None = None) -> None:
        for c in (None if best is None else best.cost, cost):
            if c is not None:
                seen["cost"] = min(seen.get("cost", math.inf), c)
        if bound is not None and math.isfinite(bound):
            seen["bound"] = max(seen.get("bound", -math.inf), bound)
        if progress is not None:
            cost, bnd = seen.get("cost"), seen.get("bound")
            progress(ProgressEvent(clock.elapsed(), phase, cost, bnd,
                                   None if cost is None or bnd is None else gap_of(cost, bnd, dag_total)))
    return note


def _fitting(dag: DAG, budget: int, cands: list) -> _Candidate | None:
    """The cheapest correct schedule of ``cands`` ((name, Schedule or None)) within budget, cleaned."""
    best = None
    for name, c in cands:
        if c is None or check(dag, c.R, c.S):
            continue
        R, S = clean(dag, c.R, c.S)
        if stage_peaks(dag, R, S).max() > budget:
            continue
        best = _cheaper(best, _Candidate(R, S, float(R.sum(axis=0) @ dag.cost), math.nan,
                                         f"{name} ({c.strategy or 'unnamed'})"))
    return best


def _round(dag: DAG, budget: int, o: ApproxOptions, relax: _Relaxation):
    """Algorithm 2 over the eps values: the best candidate within budget, the best over it, the log, and
    whether the eps list was tried as a fallback."""
    rng = np.random.default_rng(o.seed)
    searched = o.eps is None or o.eps_search
    tries: list[float] = (sorted(set(o.eps_list) | ({o.eps} if o.eps is not None else set())) if searched
                          else [float(o.eps) if o.eps is not None else 0.1])
    thresholds = list(o.thresholds) if o.thresholds is not None else None
    best, over, tried = _search(dag, budget, tries, relax, o.rounding, o.samples, rng, thresholds,
                                o.max_thresholds)
    fallback = False
    if best is None and not searched:
        fallback = True
        more, over2, extra = _search(dag, budget, [e for e in o.eps_list if e != o.eps], relax, o.rounding,
                                     o.samples, rng, thresholds, o.max_thresholds)
        best, over, tried = more, _cheaper(over, over2), tried + extra
    return best, over, tried, fallback


def _search(dag: DAG, budget: int, eps_list: list[float], relax: _Relaxation, rounding: str, samples: int,
            rng: np.random.Generator, thresholds: list[float] | None,
            max_thresholds: int) -> tuple[_Candidate | None, _Candidate | None, list[dict]]:
    """The cheapest candidate within budget over ``eps_list``, the cheapest correct one over budget, and a
    per-eps log of what was tried."""
    best, over, log = None, None, []
    for e in eps_list:
        if relax.out_of_time():
            log.append(dict(eps=e, lp="time limit", candidates=0, feasible=0, best=None))
            continue
        try:
            lp = relax.at(int(math.floor((1 - e) * budget)))
        except SolverError:
            if not relax.out_of_time():
                raise
            log.append(dict(eps=e, lp="time limit", candidates=0, feasible=0, best=None))
            continue
        if lp is None:
            log.append(dict(eps=e, lp="infeasible", candidates=0, feasible=0, best=None))
            continue
        draws = []
        if rounding in ("deterministic", "both"):
            taus = thresholds if thresholds is not None else default_thresholds(lp.S, max_thresholds)
            draws += [(f"S* > {tau:.6g}", lp.S > tau) for tau in taus]
        if rounding in ("randomized", "both"):
            draws += [(f"sample {k}", rng.random(lp.S.shape) < lp.S) for k in range(samples)]
        cands, over_e = _candidates(dag, budget, draws, e)
        over = _cheaper(over, over_e)
        top = min(cands, key=lambda c: c.cost, default=None)
        log.append(dict(eps=e, lp=lp.objective, candidates=len(draws), feasible=len(cands),
                        best=None if top is None else top.cost))
        best = _cheaper(best, top)
    return best, over, log


def _cheaper(a: _Candidate | None, b: _Candidate | None) -> _Candidate | None:
    """The cheaper of two candidates (either may be None; ``a`` on a tie)."""
    return b if a is None or (b is not None and b.cost < a.cost) else a


def default_thresholds(S: np.ndarray, limit: int) -> list[float]:
    """0.5 and, just below each distinct fractional or unit value of S*, a threshold (at most ``limit``)."""
    vals = np.unique(np.round(S[(S > 1e-6)], 6))
    taus = vals - 1e-6
    if len(taus) > limit:
        taus = np.quantile(taus, np.linspace(0, 1, limit))
    return [0.5] + sorted(set(float(t) for t in taus) - {0.5})


def _candidates(dag: DAG, budget: int, draws: list[tuple[str, np.ndarray]],
                eps: float) -> tuple[list[_Candidate], _Candidate | None]:
    """Two-phase rounding of each rounded S: pin, solve R, clean; those correct and within budget, and the
    cheapest correct one over budget (a starting point for ``refine``)."""
    out, seen, over = [], set(), None
    lower = np.tril(np.ones((dag.n, dag.n), dtype=bool), -1)
    for rule, S in draws:
        S = _keep_no_recompute_contiguous(dag, pin_no_recompute(dag, S & lower))
        key = S.tobytes()
        if key in seen:
            continue
        seen.add(key)
        # solve_rs, not solve_r: a recomputed reader of a no-recompute unit past the unit's pinned
        # range needs the unit kept longer (else every such candidate would fail the check).
        R, S = clean(dag, *solve_rs(dag, S))
        if check(dag, R, S):
            continue
        cand = _Candidate(R, S, float(R.sum(axis=0) @ dag.cost), eps, rule)
        if stage_peaks(dag, R, S).max() > budget:
            over = _cheaper(over, cand)
            continue
        out.append(cand)
    return out, over


@dataclass
class _Refined:
    best: _Candidate | None
    evals: int
    seconds: float
    stopped: str | None


def _refine(dag: DAG, budget: int, fits: list[_Candidate], over: _Candidate | None,
            refiner: Refiner, improve: bool = True) -> _Refined:
    """Local search (passes/refine.py) from each schedule of ``fits`` (within budget) and from the cheapest
    over budget, repaired (``improve`` False: repaired only); the cheapest result, checked like every
    candidate."""
    t0 = time.perf_counter()
    starts = [(refiner.evaluate(f.S), f, "refined") for f in fits]
    if over is not None and not refiner.out_of_budget():
        fixed = refiner.repair(refiner.evaluate(over.S))
        if fixed is not None:
            starts.append((fixed, over, "repaired and refined"))
    best = None
    for start, origin, how in starts:
        p = refiner.improve(start) if improve else start
        if check(dag, p.R, p.S) or p.peak > budget:  # refine's moves keep both; a failure here is a bug
            raise SolverError(f"approx: local search returned an invalid schedule ({how} from {origin.rule})")
        best = _cheaper(best, _Candidate(p.R, p.S, p.cost, origin.eps, f"{origin.rule}, {how}"))
    return _Refined(best, refiner.evals, time.perf_counter() - t0, refiner.stopped)


def _keep_no_recompute_contiguous(dag: DAG, S: np.ndarray) -> np.ndarray:
    """Drop each no-recompute unit's checkpoints after its first gap (rejoining would recompute it)."""
    for i in np.flatnonzero(dag.no_recompute):
        S[i + 1:, i] = np.logical_and.accumulate(S[i + 1:, i])
    return S


class _Relaxation:
    """The LP relaxation of eq. (9) for one graph, solved at several budgets in one HiGHS session.

    The usefulness rows are left out: they tighten the LP a little but double its solve time."""

    def __init__(self, dag: DAG, budget: int, free_form: str, lp: SolverBackend, threads: int | None,
                 deadline: float | None) -> None:
        self.model = build_model(dag, budget, free_form=free_form, usefulness=False)
        self.session = lp.lp_session(self.model, threads=threads)
        self.deadline = deadline
        """time.perf_counter() value after which no LP is started (None: no limit)."""
        self.constant = int(dag.constant)
        self._cache: dict[int, _LpSolution | None] = {}

    def at(self, budget: int) -> _LpSolution | None:
        """The LP at ``budget`` bytes; None when it is infeasible."""
        if budget not in self._cache:
            self._cache[budget] = self._solve(budget)
        return self._cache[budget]

    def _solve(self, budget: int) -> _LpSolution | None:
        if budget < self.constant:
            return None
        if self.out_of_time():
            raise SolverError("the LP relaxation was not started: the time limit has passed")
        res = self.session.solve(budget, time_limit=self.left())
        if res.status == "infeasible":
            return None
        m = self.model
        if res.status != "optimal" or res.x is None:
            raise _LpStopped(f"the LP relaxation stopped with status {res.status} after {res.seconds:.1f} s",
                             m.bound_of(res.bound))
        sizes = dict(n_vars=m.num_col, n_cons=m.num_row, n_binaries=0)
        obj = m.cost_of(res.objective)
        return _LpSolution(m.values(res.x, m.s), obj, min(m.bound_of(res.bound), obj), sizes)

    def left(self) -> float | None:
        """Seconds to the deadline (None: no limit)."""
        return None if self.deadline is None else max(self.deadline - time.perf_counter(), 0.0)

    def out_of_time(self) -> bool:
        return self.deadline is not None and time.perf_counter() >= self.deadline


class _LpStopped(SolverError):
    """An LP that stopped unsolved; ``bound``: its proven lower bound in cost units (-inf when none)."""

    def __init__(self, message: str, bound: float) -> None:
        super().__init__(message)
        self.bound = bound


def _exists_text(least_peak: float | None) -> str:
    """'; a schedule exists at M bytes (...)' for the least peak the least-memory phase saw ('' when none)."""
    if least_peak is None:
        return ""
    return f"; a schedule exists at {int(least_peak)} bytes (the least-memory schedule found)"


def _raise(dag: DAG, budget: int, why: str, lp: SolverBackend, threads: int | None,
           time_limit: float | None = None, exists: str = "", at_least: int = 0) -> None:
    """InfeasibleError with the least-budget bound: the LP's (``least_budget_bound``) when ``time_limit`` (the
    seconds left; None: no limit) is enough to build and solve it, else the simple bound; at least
    ``at_least`` (a bound proven by the caller, e.g. budget + 1 when the MILP at the budget is infeasible)."""
    cols = model_columns(dag)
    if time_limit is not None and time_limit < 2 * lp_build_seconds(cols) + 1.0:
        lb = simple_lower_bound(dag)  # no time for the LP: it would overrun the limit (4-5 s at 250 units)
    else:
        lb = least_budget_bound(dag, lp, threads=threads, time_limit=time_limit)
    lb = max(lb, at_least)
    raise InfeasibleError(f"approx: {why} at a budget of {budget} bytes; every schedule of the {dag.n} units "
                          f"needs at least {lb} bytes (proven lower bound){exists}", lb)
