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
import math
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from ..ir.dag import DAG
from ..ir.errors import InfeasibleError, NoScheduleInTime, RemcError, SolverError
from ..ir.report import gap_of, within_gap
from ..ir.schedule import Schedule, check
from ..passes.milp_model import clean, lower_bound_text, model_columns, simple_lower_bound
from ..passes.options import ApproxOptions, BaselineOptions, CheckmateOptions
from ..passes.solver_api import Clock, Progress, ProgressEvent, SolverBackend
from ..passes.strategies import BASELINE_NAMES, best_baseline, solve_baseline_strategy
from .cpsat import CP_UNITS, CpSatOptions, cpsat_first, cpsat_phase, cpsat_strategy

if TYPE_CHECKING:
    from ..passes.evict import EvictSearch
    from ..passes.feasible import ExactSearch

# The passes that only some paths run (approx's LP and rounding, the MILP, the local search, the bounds' ascents,
# the exact feasibility race, HiGHS) are imported where they run: on the published graphs `remc solve` proves
# most cases with the stage search and CP-SAT alone, and their imports were 0.03-0.09 s of a
# 0.3-0.5 s process (VGG16 at 0.9 and 0.8; results/pub13).


def _approx_mod():
    from ..passes import approx
    return approx


def _milp_mod():
    from ..passes import milp
    return milp


def _highs() -> SolverBackend:
    """A new ``backends.highs.HighsBackend`` (imported here on first use)."""
    from .highs import HighsBackend
    return HighsBackend()

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
        return _highs()
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


FEASIBLE_SHARE = 0.8
"""Share of the time left that checkmate's exact feasibility race may take when approx found nothing."""
FEASIBLE_NO_LIMIT = 300.0
"""Seconds of that race without a time limit."""

NO_INCUMBENT_APPROX_SHARE = 0.6
"""approx's share of checkmate's limit when no baseline fits (layered n=250 seed 2 at 0.8: at 0.3 its least-memory
starts got 3 s and found nothing, and CP-SAT's C=2 model then found nothing in 26 s)."""
NO_MILP_APPROX_SHARE = 0.8
"""approx's share of checkmate's time limit on graphs where neither CP-SAT nor the MILP is built (its stage
search's ``improve`` lowers the cost most there; the window search gets the rest)."""


def _race() -> ExactSearch | None:
    """CP-SAT's first schedule (``cpsat_first``) to race against approx's feasibility MILP, when OR-Tools is
    installed (passes/feasible.py)."""
    return cpsat_first if importlib.util.find_spec("ortools") is not None else None


def _incumbent(dag: DAG, budget: int, clock: Clock, start: Schedule | None, first: bool = False) -> Schedule | None:
    """``start`` repaired to fit (passes/stagesearch.py ``repair_start``, within WARM_SHARE of the limit), else
    the best baseline (a repaired schedule of a previous solve is far cheaper than any baseline: ResNet50
    fine at 0.995 of its peak +1.3%, the best baseline +14%, and the baselines take seconds there)."""
    if start is not None:
        at = None if clock.time_limit is None else clock.start + WARM_SHARE * clock.time_limit
        from ..passes.stagesearch import repair_start
        warm = repair_start(dag, budget, start.S, deadline=at)
        if warm is not None:
            return warm
    found = best_baseline(dag, budget, deadline=_baseline_deadline(clock), hard=clock.deadline, first=first)
    if found is None and (first or LATE_ANY) and LATE_FIRST_FIT and clock.expired():
        # the limit passed before any baseline could run (a compile that reached its solve with no time left):
        # the first that fits, quickest first, each cheaply (best_baseline's late knob values, no whole search),
        # past the limit: a schedule beats none. GPT-2 b8 fine at 15.5 GiB, `remc compile --strategy approx
        # --time-limit 30` at a load of 26 on 2 cores: its solve got 0.05 s and the compile ended in an error
        # ("no schedule within ... was found") after 36 s, where ap-sqrtn fits (1.7 s there)
        found = best_baseline(dag, budget, deadline=-math.inf, hard=math.inf, first=True)
    if found is not None and clock.expired():  # (found past the limit: the report says so where it stays the result)
        clock.late_baseline = (found.strategy, found.cost(dag))
    return found


LATE_ANY = True
"""LATE_FIRST_FIT for every caller of ``_incumbent`` (checkmate, approx on graphs with an LP), not only approx where
no LP is built: a torchvision Swin-T compiled with checkmate at 0.9x, 60 s, at a load of 14-17 reached its solve
with no time left and ended in "checkmate found no schedule ... in 0.5 s (time limit 0.05 s)" where a baseline fits
(session 21). The report's ``late_baseline`` names it."""


LATE_FIRST_FIT = True
"""``_incumbent`` where approx takes the first fitting baseline (BASELINE_FIRST_FIT) and its limit passed before one
was found: the first that fits, past the limit, rather than none."""


def _checkmate(dag: DAG, budget: int | None, o: CheckmateOptions, progress: Progress | None,
               start: Schedule | None = None) -> Schedule:
    """The portfolio, every phase on one clock (``o.time_limit``), each started from the best schedule so far:

    0. a budget below the simple bound (each unit once with its inputs resident) is proven infeasible at once;
    1. where CP-SAT runs and no ``start`` is given, the stage search from nothing (within FIRST_STAGE_SHARE of
       the limit; STAGE_FIRST); where it finds nothing or CP-SAT does not run, the baselines (quickest first;
       ``start``, e.g. a previous fit round's schedule, repaired instead when that succeeds: ``_incumbent``),
       and the retention-gap bound where CP-SAT does not start;
    2. where CP-SAT runs (OR-Tools installed, at most CP_UNITS units) and step 1 found a schedule within the
       budget, or else the stage search from nothing found one within ``_first_stage_share`` of the limit: the
       eviction pass and stage search from it (``_stage_hint``, at most STAGE_HINT_SHARE of the
       limit), then CP-SAT's C=2 model from that schedule and its bound valid for all schedules
       (``cpsat_phase``, ``cpsat_share`` of the time left);
    2b. after step 2, unless CP-SAT proved its schedule, with ``warm_start`` and room for approx's LP
       (``_lp_room``): approx alone's own search (``_approx_own``, APPROX_OWN: approx's options, from approx
       alone's incumbent, its local search in full) with the time left, then the retention-gap and covering
       bounds where still unproven;
    3. with ``warm_start``, where step 2b did not run, unless a bound proves the schedule (and, after step 2,
       only with ``approx_share`` of the limit still left): approx's schedule (stage search, LP relaxation,
       two-phase rounding; its local search only to repair when nothing fits: ``_approx_first``) within
       ``approx_share`` of the limit, and its LP bound;
    3'. where nothing fits after step 1 (no baseline, no warm start, the stage search from nothing found nothing),
       instead of step 3: approx alone's own steps (``_approx_own``, NOTHING_FITS_OWN: its LP rounding, repair,
       exact feasibility race and local search in full, on all the time left; the stage search from nothing not
       run again), then the retention-gap bound;
    3b. when nothing fits still, the exact feasibility race (passes/feasible.py: the zero-objective MILP
       against CP-SAT's least-memory model) until a first schedule, within FEASIBLE_SHARE of the time left;
    3c. CP-SAT as in step 2 when step 2 did not run (nothing fitted after step 1);
    4. with ``warm_start``, approx's local search (passes/refine.py) from the best schedule and from approx's;
    5. the MILP from the best schedule with the time left, skipped when a bound already proves it.

    The cheapest schedule of all is returned. Where step 2b runs, checkmate runs approx alone's own search
    (the same steps from the same incumbent), so it is never worse than approx alone where that search ends by
    itself in the time CP-SAT leaves and its steps do not depend on the clock (APPROX_OWN says where); it can be
    worse where approx alone needs more of the limit than CP-SAT leaves it, or where step 2b does not run (no
    room for approx's LP) (tools/bench_portfolio.py measures how often). Where nothing fits before CP-SAT, step 3'
    reaches approx alone's steps no later than approx alone does, so checkmate has a schedule wherever approx alone
    finds one (up to the load's noise: its steps are the same, its first schedule comes from a race)."""
    assert budget is not None
    clock = Clock(o.time_limit)
    cpu0 = time.process_time()
    least = simple_lower_bound(dag)
    if budget < least:  # each unit runs once with its inputs resident: proven before any search
        raise InfeasibleError(f"no schedule of the {dag.n} units fits a budget of {budget} bytes: "
                              f"{lower_bound_text(dag)}", least)
    cp_possible = o.cpsat_share > 0 and dag.n <= CP_UNITS and importlib.util.find_spec("ortools") is not None
    if o.warm_start and not cp_possible and model_columns(dag) > _milp_mod().MAX_MILP_COLUMNS:
        return _approx_alone(dag, budget, o, progress, start)
    shown: list[float] = []  # the retention-gap bound, once known: shown, not used to skip phases
    say = _phase_reporter(dag, progress, clock, shown)
    bounds: dict[str, float] = {}
    notes: dict[str, str] = {"cp_sat": "not run", "approx": "not run", "refine": "not run"}
    first, state = None, {}
    cp = cp_possible
    staged = incumbent = baseline = None
    tried = False  # the stage search from nothing ran
    from ..passes.evict import EvictSearch
    search = EvictSearch(dag, budget)  # the stage search's producers, resumed by each phase that runs it
    # the covering MILP first (COVER_FIRST): before the stage search where no start is given (COVER_BEFORE_STAGE);
    # where its solution read as a schedule fits and meets its bound, that schedule is proven optimal and nothing
    # else runs (no stage search, no baselines, no CP-SAT)
    pre: tuple[float, bool, Schedule | None] | None = None
    if COVER_BEFORE_STAGE and COVER_FIRST and o.warm_start and cp and start is None \
            and dag.n <= COVER_FIRST_UNITS and not clock.expired():
        say("cover bound", None, bounds)
        pre = _cover_first(dag, budget, clock, notes)
        if math.isfinite(pre[0]):
            bounds[COVER_SOURCE] = pre[0]
        if pre[2] is not None:
            notes["cover_schedule"] = f"cost {pre[2].cost(dag):g}"
            if _proven(dag, pre[2], bounds, o.gap):
                staged = incumbent = pre[2]
                tried = True
    if o.warm_start and cp and start is None and STAGE_FIRST and staged is None:
        # where CP-SAT runs: the stage search from nothing first, the baselines only where it finds nothing
        # (STAGE_FIRST's measurements)
        say("stage search", None, {})
        t = time.perf_counter()
        staged = incumbent = _stage_hint(dag, budget, None, clock, share=_first_stage_share(), search=search)
        tried = True
        allowed = _first_stage_share() * o.time_limit if o.time_limit is not None else STAGE_HINT_NO_LIMIT
        if staged is not None and time.perf_counter() - t >= 0.9 * allowed:
            # stopped by its share, not at a local optimum: resumed from its schedule with the share the stage
            # search from a baseline gets (STAGE_HINT_SHARE), as before STAGE_FIRST
            staged = incumbent = _cheaper(dag, staged, _stage_hint(dag, budget, staged, clock, search=search))
    baselined = incumbent is None  # approx alone's incumbent (``baseline``) is known
    if incumbent is None:
        say("baselines", None, {})
        incumbent = baseline = _incumbent(dag, budget, clock, start)
    if o.warm_start and cp and incumbent is None and not tried:  # no baseline fits: the stage search from
        say("stage search", incumbent, {})  # nothing, briefly
        staged = incumbent = _stage_hint(dag, budget, None, clock, share=_first_stage_share(), search=search)
        tried = True
    if pre is not None:  # the covering MILP's decoded schedule, where it fits (e.g. where nothing else does)
        incumbent = _cheaper(dag, incumbent, pre[2])
    cp_first = o.warm_start and cp and incumbent is not None
    gb = -math.inf
    # where nothing fits, approx alone's steps come first (NOTHING_FITS_OWN) and the bound after them
    own_first = o.warm_start and incumbent is None and NOTHING_FITS_OWN
    if not cp_first and not own_first:  # (the CP-SAT-first path below needs it only where CP-SAT's bound does not prove)
        say("lower bound", incumbent, {})
        from ..passes.bounds import bound_deadline, gap_bound
        gb = gap_bound(dag, budget, iterations=2000, deadline=bound_deadline(clock)).bound  # passes/bounds.py
        shown.append(gb)
        if incumbent is not None and not _proven(dag, incumbent, {"gap": gb}, o.gap):
            say("cover bound", incumbent, bounds)
            _cover_phase(dag, budget, clock, o.threads, bounds, notes, share=COVER_SHARE / 2)
    cp_done = covered = False
    beside: _CoverBeside | None = None
    if cp_first:
        # the eviction pass and stage search first (they stop at a local optimum: within 0.4-1.7 s of
        # the published graphs, +0.40% on MobileNet 0.8 against the optimum +0.37%), then CP-SAT from
        # that schedule; approx's LP, which took 10-26 s of 60 on MobileNet and ResNet50 before CP-SAT
        # started, runs after CP-SAT and only when CP-SAT did not prove the schedule
        # (only when a baseline, the warm start or the stage search from nothing fits: where none does,
        # approx's rounding and the feasibility race below find the first schedule)
        if staged is None:  # (else the stage search above already ran, to its local optimum)
            say("stage search", incumbent, bounds)
            staged = _stage_hint(dag, budget, incumbent, clock, search=search)
        if staged is not None and (pre is None or staged is not pre[2]):
            notes["stage_search"] = f"cost {staged.cost(dag):g}"
        incumbent = _cheaper(dag, incumbent, staged)
        first_cover = -math.inf
        if pre is not None:  # (run before the stage search: not again)
            first_cover, covered, decoded = pre
            incumbent = _cheaper(dag, incumbent, decoded)
        elif COVER_FIRST and incumbent is not None and dag.n <= COVER_FIRST_UNITS and not clock.expired():
            # the covering MILP first, in this process, where it is small (COVER_FIRST): where it proves the
            # schedule, OR-Tools is never imported; else its bound ends CP-SAT's search once that reaches it
            say("cover bound", incumbent, bounds)
            first_cover, covered, decoded = _cover_first(
                dag, budget, clock, notes, enough=incumbent.cost(dag) - o.gap * (incumbent.cost(dag) - dag.total_cost))
            if math.isfinite(first_cover):
                bounds[COVER_SOURCE] = first_cover
            if decoded is not None:  # its solution read as a schedule (COVER_DECODE), where it fits
                notes["cover_schedule"] = f"cost {decoded.cost(dag):g}"
                incumbent = _cheaper(dag, incumbent, decoded)
        if incumbent is not None and _proven(dag, incumbent, bounds, o.gap):
            notes["cp_sat"] = "not run (the covering MILP's bound proves the schedule)"
            cp_done = True
        elif not clock.expired():
            left = clock.left()
            say("cp-sat", incumbent, bounds)
            # the covering MILP beside CP-SAT, in a child process (COVER_BESIDE_*): whichever proves first ends both
            beside = _CoverBeside(dag, budget, clock, cpu0) if COVER_BESIDE and not covered else None
            external = (lambda: first_cover) if covered else None if beside is None \
                else (lambda: max(first_cover, beside.bound()))  # (first_cover: -inf, or a time-limited bound)
            try:
                incumbent, bounds["cp-sat"], notes["cp_sat"] = cpsat_phase(
                    dag, budget, incumbent=incumbent, gap=o.gap, threads=o.threads,
                    seconds=None if left is None else o.cpsat_share * left, external=external,
                    probe=not math.isfinite(first_cover))  # (a covering bound below the schedule: no probe)
            except BaseException:
                if beside is not None:
                    beside.stop()
                raise
            cp_done = True
        if beside is not None and incumbent is not None and not _proven(dag, incumbent, bounds, o.gap):
            # the covering MILP beside CP-SAT first (its bound, where it stopped CP-SAT by proving the schedule), for
            # at most BESIDE_GRACE of the time left: it proves the published cases CP-SAT leaves open within seconds
            # (segnet and MobileNet at 0.8: 4-15 s in all; with approx's own search before it, 36-57 s: the
            # session-14 merge)
            if not beside.done():
                say("cover bound", incumbent, bounds)
                left = clock.left()
                beside.wait(None if left is None else BESIDE_GRACE * left)
            if beside.done() and math.isfinite(beside.bound()):
                bounds[COVER_SOURCE] = max(bounds.get(COVER_SOURCE, -math.inf), beside.bound())
        if APPROX_OWN and o.warm_start and not _proven(dag, incumbent, bounds, o.gap) and _lp_room(dag, o, clock):
            # approx alone's own search next (APPROX_OWN; it computes its own retention-gap bound), while the
            # covering MILP beside CP-SAT goes on in its child process
            say("approx", incumbent, bounds)
            try:
                own = _approx_own(dag, budget, o, clock, start, baseline if baselined else _UNKNOWN, state, notes)
            except BaseException:
                if beside is not None:
                    beside.stop()
                raise
            first, incumbent = own, _cheaper(dag, incumbent, own)
            if own is not None and own.report is not None:
                gb = max(gb, float(own.report.extras.get("gap_bound", -math.inf)))
                if math.isfinite(lp := float(own.report.extras.get("lp_bound", -math.inf))):
                    bounds["lp"] = lp
        if beside is not None:
            if incumbent is None or _proven(dag, incumbent, {**bounds, "gap": gb}, o.gap):
                beside.stop()  # (the child process killed, if it started)
            elif not beside.done():  # not proven yet: the covering MILP's result, within its share
                say("cover bound", incumbent, bounds)
                left = clock.left()
                beside.wait(None if left is None else max(0.0, left))
                beside.stop()
            if math.isfinite(beside.bound()):
                bounds[COVER_SOURCE] = max(bounds.get(COVER_SOURCE, -math.inf), beside.bound())
            notes["cover_bound"] = beside.note
            covered = beside.started
        if not _proven(dag, incumbent, {**bounds, "gap": gb}, o.gap):  # (0.9 s of a 3 s solve of VGG16 at 0.9,
            # where CP-SAT proves)
            say("lower bound", incumbent, bounds)
            from ..passes.bounds import bound_deadline, gap_bound
            gb = max(gb, gap_bound(dag, budget, upper=incumbent.cost(dag), iterations=2000,
                                   deadline=bound_deadline(clock)).bound)
            shown.append(gb)
            if not _proven(dag, incumbent, {**bounds, "gap": gb}, o.gap) and not covered:
                say("cover bound", incumbent, bounds)
                _cover_phase(dag, budget, clock, o.threads, bounds, notes)
    # approx's LP rounding: before CP-SAT where nothing fitted; after it only when unproven and with at least
    # approx's full share left (its LP's build is not interruptible: ResNet50 at 0.9 squeezed into 17 s ran
    # 27 s, 10 s past the limit)
    lp_room = not cp_done or _lp_room(dag, o, clock)
    if o.warm_start and lp_room and notes["approx"] == "not run" \
            and not (incumbent is not None and _proven(dag, incumbent, bounds, o.gap)):
        say("approx", incumbent, bounds)
        if own_first:
            # nothing fits (no baseline, no warm start, the stage search from nothing found nothing): approx
            # alone's own steps from there, on all the time left (NOTHING_FITS_OWN)
            first = _approx_own(dag, budget, o, clock, start, None, state, notes, searched=tried, nothing_fits=True,
                                search=search)
            lp_bound = -math.inf if first is None or first.report is None \
                else float(first.report.extras.get("lp_bound", -math.inf))
            if first is not None and first.report is not None:
                gb = float(first.report.extras.get("gap_bound", -math.inf))
            if first is not None and not math.isfinite(gb) and not clock.expired():
                from ..passes.bounds import bound_deadline, gap_bound
                gb = gap_bound(dag, budget, upper=first.cost(dag), iterations=2000,
                               deadline=bound_deadline(clock)).bound
                shown.append(gb)
        else:
            first, lp_bound, notes["approx"] = _approx_first(dag, budget, o, incumbent, clock, state)
        incumbent = _cheaper(dag, incumbent, first)
        if math.isfinite(lp_bound):
            bounds["lp"] = lp_bound
        if first is not None and first.report is not None:
            # approx's own retention-gap bound, whose ascent had its schedule's cost as the target (GPT-2 fine at
            # 0.8: +0.525% against +0.405% from the bound computed above without one)
            gb = max(gb, float(first.report.extras.get("gap_bound", -math.inf)))
    if incumbent is None and not clock.expired():
        # every heuristic missed the budget within approx's share: the exact feasibility race
        # (passes/feasible.py) with most of the time left, its schedule the warm start of the phases below
        left = clock.left()
        say("feasibility", incumbent, bounds)
        from ..passes.feasible import find_feasible
        feas = find_feasible(dag, budget, _highs(), threads=o.threads, race=_race(),
                             time_limit=FEASIBLE_NO_LIMIT if left is None else FEASIBLE_SHARE * left)
        notes["feasibility"] = f"{feas.status} in {feas.seconds:.1f} s" + (" (CP-SAT)" if feas.by == "race" else "")
        if feas.proven_infeasible:  # the least-budget bound (LP, simple) and above the budget, in the message
            _milp_mod().raise_infeasible(dag, budget, _highs(), o.threads, clock.left(), proven=True)
        incumbent = feas.schedule
    late_cp_room = o.time_limit is None or (clock.left() or 0.0) >= o.approx_share * o.time_limit \
        or incumbent is None
    if cp and not cp_done and not clock.expired() and late_cp_room:
        # (with less than approx's share of the limit left after a late first schedule, the local search below
        # gets it all, as approx alone's does: random small DAGs at 10 s, the race's schedule at 7.7 s, CP-SAT's
        # 1.6 s gained nothing and checkmate ended 6% above approx alone)
        left = clock.left()
        say("cp-sat", incumbent, bounds)
        incumbent, bounds["cp-sat"], notes["cp_sat"] = cpsat_phase(
            dag, budget, incumbent=incumbent, gap=o.gap, threads=o.threads,
            seconds=None if left is None else o.cpsat_share * left)
    if o.warm_start and incumbent is not None and not _proven(dag, incumbent, bounds, o.gap):
        say("local search", incumbent, bounds)
        # every schedule approx alone would start its local search from (its rounding's, its stage search's or
        # the baseline's, and the rounding over budget, repaired), not only the cheapest: the local search
        # ends in another local optimum from each (random small DAGs, 10 s: approx alone's search from its
        # stage search's +93% schedule reached +52%, checkmate's from CP-SAT's +73% only +66%)
        incumbent, notes["refine"] = _refine(dag, budget, [first, incumbent, staged, baseline], state.get("over"),
                                             clock)
    elif o.warm_start and incumbent is None and not clock.expired():
        # nothing fits yet: approx in full, whose local search also repairs rounded schedules over budget
        try:
            incumbent = _approx_mod().solve_approx(dag, budget, ApproxOptions(threads=o.threads), lp=_highs(),
                                                   clock=clock, race=_race(), search=search)
            notes["refine"] = f"approx in full (nothing fitted before): cost {incumbent.cost(dag):g}"
        except (InfeasibleError, SolverError) as e:
            notes["refine"] = f"approx in full: {e}"
    say("milp", incumbent, bounds)
    sched = _milp_mod().solve_milp(dag, budget, dataclasses.replace(o, warm_start=False), mip=backend(o.solver),
                             lp=_highs(), incumbent=incumbent, progress=progress, clock=clock,
                             bounds=bounds)
    if math.isfinite(gb):
        from ..passes.bounds import raise_bound
        raise_bound(dag, sched, gb, gap=o.gap)
    elif sched.report.cost is not None:  # (what raise_bound records of a bound that was not computed)
        sched.report.extras["gap_bound"] = gb
    sched.report.extras.update(notes)
    _say_late_baseline(dag, sched, clock)
    return sched


def _approx_alone(dag: DAG, budget: int, o: CheckmateOptions, progress: Progress | None,
                  start: Schedule | None) -> Schedule:
    """checkmate where neither of its exact phases is built (CP-SAT above CP_UNITS units or without OR-Tools,
    the MILP above MAX_MILP_COLUMNS columns): approx alone on checkmate's whole clock, which runs everything
    the portfolio would run at that size (baselines, stage search, window search where it applies, the
    retention-gap bound, the exact feasibility phase), so checkmate is never worse than approx alone in the
    same time. Before, the portfolio ran the bound and the baselines, then approx on the time left: ShuffleNetV2
    fine (2503 units) at 0.55, 60 s: +1.163% against approx's +1.148%, 1.6 s past the limit. The report says so
    (``portfolio``)."""
    why = (f"CP-SAT not built ({dag.n} units > {CP_UNITS})" if dag.n > CP_UNITS else
           "CP-SAT not built (OR-Tools is not installed: pip install 'remc[cpsat]')" if o.cpsat_share > 0 else
           "CP-SAT off")
    clock = Clock(o.time_limit)
    state: dict[str, Any] = {}
    covered, start, pre_note = _gap_cover_first(dag, budget, o, clock, start)
    known = covered.bound if covered is not None and math.isfinite(covered.bound) else -math.inf
    left = clock.left()
    kept = left is not None and dag.n <= LAST_IMPROVE_UNITS
    if kept:  # (kept for _last_improve, below)
        left = max(left - LAST_IMPROVE_SHARE * left, 0.0)
    from ..passes.evict import EvictSearch
    search = EvictSearch(dag, budget)  # (resumed where approx's share ends with nothing found)

    def approx(limit: float | None) -> Schedule:
        return _approx_fn(dag, budget, ApproxOptions(time_limit=limit, threads=o.threads, free_form=o.free_form,
                                                     window=o.window), progress, start, state,
                          enough=_enough(dag, known, o.gap) if STOP_AT_GAP else -math.inf, search=search)
    try:
        sched = approx(left)
    except NoScheduleInTime:
        if not kept or (clock.left() or 0.0) < LAST_IMPROVE_MIN_SECONDS:
            raise
        # nothing fits yet: the share kept for _last_improve goes to approx again, its stage search resumed
        sched = approx(clock.left())
    note = (f"approx alone on the whole time limit: {why}, MILP not built "
            f"({model_columns(dag)} columns > {_milp_mod().MAX_MILP_COLUMNS})") + pre_note
    if STOP_AT_GAP:
        _take_bound(dag, sched, known, o.gap)  # (the covering's bound, which the cover phase below would take too)
    left = clock.left()
    if not _within(dag, sched, o.gap) and (left is None or left >= 2 * REFINE_SECONDS):
        deeper, how = _deep_improve(dag, budget, sched, clock, state.get("improve_start"))
        sched = _take_cheaper(dag, sched, deeper, o.gap)
        note += f"; then the stage search's improve with whole repairs: {how}"
    left = clock.left()
    if not _within(dag, sched, o.gap) and (left is None or left >= 2 * REFINE_SECONDS):
        # approx's search ended by itself well before the limit (a local optimum): its local search from there,
        # at most REFINE_SECONDS, which stops long before the limit (ResNet50 fine at 0.8, 300 s: +0.0537%
        # against approx's +0.0542%); not where less is left (its evaluations at 1000 units ran 2.6 s past it)
        refined, how = _refine(dag, budget, [sched], None, clock)
        sched = _take_cheaper(dag, sched, refined, o.gap)
        note += f"; then its local search: {how}"
        sched.report.seconds = clock.elapsed()
    rep = sched.report
    if rep.cost is not None and not _within(dag, sched, o.gap):
        # the time approx left: the covering MILP's bound (passes/coverbound.py), where its model is small enough
        bounds: dict[str, float] = {}
        notes: dict[str, str] = {}
        _cover_phase(dag, budget, clock, o.threads, bounds, notes, share=1.0, gap_cover=covered)
        rep.extras.update(notes)
        _take_bound(dag, sched, bounds.get(COVER_SOURCE, -math.inf), o.gap)
    elif STOP_AT_GAP and covered is not None:
        rep.extras["cover_bound"] = f"one column per gap: {covered.status} ({covered.columns} columns); " \
                                    "no more: the schedule is within the gap"
    rep.seconds = clock.elapsed()
    if not _within(dag, sched, o.gap):
        _last_bound(dag, budget, sched, state.get("gap_bound"), clock, o.gap)
    left = clock.left()
    if not _within(dag, sched, o.gap) and left is not None and left >= LAST_IMPROVE_MIN_SECONDS:
        sched, how = _last_improve(dag, budget, sched, clock, o.gap)
        note += f"; then the stage search's improve from the best schedule with the time left: {how}"
    sched.report.extras["portfolio"] = note
    sched.strategy = "checkmate"
    return sched


STOP_AT_GAP = True
"""checkmate where approx runs alone (``_approx_alone``) stops once its schedule is within its gap target (on the
recomputation overhead) of the covering's bound (``_gap_cover_first``): approx's stage search ends there (``enough``;
its retention-gap bound and window search are then not run), and so do the phases after it (whole repairs, the local
search, the cover phase's windows). Before, every phase ran to its own end: GPT-2 fine at 0.8, 300 s, proven within
1e-4 (+0.821759% against the bound's +0.821744%) at 239 s, the schedule found by approx's stage search at 141 s
(results/p720)."""


def _enough(dag: DAG, bound: float, gap: float) -> float:
    """The highest cost that ``bound`` proves within ``gap`` of the recomputation overhead (cost - bound <= gap x
    (cost - the sum of costs), as ``_proven``); -inf without a bound."""
    if not math.isfinite(bound) or gap >= 1.0:
        return -math.inf
    return (bound - gap * float(dag.total_cost)) / (1.0 - gap)


def _within(dag: DAG, sched: Schedule, gap: float) -> bool:
    """Whether ``sched``'s report proves it within ``gap`` of the overhead (``report.within_gap``)."""
    rep = sched.report
    return rep.cost is not None and rep.bound is not None and \
        within_gap(rep.cost, rep.bound, float(dag.total_cost), gap, float(dag.cost.max()))


def _take_cheaper(dag: DAG, sched: Schedule, cand: Schedule, gap: float) -> Schedule:
    """``cand`` where it costs less than ``sched``, carrying ``sched``'s report with its cost, peak and gap updated
    and the status "optimal" where the cheaper schedule is within ``gap`` of the bound (``_take_bound``); else
    ``sched``."""
    if not cand.cost(dag) < sched.cost(dag):
        return sched
    rep = cand.report = sched.report
    rep.cost, rep.peak = cand.cost(dag), int(cand.peak(dag))
    if rep.bound is not None and math.isfinite(rep.bound):
        rep.gap = gap_of(rep.cost, rep.bound, float(dag.total_cost))
    _take_bound(dag, cand, -math.inf, gap)
    return cand


def _take_bound(dag: DAG, sched: Schedule, bound: float, gap: float) -> None:
    """``bound`` (the covering's, COVER_SOURCE) into ``sched``'s report where it is higher, with the gap on the
    overhead and the status "optimal" where that is within ``gap``."""
    rep = sched.report
    if rep.cost is None:
        return
    if math.isfinite(bound) and bound > (rep.bound if rep.bound is not None else -math.inf):
        rep.bound, rep.bound_source = min(bound, rep.cost), COVER_SOURCE
        rep.set_gap(float(dag.cost.sum()))
    if _within(dag, sched, gap):
        rep.status = "optimal"


GAP_COVER_SHARE = 0.1
"""Share of checkmate's time limit (where approx runs alone) that the covering with one column per gap
(passes/coverbound.py ``gap_cover_bound``) may take before approx, for its schedule (approx's start) and its bound
(the cover phase's, later). 1.5-7 s at 2277 units (ResNet50 and GPT-2 fine, 1 thread, loaded 2 cores)."""
GAP_COVER_START_GAP = 0.2
"""Where no start is given, the covering's schedule is approx's start only where its gap to the covering's bound
(on the overhead) is at most this: GPT-2 fine at 0.8 +0.832% against the bound's +0.822% (1.3%), at 0.9 +0.0406%
against +0.0379% (6.6%; approx from the baselines: +0.0407%); on ResNet50 fine the least R for its S recomputes
whole conv chains (+32% at 0.8 and 0.9, where approx reaches +0.054% and +0.025%): approx starts from the
baselines there."""


def _gap_cover_first(dag: DAG, budget: int, o: CheckmateOptions, clock: Clock,
                     start: Schedule | None) -> tuple[Any, Schedule | None, str]:
    """checkmate where approx runs alone (``_approx_alone``), before approx: the covering with one column per gap as a
    MILP (passes/coverbound.py ``gap_cover_bound``) within GAP_COVER_SHARE of the time limit, its solution read as a
    schedule (``cover_schedule``: the least R for its S, cleaned, checked, within the budget or none), which becomes
    approx's start (its stage search's) where it is cheaper than ``start`` (none given: GAP_COVER_START_GAP). GPT-2
    fine at 0.8: +0.832% (the covering's bound +0.822%) where approx's stage search from the baselines ends at
    +1.007% (BENCHMARKS.md, branch ``bound19``). (the CoverBound
    or None, approx's start, a note for the portfolio)."""
    left = clock.left()
    secs = COVER_NO_LIMIT if left is None else GAP_COVER_SHARE * left
    if secs < COVER_MIN_SECONDS:
        return None, start, ""
    from ..passes.coverbound import cover_schedule, gap_cover_bound
    cb = gap_cover_bound(dag, budget, _highs(), time_limit=secs, threads=o.threads, start=True)
    sched = cover_schedule(dag, budget, cb.start)
    if sched is None:
        return cb, start, f"; the covering with one column per gap first: {cb.status}, its schedule over the budget"
    cost = sched.cost(dag)
    near = math.isfinite(cb.bound) and gap_of(cost, cb.bound, float(dag.total_cost)) <= GAP_COVER_START_GAP
    taken = near if start is None else cost < start.cost(dag)
    what = "approx's start" if taken else "not cheaper than the start" if start is not None else \
        f"not approx's start (gap above {GAP_COVER_START_GAP:g})"
    return cb, sched if taken else start, (f"; the covering with one column per gap first: {cb.status}, its schedule "
                                           f"{what} (cost {cost:g})")


LAST_BOUND_MIN_SECONDS = 3.0
"""``_last_bound`` runs only with at least this many seconds left (its set-up, the pairs and the parents' tables,
is not interruptible)."""
LAST_BOUND_MARGIN = 1.0
"""Seconds before the limit at which ``_last_bound``'s ascent stops (one iteration may run past it: 0.2 s on GPT-2
fine's nested relaxation under load)."""
LAST_BOUND_ITERATIONS = 2000
"""Iterations of ``_last_bound`` without a time limit."""
ANCESTRY_SHARE = 0.3
"""Share of ``_last_bound``'s time that the ancestry bound's ascent takes first (passes/ancestry.py), from approx's
multipliers; the retention-gap ascent resumes after it (BENCHMARKS.md, branch ``bound22``)."""


def _last_bound(dag: DAG, budget: int, sched: Schedule, prev: Any, clock: Clock, gap: float) -> None:
    """checkmate's last phase where approx alone runs (``_approx_alone``): the time approx and the covering MILP
    left to the retention-gap bound's ascent (passes/bounds.py ``gap_bound(resume=...)``), from the multipliers
    approx's bound ended with (``prev``, a ``GapBound``) and with the schedule's cost as Polyak's target (approx's
    had its first baseline's), the report's bound raised where it gets higher. Any multipliers >= 0 give a valid
    bound, so the start and the target change only how high it gets. It stops at the limit or where the ascent
    stalls (passes/bounds.py RESUME_MIN_STEP, RESUME_MIN_GAIN). Before, checkmate returned with this time unused (GPT-2 fine at 0.8,
    300 s: at 271-283 s; its nested relaxation far from converged: bound14's section in BENCHMARKS.md)."""
    rep = sched.report
    left = clock.left()
    if prev is None or not prev.kind or prev.lam is None or rep.cost is None or rep.gap is None or rep.gap <= gap \
            or (left is not None and left < LAST_BOUND_MIN_SECONDS):  # (no kind: no stage over, nothing to resume)
        return
    from ..passes.ancestry import last_ancestry
    from ..passes.bounds import gap_bound, raise_bound
    share = None if left is None else time.perf_counter() + ANCESTRY_SHARE * (left - LAST_BOUND_MARGIN)
    rep.extras["ancestry"] = last_ancestry(dag, budget, sched, prev.lam, share, gap)  # (passes/ancestry.py)
    if _within(dag, sched, gap):
        return
    left = clock.left()
    deadline = None if left is None else time.perf_counter() + left - LAST_BOUND_MARGIN
    more = gap_bound(dag, budget, upper=rep.cost, iterations=LAST_BOUND_ITERATIONS if left is None else 10**9,
                     deadline=deadline, resume=prev)
    rep.extras["last_bound"] = (f"{more.kind} relaxation, {more.iterations - prev.iterations} more iterations: "
                                f"{'raised' if more.bound > prev.bound else 'not raised'}")
    raise_bound(dag, sched, more.bound, gap=gap)
    rep.seconds = clock.elapsed()


LAST_IMPROVE_SHARE = 0.15
"""Share of the time left after ``_gap_cover_first`` that checkmate's ``_approx_alone`` keeps from approx for
``_last_improve`` (graphs of at most LAST_IMPROVE_UNITS units). The stage search's improve started again from
approx's schedule gains at once: random layered n=1000 seed 1 at 0.8, from checkmate's +5.728% (120 s), +5.313%
after 5 s, +5.129% after 10 s, +4.956% after 20 s (BENCHMARKS.md, branch ``gap21``); approx alone under load
used all of its limit, so no time was left for it otherwise."""
LAST_IMPROVE_UNITS = 1000
"""Largest graph for which ``_approx_alone`` keeps LAST_IMPROVE_SHARE (ResNet50 and GPT-2 at ONNX-node granularity,
1730-2277 units, keep approx's whole share: not measured here)."""
LAST_IMPROVE_MIN_SECONDS = 5.0
"""``_last_improve`` runs only with at least this many seconds left (its start, the stage search's rows for the
schedule, is not interruptible: 1.5-4 s at 1000 units under load)."""
LAST_IMPROVE_MARGIN = 1.0
"""Seconds before the limit at which ``_last_improve``'s moves stop (one move's repair may run past it)."""


def _last_improve(dag: DAG, budget: int, sched: Schedule, clock: Clock, gap: float) -> tuple[Schedule, str]:
    """checkmate's last phase where approx alone runs (``_approx_alone``), with the time every other phase left (none
    of them runs to the limit where it has nothing more to do): the stage search's ``improve`` (the moves that fit
    first, then those that need a repair, as ``evict_search`` ends) from the best schedule, cleaned and checked; the
    cheaper of both, its report's cost, gap and status updated, and a note. At 1000 units approx's own improve is cut
    by its share of the limit while it still gains (random layered n=1000 seed 1 at 0.8, 120 s: approx returned
    +5.728% at 102 s and checkmate returned it, 17 s early; 60 s of this phase from it gave +4.956%)."""
    from ..passes.stagesearch import StageState, improve
    end = time.perf_counter() + (clock.left() or 0.0) - LAST_IMPROVE_MARGIN
    rep = sched.report
    cost0 = sched.cost(dag)
    st = StageState(dag, budget, sched.S)
    if st.peak.max() > budget:  # (the least R for its S does not fit: nothing to start from)
        return sched, "not run"
    enough = _enough(dag, rep.bound if rep.bound is not None else -math.inf, gap)
    improve(st, end, repairs=False, enough=enough)
    improve(st, end, enough=enough)
    R, S = clean(dag, st.R, st.S)
    cand = Schedule(R, S, strategy=f"{sched.strategy or 'unnamed'}, improved")
    if check(dag, R, S) or cand.peak(dag) > budget:  # improve's moves and clean keep both: a bug
        raise SolverError("checkmate: the stage search's improve returned an invalid schedule")
    if not cand.cost(dag) < cost0:
        return sched, f"cost {cost0:g} (not lowered)"
    cand = _take_cheaper(dag, sched, cand, gap)
    rep.seconds = clock.elapsed()
    return cand, f"cost {rep.cost:g}"


def _phase_reporter(dag: DAG, progress: Progress | None, clock: Clock, extra: list[float]):
    """``say(phase, incumbent, bounds)``: one ProgressEvent as each portfolio phase starts (the phases before the
    MILP report nothing of their own), with the cheapest schedule so far and the best bound; the gap on the
    overhead, as the report's; ``extra`` holds more bounds to show. A no-op without ``progress``."""
    base = float(dag.total_cost)

    def say(phase: str, incumbent: Schedule | None, bounds: dict[str, float]) -> None:
        if progress is None:
            return
        cost = None if incumbent is None else incumbent.cost(dag)
        bound = max((b for b in [*bounds.values(), *extra] if math.isfinite(b)), default=None)
        progress(ProgressEvent(clock.elapsed(), phase, cost, bound,
                               None if cost is None or bound is None else gap_of(cost, bound, base)))
    return say


STAGE_HINT_SHARE = 0.2
"""Most of checkmate's time limit that its stage search before CP-SAT may use (it usually stops sooner, at a
local optimum)."""
STAGE_HINT_NO_LIMIT = 30.0
"""Seconds of that stage search without a time limit."""
STAGE_FIRST = True
"""Where checkmate's CP-SAT phase runs (at most CP_UNITS units, OR-Tools installed) and no warm start is given, the
stage search from nothing runs before the baselines, which run only where it finds nothing. Measured (one run
each, 2 loaded cores; results/pub13/scratch/baselines*.txt): on the 11 published cases where a baseline fits
(VGG16/19, segnet, vgg_unet, FCN8, MobileNet), it ended at the same cost as the stage search from the best baseline, 1.2-4.4x sooner
(segnet 0.8 0.22 against 0.71 s, MobileNet 0.8 0.19 against 0.59 s, VGG16 0.9 0.05 against 0.13 s, Moccasin's n=100
at 0.8 0.53 against 1.3 s), and the baselines took another 0.05-1.1 s (griewank 0.04-0.5 s, lin-greedy 0.7-0.9 s
on n=100, where none fits)."""
FIRST_STAGE_SHARE = 0.05
"""Least share of checkmate's time limit for the stage search from nothing where no baseline fits (its
feasibility-first search; checkmate then takes the CP-SAT-first path from its schedule). Measured (2 loaded
cores): it found a schedule in 0.1-1.1 s on Moccasin's n=100 and two own n=100 at 0.8 and 0.9, where no baseline
fits; on Moccasin's, approx's LP rounding had taken 2.3-5.5 s before CP-SAT."""
FIRST_STAGE_APPROX = True
"""The stage search from nothing may run as long as approx alone gives it (``_approx.STAGE_SEARCH_SHARE`` of what
its exact feasibility phase leaves: 0.36 of the limit; it returns as soon as its ``improve`` ends, so a schedule
found in 0.5 s still ends it early): with 0.05 of a 10 s limit it found nothing on a 31-unit random DAG at 0.67
of its peak under load, and checkmate then ended at +376% where approx alone, whose stage search found a
schedule after 1.7 s, ended at +52% (tools/bench_portfolio.py, seed 12, case 1)."""


def _first_stage_share() -> float:
    """Share of the limit for the stage search from nothing (``FIRST_STAGE_SHARE``, ``FIRST_STAGE_APPROX``)."""
    if not FIRST_STAGE_APPROX:
        return FIRST_STAGE_SHARE
    # (from passes/options.py, not approx's module: what that imports is 0.03-0.06 s of a VGG19 solve's process)
    from ..passes.options import FEASIBLE_SHARE as APPROX_FEASIBLE
    from ..passes.options import STAGE_SEARCH_SHARE as APPROX_STAGE
    return max(FIRST_STAGE_SHARE, APPROX_STAGE * (1.0 - APPROX_FEASIBLE))


def _stage_hint(dag: DAG, budget: int, incumbent: Schedule | None, clock: Clock,
                share: float = STAGE_HINT_SHARE, search: EvictSearch | None = None) -> Schedule | None:
    """The eviction pass and stage search (passes/evict.py ``evict_search``) from ``incumbent``, within
    ``share`` of the time limit: a schedule within budget, cleaned and checked, or None. ``search``: the
    producers as an earlier phase left them (resumed, not started over)."""
    left = clock.left()
    share = STAGE_HINT_NO_LIMIT if clock.time_limit is None else share * clock.time_limit
    end = time.perf_counter() + (share if left is None else min(left, share))
    from ..passes.evict import evict_search
    found = evict_search(dag, budget, deadline=end, start=None if incumbent is None else incumbent.S, search=search)
    if found is None:
        return None
    R, S = clean(dag, found[0], found[1])
    if check(dag, R, S) or Schedule(R, S).peak(dag) > budget:  # its moves keep both: a bug
        raise SolverError("checkmate: the stage search returned an invalid schedule")
    return Schedule(R, S, strategy=f"stage search ({found[3]})")


SMALL_LP_SHARE = 0.05
"""approx's LP rounding runs after CP-SAT, with less than ``approx_share`` of the limit left, where building its LP
takes at most this share of the time left (``LP_BUILD_SECONDS_PER_COLUMN`` per column): on small graphs it takes
a fraction of a second, and its rounded schedules (over the budget too, repaired) start the local search (random
small DAGs at 10 s: approx alone's best came from its rounding over budget, repaired, where checkmate, with 2.9 s
left after CP-SAT against the 3 s share, skipped the rounding and ended 3-5% above approx)."""


def _small_lp(dag: DAG, clock: Clock) -> bool:
    """Whether approx's LP is cheap enough to build in the time left (``SMALL_LP_SHARE``)."""
    left = clock.left()
    cols = model_columns(dag)
    return left is None or (cols <= _approx_mod().MAX_LP_COLUMNS and
                            _approx_mod().LP_BUILD_SECONDS_PER_COLUMN * cols <= SMALL_LP_SHARE * left)


def _cheaper(dag: DAG, a: Schedule | None, b: Schedule | None) -> Schedule | None:
    """The cheaper of two schedules (either may be None; ``a`` on a tie)."""
    return b if a is None or (b is not None and b.cost(dag) < a.cost(dag)) else a


COVER_SHARE = 0.5
"""Share of checkmate's time left that the covering MILP's bound (passes/coverbound.py) may take, once CP-SAT and
the retention-gap bound have not proven the schedule. Measured (1 thread, loaded 2 cores): on Moccasin's random
layered n=250 at 0.9 it proves +0.846% in 7 s (Lagrangian +0.624%, the schedule +0.904%); at 0.8 +2.30% in 30 s
(Lagrangian +1.94%)."""
COVER_NO_LIMIT = 60.0
"""Seconds of that bound without a time limit."""
COVER_MIN_SECONDS = 2.0
"""The covering MILP is not started with less time than this for it."""
COVER_SOURCE = "retention-gap MILP"
COVER_DEEP = 1
"""Parent levels of the second covering MILP, run when the first (depth 1) is solved with time to spare (1: none).
Was 4; off since its bound was measured above a checked schedule's cost (passes/coverbound.py COVER_DEPTH)."""


def _cover_phase(dag: DAG, budget: int, clock: Clock, threads: int | None, bounds: dict[str, float],
                 notes: dict[str, str], share: float = COVER_SHARE, gap_cover: Any = None) -> None:
    """The covering MILP's bound (passes/coverbound.py, HiGHS in a child process) within ``share`` of the time left,
    into ``bounds`` (as COVER_SOURCE) and a note; nothing where the model is above its size limit or too little
    time is left. ``gap_cover``: ``gap_cover_bound``'s result where it was solved already (``_gap_cover_first``)."""
    if gap_cover is not None and math.isfinite(gap_cover.bound):
        bounds[COVER_SOURCE] = max(bounds.get(COVER_SOURCE, -math.inf), gap_cover.bound)
    left = clock.left()
    secs = COVER_NO_LIMIT if left is None else share * left
    if secs < COVER_MIN_SECONDS:
        notes["cover_bound"] = "not run (time limit)"
        return
    from ..passes.coverbound import cover_bound
    end = time.perf_counter() + secs
    cb = cover_bound(dag, budget, _highs(), time_limit=secs, threads=threads, depth=1)
    gcb = None
    if cb.status == "not built (too large)":
        # above its column limit: first the covering of passes/bounds.py with one column per gap as a MILP
        # (passes/coverbound.py gap_cover_bound: seconds at 2277 units; ResNet50 fine at 0.8 +0.04885% against the
        # Lagrangian's +0.04832%, GPT-2 fine at 0.8 +0.625% against +0.529%), then the same model as cover_bound's
        # cut into windows of over stages, each solved on its own (passes/coverbound.py window_bound; own random
        # layered n=500 at 0.9: +0.207% against the Lagrangian's +0.165%); the better of both
        from ..passes.coverbound import gap_cover_bound, window_bound
        gcb = gap_cover if gap_cover is not None else \
            gap_cover_bound(dag, budget, _highs(), time_limit=end - time.perf_counter(), threads=threads)
        cb = window_bound(dag, budget, _highs(), time_limit=end - time.perf_counter(), threads=threads, depth=1)
        cb.status = f"{cb.note.split(',')[0] or 'windows'}: {cb.status}"
    # (no seconds: they vary with the machine's speed, and the note goes into the plan text)
    notes["cover_bound"] = f"depth 1: {cb.status} ({cb.columns} columns)"
    if math.isfinite(cb.bound):
        bounds[COVER_SOURCE] = max(bounds.get(COVER_SOURCE, -math.inf), cb.bound) if gap_cover is not None \
            else cb.bound
    if gcb is not None:
        notes["cover_bound"] = f"one column per gap: {gcb.status} ({gcb.columns} columns); " + notes["cover_bound"]
        if math.isfinite(gcb.bound) and gcb.bound > bounds.get(COVER_SOURCE, -math.inf):
            bounds[COVER_SOURCE] = gcb.bound
    left = end - time.perf_counter()
    if COVER_DEEP > 1 and cb.status == "optimal" and left >= max(COVER_MIN_SECONDS, 2 * cb.seconds):
        # solved with time to spare: the model with parents followed COVER_DEEP levels up (GPT-2 fine at 0.9:
        # +0.0188% at depth 2, +0.0379% at depth 4 in 15-22 s, against +0.0110% at depth 1 and the Lagrangian's +0.0375%)
        deep = cover_bound(dag, budget, _highs(), time_limit=left, threads=threads, depth=COVER_DEEP)
        notes["cover_bound"] += f"; depth {COVER_DEEP}: {deep.status} ({deep.columns} columns)"
        if math.isfinite(deep.bound) and deep.bound > bounds.get(COVER_SOURCE, -math.inf):
            bounds[COVER_SOURCE] = deep.bound


COVER_BESIDE = True
"""checkmate runs the covering MILP's bound beside its CP-SAT phase (``_CoverBeside``), not only after it."""
COVER_BESIDE_DELAY = 1.0
"""CPU seconds of checkmate (this process, from its start) before the covering MILP beside CP-SAT (``_CoverBeside``)
starts: cases that CP-SAT proves sooner (VGG16/19, FCN8 of Moccasin's set: 0.2-0.6 s of solve) never import it
nor start its child process. CPU, not wall seconds: at load 9 on 2 cores VGG19 at 0.8 passed 1 s of wall, and the
import of passes/coverbound.py (scipy.sparse: 0.95 s there) and the child took CPU from CP-SAT's proof."""
BESIDE_GRACE = 0.4
"""Share of the time left after CP-SAT that checkmate waits for the covering MILP beside it before approx alone's own
search (APPROX_OWN), which then gets the rest while the MILP goes on in its child process."""
COVER_BESIDE_SHARE = 0.8
"""Share of the time left (when it starts) that the covering MILP beside CP-SAT may take: it runs in a child
process beside CP-SAT, not after it, so it takes CPU, not the other phases' wall time."""
COVER_BESIDE_COLUMNS = 30_000
"""Largest covering MILP run beside CP-SAT (columns; passes/coverbound.py's MAX_COVER_COLUMNS is for the
covering MILP run alone): ResNet50 of Moccasin's set at 0.8 has 23k and proves its optimum in 15-31 s, 1 thread."""

COVER_BESIDE_DEEP = 2
"""Parent levels of a second covering MILP beside CP-SAT (``_CoverBeside``; passes/coverbound.py COVER_DEPTH), run
without HiGHS' presolve once the first (depth 1, as before) is solved (1: none). Measured (BENCHMARKS.md, branch
``pub22``): Moccasin's random layered n=250 at 0.9 +0.9039% at depth 2, its C=2 model's schedule (126704) proven
optimal, against +0.8457% at depth 1 (12.2 against 8.1 s of CPU without presolve, one thread); at 0.8 +2.674%
against +2.229% in 60 s each; on the other published graphs and own random layered n=90-120 the same bound as depth 1
but one (own n=100 seed 2201 at 0.9: +1.510% against +1.248%), in 0.01-3.8 s of CPU against 0.01-2.9 s. After depth
1, not in its place: on an own n=250 at 0.9 (seed 2209, 60 s) depth 2 in its place ended at its time limit below
depth 1's bound. Without presolve because HiGHS 1.16's MIP presolve returned an optimum above a schedule's cost on
a depth-2 model (COVER_DEPTH)."""

COVER_HERE_COLUMNS = 2_000
"""The covering MILP beside CP-SAT is solved in this process (HiGHS in a thread of its own, not in a child process)
up to this many columns: Moccasin's n=100 has 158-343 and segnet 620, solved in a fraction of a second, where the
child's start (a Python process importing numpy and highspy) took 0.3-0.4 s of CPU from CP-SAT."""

COVER_HERE_PRESOLVE = False
"""HiGHS' MIP presolve on the covering MILP solved in this process (at most COVER_HERE_COLUMNS columns). Off:
measured (results/pub18/presolve.txt, ``_cover_first``'s solve, 1 thread, CPU of two runs each): ResNet50 of
Moccasin's set at 0.8 1.17-1.22 s with it, 0.39-0.41 s without (its presolve removed 23 of 646 columns), at 0.9
0.61-0.82 against 0.12-0.20 s; own random layered graphs of 1043 and 1192 columns 2.3-2.4 against 1.0-1.1 s and
1.7 against 0.3 s; the same bounds everywhere; slower only on one of 667 columns (0.20-0.25 against 0.25-0.30 s)."""

COVER_FIRST = True
"""checkmate runs the covering MILP (depth 1, in this process) after the stage search and before CP-SAT on graphs of
at most COVER_FIRST_UNITS units, where its model has at most COVER_HERE_COLUMNS columns (``_cover_first``). Measured
on Moccasin's graphs up to 100 units (results/pub15/scratch/coverfirst.txt, 0.01-0.16 s of CPU each): it proves the
stage search's schedule on VGG16 0.9, VGG19 0.9 and FCN8 0.8/0.9 (CP-SAT's import and probe took 0.2-0.3 s of CPU
there), and gives the optimum's cost as its bound on segnet and vgg_unet at 0.8 and 0.9 (so CP-SAT's search ends as
soon as it finds that schedule, without its bound rounds); below the optimum on VGG19 0.8 (+2.702% against +2.756%)
and Moccasin's n=100 (+1.55% against +2.30% at 0.8)."""
COVER_FIRST_UNITS = 400
"""Largest graph (units) on which checkmate's covering MILP runs before CP-SAT (COVER_FIRST). Was 100; with the
pairs merged (passes/coverbound.py COVER_MERGE) ResNet50 of Moccasin's set (353 units) at 0.8 has 646 columns
(23237 unmerged, which went to HiGHS' child beside CP-SAT: 22 s of presolve) and is solved in 1.1 s of CPU,
MobileNet (185 units) 91 columns in 0.1 s (results/pub17/mergecmp.txt)."""
COVER_DECODE = True
"""checkmate reads the covering MILP's solution before CP-SAT (COVER_FIRST) as a schedule (passes/coverbound.py
``cover_start``, ``cover_schedule``) and takes it where it fits and is cheaper than the stage search's. On the
training graphs of Moccasin's set it is the optimum (its cost equals the bound), so CP-SAT is not run: ResNet50 and
MobileNet at 0.8, where CP-SAT's C=2 model took 7-8 s and 4 s of CPU to find it from the stage search's +0.313% /
+0.401% (BENCHMARKS.md, branch ``pub17b``)."""
COVER_BEFORE_STAGE = True
"""checkmate's covering MILP first (COVER_FIRST) runs before the stage search from nothing (where no start is given),
without the stage search's cost as the point where its lazy kept-parent rows may stop (``enough``): where its solution
read as a schedule (COVER_DECODE) fits and meets its bound, that schedule is returned, proven, and neither the stage
search nor CP-SAT runs. Measured (results/pub18/pre.txt, 1 thread, CPU): the covering MILP without ``enough`` took as
long as with it (VGG19 0.8 0.09 against 0.06 s, ResNet50 0.8 0.88 against 0.95 s, n=100 0.8 0.07 against 0.03 s),
and the stage search it saves took 0.11-0.35 s on VGG16/19, 0.23-0.50 s on segnet, 0.42-0.68 s on MobileNet and
0.60-1.66 s on ResNet50. Where the decoded schedule does not prove itself (random layered graphs), the stage search
runs next as before and the covering MILP is not run again before CP-SAT."""
COVER_FIRST_SECONDS = 5.0
"""Most seconds of that covering MILP (with at most COVER_SHARE of the time left)."""


def _cover_first(dag: DAG, budget: int, clock: Clock, notes: dict[str, str], enough: float = math.inf
                 ) -> tuple[float, bool, Schedule | None]:
    """The covering MILP's bound (COVER_FIRST), -inf where it proves nothing, whether it was solved (then the
    covering MILP is not run again beside CP-SAT or after it), and its solution as a schedule where that fits the
    budget (COVER_DECODE; else None). With its kept-parent rows added lazily (passes/coverbound.py COVER_KEPT) until
    its bound reaches ``enough`` (cost units: what proves the schedule)."""
    left = clock.left()
    secs = COVER_FIRST_SECONDS if left is None else min(COVER_FIRST_SECONDS, COVER_SHARE * left)
    if secs < COVER_MIN_SECONDS:
        return -math.inf, False, None
    from ..passes.coverbound import cover_bound, cover_schedule
    try:
        cb = cover_bound(dag, budget, _CancellableMip(_highs(), threading.Event()), time_limit=secs, threads=1,
                         depth=1, max_columns=COVER_HERE_COLUMNS, kept=True, enough=enough, start=COVER_DECODE)
    except SolverError as e:
        notes["cover_bound"] = f"before CP-SAT: {e}"
        return -math.inf, False, None
    if cb.columns == 0:  # not built (above COVER_HERE_COLUMNS) or nothing to solve: beside CP-SAT as before
        return -math.inf, False, None
    notes["cover_bound"] = f"before CP-SAT, depth 1: {cb.status} ({cb.columns} columns)"
    decoded = cover_schedule(dag, budget, cb.start) if COVER_DECODE else None
    # (stopped by its time limit, its bound is kept and the covering MILP runs again beside CP-SAT, with more time)
    return (cb.bound if math.isfinite(cb.bound) else -math.inf), cb.status in ("optimal", "infeasible"), decoded


class _Cancelled(Exception):
    """The covering MILP beside CP-SAT was no longer needed."""


class _CancellableMip:
    """A MIP backend whose solve ends (``_Cancelled``) soon after ``cancel`` is set: its progress callback, which
    HiGHS' child process wrapper calls every 0.5 s, raises then (and the child is killed)."""

    def __init__(self, mip: SolverBackend, cancel: threading.Event, presolve: bool = True) -> None:
        self.mip, self.cancel, self.name, self.presolve = mip, cancel, mip.name, presolve

    def _check(self, *_a) -> None:
        if self.cancel.is_set():
            raise _Cancelled()

    def solve(self, model, **kw):
        kw["progress"] = self._check
        if self.mip.name == "highs" and model.num_col <= COVER_HERE_COLUMNS:
            from .highs import solve_highs
            return solve_highs(model, isolated=False, presolve=COVER_HERE_PRESOLVE, **kw)
        if self.mip.name == "highs" and not self.presolve:  # (in HiGHS' child process where it has a time limit)
            from .highs import solve_highs
            return solve_highs(model, presolve=False, **kw)
        return self.mip.solve(model, **kw)

    def lp_session(self, model, *, threads=None):  # pragma: no cover (the covering MILP needs none)
        return self.mip.lp_session(model, threads=threads)


class _CoverBeside:
    """The covering MILP's bound (passes/coverbound.py, depth 1, then COVER_BESIDE_DEEP without presolve) in a thread
    beside checkmate's CP-SAT phase, from COVER_BESIDE_DELAY CPU seconds after checkmate's start (not at all when ``stop`` comes first), within COVER_BESIDE_SHARE of
    the time left then; its HiGHS solve runs in a child process, so CP-SAT keeps this process' CPU. ``bound()`` is
    -inf until it is done. Measured alone (1 thread, loaded 2 cores): MobileNet 0.8 proves the optimum +0.370% in
    3.0 s, segnet 0.8 +0.207% in 1.1 s, ResNet50 0.9 +0.108% in 14.5 s and 0.8 +0.279% in 31 s, where CP-SAT's
    rounds took 4-40 s (MobileNet 0.8) or did not end in 60 s (ResNet50 0.8); on Moccasin's n=100 0.8 it gives
    +1.55% (optimum +2.30%): CP-SAT proves that one."""

    def __init__(self, dag: DAG, budget: int, clock: Clock, cpu0: float, delay: float = COVER_BESIDE_DELAY,
                 share: float = COVER_BESIDE_SHARE, max_columns: int = COVER_BESIDE_COLUMNS) -> None:
        self._cpu0 = cpu0  # time.process_time() at checkmate's start
        self._cancel = threading.Event()
        self._go = threading.Event()  # (start without the delay: CP-SAT has ended, nothing else takes the CPU)
        self._value = -math.inf
        self.note = "beside CP-SAT: not started"
        self.started = False
        self._args = (dag, budget, clock, delay, share, max_columns)
        self._thread = threading.Thread(target=self._run, daemon=True, name="remc-cover-beside")
        self._thread.start()

    def _run(self) -> None:
        dag, budget, clock, delay, share, max_columns = self._args
        while time.process_time() - self._cpu0 < delay and not self._go.is_set():
            if self._cancel.wait(0.05):
                return
        left = clock.left()
        secs = COVER_NO_LIMIT if left is None else share * left
        if secs < COVER_MIN_SECONDS:
            self.note = "beside CP-SAT: not run (time limit)"
            return
        self.started = True
        from ..passes.coverbound import cover_bound
        try:
            cb = cover_bound(dag, budget, _CancellableMip(_highs(), self._cancel), time_limit=secs, threads=1,
                             depth=1, max_columns=max_columns)
        except _Cancelled:
            self.note = "beside CP-SAT: stopped (CP-SAT proved first)"
            return
        except (SolverError, OSError) as e:
            self.note = f"beside CP-SAT: {e}"
            return
        self.note = f"beside CP-SAT, depth 1: {cb.status} ({cb.columns} columns)"
        self._value = cb.bound
        left = clock.left()
        if COVER_BESIDE_DEEP > 1 and cb.status == "optimal" and (left is None or left >= COVER_MIN_SECONDS):
            # solved with time left: the model that follows the parents' parents too (COVER_BESIDE_DEEP), without
            # HiGHS' presolve (passes/coverbound.py COVER_DEPTH); CP-SAT's proof ends it as it ends the first
            try:
                deep = cover_bound(dag, budget, _CancellableMip(_highs(), self._cancel, presolve=False),
                                   time_limit=COVER_NO_LIMIT if left is None else share * left, threads=1,
                                   depth=COVER_BESIDE_DEEP, max_columns=max_columns)
            except _Cancelled:
                self.note += f"; depth {COVER_BESIDE_DEEP}: stopped (no longer needed)"
                return
            except (SolverError, OSError) as e:
                self.note += f"; depth {COVER_BESIDE_DEEP}: {e}"
                return
            self.note += f"; depth {COVER_BESIDE_DEEP}: {deep.status} ({deep.columns} columns)"
            if math.isfinite(deep.bound):
                self._value = max(self._value, deep.bound)

    def bound(self) -> float:
        return self._value

    def done(self) -> bool:
        return not self._thread.is_alive()

    def stop(self) -> None:
        """End it (cancelled, its child process killed) and wait for its thread."""
        self._cancel.set()
        self._thread.join()

    def wait(self, timeout: float | None) -> None:
        """Its result, waited for at most ``timeout`` seconds; not yet started, it starts now (the delay counts this
        process' CPU seconds: with CP-SAT ended, an idle process took minutes to reach them, and a checkmate without
        a time limit waited that long)."""
        self._go.set()
        self._thread.join(timeout)


def _proven(dag: DAG, sched: Schedule, bounds: dict[str, float], gap: float) -> bool:
    """Whether ``bounds`` prove ``sched`` within ``gap`` of the recomputation overhead (``report.within_gap``)."""
    base = float(dag.total_cost)
    return within_gap(sched.cost(dag), max(bounds.values(), default=base), base, gap, float(dag.cost.max()))


def _approx_first(dag: DAG, budget: int, o: CheckmateOptions, incumbent: Schedule | None,
                  clock: Clock, state: dict) -> tuple[Schedule | None, float, str]:
    """approx (stage search, LP relaxation, two-phase rounding; passes/approx.py) within ``approx_share`` of
    the time limit, with its local search only when nothing fits after the rounding (it repairs; otherwise
    ``_refine`` resumes it after CP-SAT, from CP-SAT's schedule too): its schedule (None when it has none in time), the lower bound
    its LP at the budget proved (cost units; -inf when none) and a note. Failures are notes. ``state``
    receives approx's cheapest rounded schedule over the budget (``solve_approx``)."""
    left = clock.left()
    # nothing fits yet (no baseline, no warm start): approx's feasibility-first stage search needs the time
    share = o.approx_share if incumbent is not None else max(o.approx_share, NO_INCUMBENT_APPROX_SHARE)
    if dag.n > CP_UNITS and model_columns(dag) > _milp_mod().MAX_MILP_COLUMNS:
        # neither CP-SAT nor the MILP will run: approx's stage search (its improve) is worth most of the time;
        # the window search (passes/window.py) gets the rest where it runs (up to WINDOW_MAX_UNITS units)
        from ..passes.window import window_applies
        share = max(share, NO_MILP_APPROX_SHARE if window_applies(dag) else 1.0)
    limit = None if left is None else min(left, share * (o.time_limit or 0.0))
    if incumbent is None and left is not None and not (dag.n > CP_UNITS and model_columns(dag) > _milp_mod().MAX_MILP_COLUMNS):
        # keep the exact feasibility race after it as much of the time left as approx alone keeps for it
        # (``_approx.FEASIBLE_SHARE``): random small DAGs at 10 s, no baseline fitting, approx's phase from 1.6 s
        # to 7.6 s left the race 1.9 s, and checkmate had no schedule where approx alone found one
        limit = min(limit, (1.0 - _approx_mod().FEASIBLE_SHARE) * left)
    sub = Clock(limit)
    try:
        # one LP at eps 0.1 (approx's default), without its fallback over the other eps values: on Moccasin's
        # n=100 at 0.9 that fallback took 15 of the 18 s share while CP-SAT then proved the optimum
        s = _approx_mod().solve_approx(dag, budget, ApproxOptions(threads=o.threads, eps_list=(0.1,)),
                                 lp=_highs(), incumbent=incumbent, clock=sub, state=state, repair_only=True,
                                 exact_phase=False)  # checkmate runs the exact feasibility race itself
    except _approx_mod().LpUnfinished as e:
        return None, e.lp_bound, str(e)
    except (InfeasibleError, SolverError) as e:  # rounding found nothing: the later phases may
        return None, -math.inf, str(e)
    rep = s.report
    return s, float(rep.extras.get("lp_bound", -math.inf)), f"{rep.status}, cost {rep.cost:g}"


def _lp_room(dag: DAG, o: CheckmateOptions, clock: Clock) -> bool:
    """Whether approx's LP may start after CP-SAT: with at least ``approx_share`` of the limit left, or where
    it builds in a small share of the time left (``_small_lp``): its build is not interruptible (ResNet50 at 0.9
    squeezed into 17 s ran 27 s, 10 s past the limit)."""
    return o.time_limit is None or (clock.left() or 0.0) >= o.approx_share * o.time_limit or _small_lp(dag, clock)


APPROX_OWN = True
"""Where CP-SAT runs first and does not prove its schedule, checkmate runs approx alone's own search next
(``_approx_own``: approx's steps from approx alone's incumbent, with approx alone's options), before the covering
MILP's bound and its own local search from CP-SAT's schedule. So checkmate is never worse than approx
alone wherever approx alone's search ends by itself in the time left after CP-SAT's model and its steps are
deterministic (below ``STAGE_SEARCH_UNITS`` units with a baseline that fits: its stage search, whose 0.5 s slices
depend on the load, does not run). Before, checkmate ran approx's LP rounding from CP-SAT's schedule, its local
search only to repair, and resumed that search from CP-SAT's and other starts with the time left: random small
DAGs at 20 s, case 7: approx alone's search ended by itself after 8-10 s at +40.1%, checkmate at +42-47%."""
_UNKNOWN = object()
"""``_approx_own``'s ``given`` where checkmate has not run the baselines (the stage search from nothing fitted)."""


NOTHING_FITS_OWN = True
"""Where nothing fits before CP-SAT (no baseline, no warm start, and the stage search from nothing, which ran with
approx alone's share of the limit, found nothing), checkmate runs approx alone's own steps next (``_approx_own``
with ``searched``: its LP rounding, repair, exact feasibility race against CP-SAT's first schedule and local
search, with all the time left, FEASIBLE_SHARE of the whole limit kept for the race; its stage search from
nothing is not run again, nor its retention-gap bound before it),
then CP-SAT, its own local search and the MILP with whatever is left. Approx alone runs the same steps after its
baselines, its bound and the same stage search (0.36 of what the first two leave, where checkmate's had 0.36 of the
limit), and keeps FEASIBLE_SHARE of what they leave for its race; so with a steady load checkmate's stage search
runs at least as long, its LP starts earlier and its race no later, with at least as much time, and it has a
schedule wherever approx alone has one (a varying load can still reverse that: both are timed). Before, checkmate ran approx's LP rounding
within 0.6 of the time left, with its stage search from nothing again, then the race on 0.8 of what was left:
random small DAGs at 10 s, 2 of 80 with no schedule from checkmate where approx alone had one at +237% to +369%
(tools/bench_portfolio.py, seed 12, case 45: the race had 1.8 s, approx alone's found its schedule in 1.9 s)."""


def _approx_own(dag: DAG, budget: int, o: CheckmateOptions, clock: Clock, start: Schedule | None, given: Any,
                state: dict, notes: dict[str, str], searched: bool = False,
                nothing_fits: bool = False, search: EvictSearch | None = None) -> Schedule | None:
    """approx alone's own search inside checkmate (``_approx_fn``'s steps with approx alone's options, ``ApproxOptions``
    as ``_approx_alone`` builds them): from approx alone's incumbent (``given``: the best baseline or ``start``
    repaired, ``_incumbent``; computed here where it is ``_UNKNOWN``), on a clock of checkmate's time left. Its
    schedule (None when it has none in time), its note in ``notes["approx"]``; ``state`` receives its cheapest
    rounded schedule over the budget. ``searched``: as ``solve_approx`` takes it (the stage search from nothing
    already ran and found nothing); ``search``: that search's producers, which approx's stage search with the time
    left resumes (``solve_approx``). ``nothing_fits``: an InfeasibleError
    that proves a bound above the budget is raised, not noted."""
    left = clock.left()
    if left is not None and left <= 0:  # (ApproxOptions refuses a limit of 0: ShuffleNetV2 from torchvision at
        # 0.97x, 60 s, loaded, ended "the time limit must be a finite number of seconds > 0, got 0.0")
        notes["approx"] = "approx alone's search: not started (time limit reached)"
        return None
    sub = Clock(left)
    if given is _UNKNOWN:
        given = _incumbent(dag, budget, sub, start)
    ao = ApproxOptions(time_limit=left, threads=o.threads, free_form=o.free_form, window=o.window)
    # where nothing fits: the exact feasibility phase keeps approx's share of the whole limit (NOTHING_FITS_OWN)
    reserve = None if not nothing_fits or o.time_limit is None else _approx_mod().FEASIBLE_SHARE * o.time_limit
    try:
        s = _approx_mod().solve_approx(dag, budget, ao, lp=_highs(), incumbent=given, clock=sub, state=state,
                                       race=_race(), searched=searched, exact_reserve=reserve, search=search)
    except _approx_mod().LpUnfinished as e:
        notes["approx"] = f"approx alone's search: {e}"
        return None
    except (InfeasibleError, SolverError) as e:
        if nothing_fits and isinstance(e, InfeasibleError) and (e.least_feasible or 0) > budget:
            raise  # proven: the LP or the feasibility MILP at the budget is infeasible
        notes["approx"] = f"approx alone's search: {e}"
        return None
    rep = s.report
    notes["approx"] = f"approx alone's search: {rep.status}, cost {rep.cost:g}"
    return s


REFINE_SECONDS = 30.0
"""Most seconds of checkmate's local search (approx's default refine time)."""


def _refine(dag: DAG, budget: int, starts: list[Schedule | None], over: np.ndarray | None,
            clock: Clock) -> tuple[Schedule, str]:
    """approx's local search (passes/refine.py) resumed, for at most REFINE_SECONDS in all, from each of
    ``starts`` that fits (approx's schedule first: improving it again continues approx's own search where
    its share ended) and from the rounded checkpoint matrix ``over`` (over the budget) repaired, as approx
    does. Each start first gets an equal slice of the time (so that a short limit does not leave approx's
    repaired start unexplored), then the cheapest unfinished one continues (its search is deterministic, so
    it resumes where it stopped). The cheapest schedule (the cheapest of ``starts`` when nothing is
    better), and a note."""
    left = clock.left()
    end = time.perf_counter() + (REFINE_SECONDS if left is None else min(REFINE_SECONDS, left))
    from ..passes.refine import Refiner
    refiner = Refiner(dag, budget, deadline=end)
    fits = [s for s in starts if s is not None and s.peak(dag) <= budget]
    best = min(fits, key=lambda s: s.cost(dag))
    todo, seen = [], set()
    for s in fits:
        if s.S.tobytes() not in seen:
            seen.add(s.S.tobytes())
            todo.append((s.S, False, s.strategy or "unnamed"))
    if over is not None:
        todo.append((over, True, "approx's rounding over budget, repaired"))
    done: list = []  # (point, finished, origin)

    def run(p, repair: bool, until: float):
        refiner.deadline, refiner.stopped = until, None
        if repair:
            p = refiner.repair(p)
            if p is None:
                return None, True
        p = refiner.improve(p)
        return p, refiner.stopped is None

    for k, (S, repair, origin) in enumerate(todo):
        now = time.perf_counter()
        if now >= end:
            break
        p, finished = run(refiner.evaluate(S), repair, now + (end - now) / (len(todo) - k))
        if p is not None:
            done.append((p, finished, origin))
    while time.perf_counter() < end:
        open_ = [d for d in done if not d[1]]
        if not open_:
            break
        p0, _, origin = min(open_, key=lambda d: d[0].cost)
        p, finished = run(p0, False, end)
        done = [(p, finished, origin) if d[0] is p0 else d for d in done]
    for p, _, origin in done:
        if check(dag, p.R, p.S) or p.peak > budget:  # refine's moves keep both; a failure here is a bug
            raise SolverError("checkmate: the local search returned an invalid schedule")
        if p.cost < best.cost(dag):
            best = Schedule(p.R, p.S, strategy=f"{origin}, refined")
    stopped = any(not d[1] for d in done)
    # no evaluation count: it varies with the machine's speed, and the note goes into the plan text
    return best, f"cost {best.cost(dag):g}" + (", stopped by time" if stopped else "")


DEEP_SHARE = 0.6
"""Share of the time left after approx that ``_deep_improve`` may use in checkmate's ``_approx_alone``; the rest is
approx's local search's (at most REFINE_SECONDS), the covering MILP's and the bound's ascent's."""


def _deep_improve(dag: DAG, budget: int, sched: Schedule, clock: Clock,
                  start: np.ndarray | None = None) -> tuple[Schedule, str]:
    """The stage search's ``improve`` with whole repairs (``passes.stagesearch.improve(exhaustive=True)``) from
    ``start`` (an S within budget: the stage search's schedule before its own ``improve``, approx's
    ``state["improve_start"]``) or else ``sched``, cleaned (``milp_model.clean``), again from the cleaned schedule
    while that gains, within DEEP_SHARE of the time left (REFINE_SECONDS without a limit). The quick repairs'
    ``improve`` (IMPROVE_CANDIDATES, chunks, free keeps first) ends elsewhere: ResNet50 fine at 0.8 (2277 units),
    from the eviction pass's +0.07194%, it stops at +0.07135% (checkmate, 300 s, returned that at 203-252 s), from
    which whole repairs find nothing in 77 s, while from +0.07194% they reach +0.06997% in 60 s, +0.05425% once
    cleaned (results/bound18: their repairs leave values resident that nothing reads, which ``clean`` drops). The
    cheapest of ``sched`` and what this finds, and a note."""
    from ..passes.stagesearch import StageState, improve
    left = clock.left()
    end = time.perf_counter() + (REFINE_SECONDS if left is None else DEEP_SHARE * left)
    best, best_cost, rounds = sched, sched.cost(dag), 0
    from_ = sched.S if start is None else start
    R, S = clean(dag, sched.R, sched.S)
    if float(R.sum(axis=0) @ dag.cost) < best_cost:  # (clean never raises the cost)
        best = Schedule(R, S, strategy=sched.strategy)
        best_cost = best.cost(dag)
        from_ = S if start is None else start
    while time.perf_counter() < end:
        st = StageState(dag, budget, from_)
        if st.peak.max() > budget:  # (not a start within budget: nothing to improve)
            break
        improve(st, end, exhaustive=True)
        rounds += 1
        R, S = clean(dag, st.R, st.S)
        cand = Schedule(R, S, strategy=f"{sched.strategy or 'unnamed'}, improved")
        if check(dag, R, S) or cand.peak(dag) > budget:  # improve's moves and clean keep both: a bug
            raise SolverError("checkmate: the stage search's improve returned an invalid schedule")
        if rounds > 1 and not cand.cost(dag) < best_cost - 1e-12 * max(best_cost, 1.0):
            break
        if cand.cost(dag) < best_cost:
            best, best_cost = cand, cand.cost(dag)
        if not cand.cost(dag) < st.total_cost() - 1e-12 * max(best_cost, 1.0):
            break  # (clean dropped nothing: improve's local optimum, or its deadline)
        from_ = S
    return best, f"cost {best_cost:g} after {rounds} round(s)" + ("" if start is None else
                                                                  " from the stage search's start")


def _approx_fn(dag: DAG, budget: int | None, o: ApproxOptions, progress: Progress | None,
               start: Schedule | None = None, state: dict | None = None, enough: float = -math.inf,
               search: EvictSearch | None = None) -> Schedule:
    assert budget is not None
    clock = Clock(o.time_limit)
    # where neither the LP nor the feasibility MILP is built, the stage search has the time that matters: the
    # first baseline that fits (quickest first) is enough to start from (BASELINE_FIRST_FIT)
    first = BASELINE_FIRST_FIT and model_columns(dag) > max(_approx_mod().MAX_LP_COLUMNS,
                                                            _approx_mod().MAX_FEASIBLE_COLUMNS)
    incumbent = _incumbent(dag, budget, clock, start, first=first)
    sched = _approx_mod().solve_approx(dag, budget, o, lp=_highs(), incumbent=incumbent, progress=progress,
                                       clock=clock, race=_race(), state=state, enough=enough, search=search)
    _say_late_baseline(dag, sched, clock)
    return sched


def _say_late_baseline(dag: DAG, sched: Schedule, clock: Clock) -> None:
    """``late_baseline`` in ``sched``'s report: the baseline ``_incumbent`` took past the limit (LATE_FIRST_FIT), where
    ``sched`` is no cheaper than it (nothing after it improved on it)."""
    late = clock.late_baseline
    if late is not None and sched.report is not None and sched.cost(dag) >= late[1] * (1 - 1e-12):
        sched.report.extras["late_baseline"] = late[0]


BASELINE_FIRST_FIT = True
"""approx takes the first baseline that fits, not the cheapest, where no LP is built: ResNet50 at ONNX-node
granularity (2277 units) at 0.85 of its peak with a 12 s limit on 2 loaded cores: all eight baselines took
4.6-6.4 s (+29%, lin-sqrtn), and the stage search, with the rest, did not reach the +0.04% it finds in 20 s."""


def _baseline(name: str) -> StrategyFn:
    def run(dag: DAG, budget: int | None, o: BaselineOptions, progress: Progress | None) -> Schedule:
        return solve_baseline_strategy(name, dag, budget, o)
    return run


REGISTRY: dict[str, Strategy] = {
    "checkmate": Strategy(_checkmate, CheckmateOptions, needs_budget=True, warm=True),
    "approx": Strategy(_approx_fn, ApproxOptions, needs_budget=True, warm=True),
    "cpsat": Strategy(cpsat_strategy, CpSatOptions, needs_budget=True),
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
        sched = strat.fn(dag, budget, options, progress, start=start)
    else:
        sched = strat.fn(dag, budget, options, progress)
    if sched.report is not None:
        rep = sched.report  # every strategy's report gives the schedule's cost and peak (cpsat's had neither)
        if rep.cost is None:
            rep.cost = sched.cost(dag)
        if rep.peak is None:
            rep.peak = int(sched.peak(dag))
        rep.extras["peak_rss_mib"] = peak_rss_mib()
    return sched


def peak_rss_mib() -> float:
    """The solve's peak memory so far: the larger max RSS of this process and of its finished children (HiGHS's
    child process; CP-SAT runs in this one), in MiB (0.0 where ``resource`` is missing)."""
    try:
        import resource
    except ImportError:  # pragma: no cover (not on Linux)
        return 0.0
    return max(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
               resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss) / 1024


def solve_milp(dag: DAG, budget: int, *, incumbent: Schedule | None = None, progress: Progress | None = None,
               **fields: Any) -> Schedule:
    """passes.milp.solve_milp with HiGHS (or ``solver``) wired in and CheckmateOptions from ``fields``
    (for tools and tests; no baselines run)."""
    o = make_options("checkmate", **fields)
    return _milp_mod().solve_milp(dag, budget, o, mip=backend(o.solver), lp=_highs(), incumbent=incumbent,
                                  progress=progress)


def solve_approx(dag: DAG, budget: int, *, incumbent: Schedule | None = None, progress: Progress | None = None,
                 **fields: Any) -> Schedule:
    """passes.approx.solve_approx with HiGHS wired in and ApproxOptions from ``fields`` (for tools and tests)."""
    if "thresholds" in fields and fields["thresholds"] is not None:
        fields["thresholds"] = tuple(fields["thresholds"])
    return _approx_mod().solve_approx(dag, budget, make_options("approx", **fields), lp=_highs(),
                                      incumbent=incumbent, progress=progress, race=_race())


def least_budget_bound(dag: DAG, *, time_limit: float | None = None, threads: int | None = None) -> int:
    """passes.milp_model.least_budget_bound with HiGHS."""
    from ..passes.milp_model import least_budget_bound as _least_budget_bound
    return _least_budget_bound(dag, _highs(), time_limit=time_limit, threads=threads)
