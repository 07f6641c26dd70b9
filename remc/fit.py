"""Compile so that the lowered graph fits the budget on ONNX Runtime, not only in remc's live-bytes model.

The solvers keep constant + live bytes within the budget. On the device the graph also needs what ONNX
Runtime's BFC arena adds (256-byte rounding, chunks handed out whole, regions that never coalesce, kernel
scratch, pre-packed weights). ``predict`` replays the arena over the lowered graph
(``passes.arena``, with kernel memory measured per op signature on the device: ``backends.scratch``);
``compile_fit`` re-solves at a tighter solver budget while the replayed need exceeds the user's budget,
and with ``verify`` also runs the lowered graph once on the device under the cap and tightens on
out-of-memory. The plan keeps the user's budget; its report records the solver budget and the rounds.

On CUDA with remc's placement (``DeviceSettings.placement == "remc"``, the default there) the tensors do not
live in an arena: remc lays every allocation out at its own offset in one buffer (``passes.placement``,
``backends.placement``), so the need is the layout's height plus the bytes outside it, usually within a few
percent of the live bytes, and the loop converges in about one round.
"""
from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import onnx

from .ir.errors import InfeasibleError, NoScheduleInTime, PlanError, SolverError
from .passes.milp_model import simple_lower_bound
from .pipeline import Pass, State, run
from .timebudget import (
    FIRST_ROUND_SHARE,
    KERNEL_FIRST_LEAST,
    KERNEL_FIRST_SHARE,
    KERNEL_SHARE,
    LATER_ROUND_SHARE,
    ONLY_ROUND_SHARE,
    CompileClock,
)


@dataclass(frozen=True)
class ArenaPrediction:
    """The replayed arena of a lowered graph on a device, in bytes."""

    arena: int
    """Least arena limit the runs fit (regions plus reserved bytes)."""
    in_use_peak: int
    """Largest bytes in use (the profiler's ``mem_in_use_peak``)."""
    outside: int
    """Bytes held outside the arena (fed inputs; CPU initializers used in place)."""
    peak_node: str = ""
    kernel_measured: bool = True
    """Kernel scratch and pre-packing were measured on the device (False: not modeled)."""
    placement: str = "arena"
    """'arena': ``arena`` is the replayed BFC arena's least limit; 'remc': the height of remc's layout
    (``in_use_peak`` its live lower bound)."""
    fits_budget: bool | None = None
    """A training loop (``predict`` with ``steps``): whether its replay fits under the cap of the budget
    itself (None: no budget given). Under a one-region arena that is not implied by ``total`` <= budget."""
    steps: int | None = None
    """The training steps replayed (None: one graph run, as ``remc run``)."""
    kernels_unmeasured: int = 0
    """Op signatures whose kernel memory the time limit left unmeasured (not modeled; 0: all measured)."""
    layout_upper_bound: bool = False
    """remc's layout without CP-SAT's improvement, for lack of time: the run needs at most ``total``."""
    layout: Any = field(default=None, compare=False, repr=False)
    """remc's layout itself (``passes.placement.Layout``; placement 'remc' only): what ``remc compile`` stores."""
    layout_note: str = ""
    """Why the layout the model carries was set aside and derived again (empty: none stored, or it was used)."""

    @property
    def total(self) -> int:
        """What the budget must hold: the arena's least limit plus the bytes outside it."""
        return self.arena + self.outside

    @property
    def in_use_total(self) -> int:
        return self.in_use_peak + self.outside

    @property
    def peak_total(self) -> int:
        """The predicted peak to compare with a measured one: on remc's placement the layout's height (its
        buffer's high-water mark), on an arena the bytes in use; plus the bytes outside either."""
        return self.total if self.placement == "remc" else self.in_use_total


def predict_loop(step: onnx.ModelProto, device: str, steps: int, *, budget: int | None = None,
                 measure_kernels: bool | None = None, fixed_buffers: bool = True,
                 settings: Any = None) -> ArenaPrediction:
    """Replay ``steps`` steps of ``remc train``'s loop over step graph ``step`` (``backends.trainer``). With
    ``fixed_buffers`` (the default loop) two sets of state, the data and the outputs are buffers outside the
    arena and every step's arena traffic is the same; without, the carried state is the arena's from the
    second step on and drifts through it. ``arena``: the limit ``passes.arena.bisect_least`` finds (what
    ``trainer.least_cap`` measures); ``fits_budget``: whether the replay fits under the cap of ``budget``
    itself, as ``remc train`` runs it. With remc's placement (CUDA, ``settings.placed``) the loop is the
    fixed-buffer one on remc's allocator and the need is its layout's height (every step the same)."""
    from .backends import runtime
    from .backends.placement import best_layout as layout
    from .backends.trainer import train_events
    from .passes.arena import ArenaOutOfMemory, bisect_least, replay
    settings = settings or runtime.DEFAULT_SETTINGS
    steps = max(int(steps), 2)
    if measure_kernels is None:
        measure_kernels = not device.startswith("cuda") or runtime.cuda_available()
    if settings.placed_loop(device):
        ev, _, outside = train_events(step, device, measure_kernels=measure_kernels, fixed_buffers=True,
                                      settings=settings)
        lay = layout(ev)
        return ArenaPrediction(lay.height, lay.lower_bound, outside, lay.peak_what, measure_kernels, "remc",
                               fits_budget=None if budget is None else lay.height + outside <= budget, steps=steps)
    ev, carried, outside = train_events(step, device, measure_kernels=measure_kernels, fixed_buffers=fixed_buffers,
                                        settings=settings)
    cfg = runtime.arena_config(device)
    need = bisect_least(lambda cap: replay(ev, dataclasses.replace(cfg, limit=cap), runs=steps,
                                           carried=carried).fits)
    if need is None:
        raise ArenaOutOfMemory(1 << 46, 0, "no arena limit holds the training loop")
    fits = None
    at = need
    if budget is not None:
        if budget > outside:
            at_budget = replay(ev, dataclasses.replace(cfg, limit=budget - outside), runs=steps, carried=carried)
            fits = at_budget.fits
            at = budget - outside if fits else need
        else:
            fits = False
    rp = replay(ev, dataclasses.replace(cfg, limit=at), runs=steps, carried=carried)
    return ArenaPrediction(need, rp.peak_in_use, outside, rp.peak_node, measure_kernels, fits_budget=fits,
                           steps=steps)


def predict(lowered: onnx.ModelProto, device: str = "cpu", *, measure_kernels: bool | None = None,
            cap: int | None = None, settings: Any = None, deadline: float | None = None,
            layout_time_left: float | None = None, kernels: tuple[dict, int] | None = None) -> ArenaPrediction:
    """What ``lowered`` needs on ``device``: with remc's placement (CUDA, ``settings.placed``) the height of its
    layout; else ONNX Runtime's arena replayed. Kernel memory is measured on the device
    when it is here (``measure_kernels`` None: CPU always, CUDA when the provider is available). The bytes in
    use are replayed under the arena limit ``cap`` when given (on CPU the one region is the cap, and which
    chunks are handed out whole depends on its size), else under the least limit. Kernel memory of
    signatures not in the cache is measured until ``deadline`` (a ``time.perf_counter()`` value; the rest
    are counted in ``kernels_unmeasured``). ``layout_time_left`` (seconds; a compile's check): remc's layout
    may then skip CP-SAT's improvement (``backends.placement.best_layout``) and be an upper bound of the run's
    (``layout_upper_bound``). ``kernels``: ``lowered``'s kernel-memory table and its unmeasured signatures,
    where the caller has them (``input_kernels``)."""
    from .backends import runtime
    from .backends.placement import plan_layout
    from .backends.scratch import unmeasured_kernels
    from .passes.arena import graph_events, least_limit, replay
    settings = settings or runtime.DEFAULT_SETTINGS
    if measure_kernels is None:
        measure_kernels = kernels_measurable(device)
    km, unmeasured = None, 0
    if measure_kernels and kernels is not None:
        km, unmeasured = kernels
    elif measure_kernels:
        km, unmeasured, _ = unmeasured_kernels(lowered, device, settings=settings, deadline=deadline)
    ev = graph_events(lowered, device, km)
    if settings.placed(device):
        lay, note = plan_layout(lowered, ev, device, settings, time_left=layout_time_left)
        return ArenaPrediction(lay.height, lay.lower_bound, runtime.outside_bytes(lowered, device), lay.peak_what,
                               measure_kernels, "remc", kernels_unmeasured=unmeasured,
                               layout_upper_bound=lay.upper_bound_only, layout=lay, layout_note=note)
    cfg = runtime.arena_config(device, settings=settings)
    configs = [cfg]
    if not cfg.one_region:
        # Several regions: the order of their addresses (malloc's or cudaMalloc's, not ONNX Runtime's) breaks
        # ties between free chunks of equal size; replay both plausible orders and keep the larger need.
        configs.append(dataclasses.replace(cfg, mmap_threshold=None, descending_regions=False))
    best: tuple[int, Any] | None = None
    for c in configs:
        need = least_limit(ev, c)
        at = cap if cap is not None and cap >= need else need
        rp = replay(ev, dataclasses.replace(c, limit=at) if c.one_region else c)
        if best is None or (need, rp.peak_in_use) > (best[0], best[1].peak_in_use):
            best = (need, rp)
    assert best is not None
    return ArenaPrediction(best[0], best[1].peak_in_use, runtime.outside_bytes(lowered, device),
                           best[1].peak_node, measure_kernels, kernels_unmeasured=unmeasured)


def kernels_measurable(device: str) -> bool:
    """Whether kernel memory can be measured here for ``device`` (CPU always; CUDA with its provider)."""
    from .backends import runtime
    return not device.startswith("cuda") or runtime.cuda_available()


@dataclass
class FitReport:
    """How compile_fit met the budget."""

    budget: int
    solver_budget: int
    rounds: int
    prediction: ArenaPrediction | None = None
    verified: bool | None = None
    """None: not run on the device; True: one run fit the cap."""
    fixed_buffers: bool | None = None
    """With ``steps``: the training loop the plan fits (True: fixed buffers; False: fresh outputs)."""
    single: ArenaPrediction | None = None
    """With ``steps``: the replay of one run of the step graph alone (``remc run``: the state fed, outside)."""
    history: list[dict[str, Any]] = field(default_factory=list)


def compile_fit(passes: list[Pass], state: State, *, device: str = "cpu", verify: bool = False,
                max_rounds: int = 12, on_pass: Callable | None = None,
                on_round: Callable[[dict[str, Any]], None] | None = None, settings: Any = None,
                steps: int | None = None, fixed_buffers: bool | None = None,
                clock: CompileClock | None = None) -> FitReport:
    """Run the compile ``passes`` (the last three: schedule, plan, lower) at ``state.budget``; while the
    replayed arena (``predict``) plus the bytes outside it exceed the budget, or with ``verify`` a run under
    the cap runs out of memory, re-solve at a lower solver budget: the plan's live peak less the excess (at
    least 0.5% of the budget), or, once a solver budget proved infeasible for the strategy, the midpoint
    between it and the smallest solver budget whose plan was still too big. PlanError when ``max_rounds``
    rounds find no plan that fits. ``on_round`` is called before each re-solve with the round about to run,
    the need that made it necessary, the budget and the new solver budget. ``settings``: the
    ``backends.runtime.DeviceSettings`` the plan will run with (placement, cuDNN search). ``steps``: the lowered
    graph is a step graph that ``remc train`` runs ``steps`` times; the replay is of that loop (``predict_loop``,
    with ``fixed_buffers`` or not; None: both, and the loop that fits is chosen, fixed buffers first:
    ``FitReport.fixed_buffers``) and a plan fits when the loop's replay fits under the cap of the budget itself
    and one run alone (``remc run`` of the step graph) fits the budget too.

    ``clock`` (remc/timebudget.py; default: the state's, else none): the compile's one clock. Kernel memory
    is measured first, on the input graph (its signatures are the lowered graph's), until the clock's
    KERNEL_SHARE; the first solve runs at the budget less the input graph's arena excess (``_anticipate``)
    with FIRST_ROUND_SHARE of the time left, each re-solve with LATER_ROUND_SHARE of what is left then,
    warm from the previous round's schedule; each phase is recorded on the clock."""
    clock = clock if clock is not None else state.clock
    budget = int(state.budget)
    report = FitReport(budget, budget, 1)
    kernel_deadline = _measure_kernels(state, device, clock, settings)
    if kernels_measurable(device):
        t_scratch = None if clock is None else clock.elapsed()
        dag_with_measured_scratch(state, device, settings, kernel_deadline)
        if clock is not None and t_scratch is not None:
            clock.record("solver scratch", t_scratch)
    if steps is not None and state.dag is not None:  # the training loop binds every output before the step
        state.dag = state.dag.kept_from_start()
    if clock is not None and steps is None:
        state.budget = report.solver_budget = _anticipate(state, device, clock, kernel_deadline, report, settings)
    # keep back what plan, lower and the arena check will take: about two arena replays' time
    # (the input graph's prediction: the arena estimate, or the ratio budget's measure where it was reused)
    reserve = _first_reserve(state, clock)
    first_share = SLACK_FIRST_SHARE if _saving_expected(report) and _slack_room(clock, reserve) else FIRST_ROUND_SHARE
    first_solver = int(state.budget)
    try:
        raised_from, first_error = _solve_raising(timed_passes(passes, state, clock, share=first_share,
                                                               reserve=reserve), state, report, on_pass, on_round,
                                                  clock, device, settings, reserve)
    except (InfeasibleError, NoScheduleInTime) as e:
        raise _at_user_budget(e, budget, first_solver, device) from None
    # solver budgets: plan too big at; strategy infeasible at
    too_big, infeasible = (budget, None) if raised_from is None else (1 << 62, raised_from)
    upward: list[int] | None = None  # solver budgets above the first round's, once the downward search ends
    stride, last_need = 1, None  # the step doubles while the need does not fall (it is flat over a range)
    layout_noted = False
    floor = simple_lower_bound(state.dag)  # no schedule needs less in remc's model: a solver budget below it is
    # infeasible for every strategy, so the downward search never spends a round solving there
    for rnd in range(1, max_rounds + UPWARD_ROUNDS + 1):
        report.rounds = rnd
        t0 = None if clock is None else clock.elapsed()
        pred = predict(state.lowered, device, settings=settings, deadline=kernel_deadline,
                       layout_time_left=_layout_time_left(clock)) if steps is None else \
            _loop_prediction(state.lowered, device, steps, budget, fixed_buffers, report, settings)
        if pred.layout_upper_bound and not layout_noted and clock is not None:
            layout_noted = True
            clock.notes.append("layout: the time left cut CP-SAT's layout solve short, so the plan was checked with "
                               "the best layout found by then (the greedy one, or CP-SAT's so far), stored in the "
                               "model for the run; a run that derives its own layout needs at most as much")
        if clock is not None and t0 is not None:
            clock.record("arena check", t0)
        report.prediction = pred
        excess = pred.total - budget
        if pred.fits_budget is False:  # the loop's fit is not monotone in the cap: it must fit at the budget
            excess = max(excess, 1)
        if steps is not None:  # one step alone (``remc run`` of the step graph, state fed) must fit too
            report.single = predict(state.lowered, device, settings=settings)
            excess = max(excess, report.single.total - budget)
        entry: dict[str, Any] = {"round": rnd, "solver_budget": int(state.budget), "predicted": pred.total,
                                 "live_peak": int(state.sim.peak) if state.sim is not None else None,
                                 "fits_at_budget": pred.fits_budget,
                                 "single": report.single.total if steps is not None and report.single else None}
        if excess <= 0 and verify:
            t0 = None if clock is None else clock.elapsed()
            short, why = _verify(state.lowered, device, budget, settings=settings)
            if clock is not None and t0 is not None:
                clock.record("verify", t0)
            entry["verified"] = short is None
            if why:
                entry["verify_error"] = why
            report.verified = short is None
            if short is not None:
                excess = max(short, 1)
        report.history.append(entry)
        if excess <= 0:
            break
        live = int(state.sim.peak) if state.sim is not None else int(state.budget)
        too_big = min(too_big, live)
        stride = stride * 2 if last_need is not None and pred.total >= last_need else 1
        last_need = pred.total
        while True:
            new: int | None
            if upward is not None:
                new = upward.pop(0) if upward else None
            elif infeasible is None:
                new = too_big - stride * max(excess, budget // 200)
                if new < floor:  # every schedule needs the floor: bisect between it and the plan instead
                    infeasible = floor - 1
                    new = (infeasible + too_big) // 2
            else:
                new = (infeasible + too_big) // 2
            if upward is None and first_error is None and (
                    rnd >= max_rounds or new is None or new <= int(state.dag.constant)
                    or (infeasible is not None and too_big - infeasible <= max(budget // 1000, 256))):
                upward = _upward_budgets(report, budget)  # the need is not monotone in the solver budget
                new = upward.pop(0) if upward else None
            # no round starts when what the steps after a solve took (plan, lower, arena check) no longer fits in
            # the time left: ShuffleNetV2 b4 at 6 MiB, 30 s, ran 5 rounds and ended at 38 s
            out_of_time = clock is not None and clock.time_limit is not None and \
                (clock.left() or 0.0) < _after_solve(clock) + MIN_ROUND_SECONDS
            if new is None or out_of_time or rnd >= max_rounds + UPWARD_ROUNDS or (upward is None and (
                    rnd >= max_rounds or new <= int(state.dag.constant)
                    or (infeasible is not None and too_big - infeasible <= max(budget // 1000, 256)))):
                best, why_not = _least_need(report.history, budget)
                if first_error is not None:  # solved above the budget, and no plan fits: the first cause stands
                    state.budget = budget
                    why = (f"{first_error}; above it in remc's model (solver budgets up to {report.solver_budget} "
                           f"bytes) the best plan needs {best} bytes on ONNX Runtime {device}; least feasible "
                           f"for {state.schedule.strategy if state.schedule else 'the strategy'} found: {best} bytes")
                    err = InfeasibleError(why, first_error.least_feasible) if isinstance(first_error, InfeasibleError) \
                        else NoScheduleInTime(why)
                    raise _at_user_budget(err, budget, first_solver, device)
                what = "remc's layout" if pred.placement == "remc" else "replayed arena"
                fails = [h["verify_error"] for h in report.history if h.get("verify_error")]
                raise _with_report(PlanError(f"no plan of strategy {state.schedule.strategy!r} fits {budget} bytes on ONNX "
                                f"Runtime {device}: after {rnd} round(s)"
                                + (" (the time limit left no time for another)" if out_of_time else "")
                                + f" the best needs {best} bytes there "
                                f"({what} plus inputs and parameters{why_not}; its live bytes in remc's model: "
                                f"{min(h['live_peak'] for h in report.history if h.get('live_peak'))}, and no "
                                f"schedule needs less than {floor} there); least "
                                f"feasible for {state.schedule.strategy} found: {best} bytes"
                                 + (f"; the run under the cap failed: {fails[-1]}" if fails else "")), report)
            state.budget = new
            report.solver_budget = new
            if on_round is not None:
                on_round({"round": rnd + 1, "predicted": pred.total, "budget": budget, "solver_budget": new})
            try:
                run(timed_passes(passes[-3:], state, clock, share=_later_share(clock), warm=True,
                                 reserve=_after_solve(clock)), state, on_pass=on_pass)
                break
            except (InfeasibleError, SolverError):
                if upward is None:
                    infeasible = new
                report.history.append({"round": rnd, "solver_budget": new, "infeasible": True})
    if steps is None and not verify:
        _use_slack(passes, state, report, device, settings, kernel_deadline, clock, on_pass, on_round)
        _use_time_left(passes, state, report, device, settings, kernel_deadline, clock, on_pass, on_round)
    state.budget = budget
    _annotate(state, report)
    return report


SLACK_ROUNDS = 2
"""Re-solves ``compile_fit`` may spend above a fitting plan's solver budget to use the budget's slack."""

SLACK_MIN = 0.01
"""The least slack (a share of the budget) worth a re-solve."""

SLACK_FIRST_SHARE = 0.5
"""The first solve's share of the time when the input graph needs less on the device than in remc's live-bytes
model (``_saving_expected``): the rest is for ``_use_slack``'s re-solve above it."""


def _saving_expected(report: FitReport) -> bool:
    """Whether the input graph needed at least SLACK_MIN of the budget less on the device than its live bytes
    (``_anticipate``'s record): a plan solved at the budget will likely leave slack to spend."""
    return _input_graph_saving(report) >= SLACK_MIN * report.budget


SLACK_LEAST_SECONDS = 1.0
"""Seconds beyond twice what the steps after a solve take that ``_use_slack`` needs left to start its re-solve."""


def _slack_room(clock: CompileClock | None, reserve: float) -> bool:
    """Whether a re-solve of ``_use_slack`` could start after a first solve with SLACK_FIRST_SHARE of the time
    left less ``reserve`` (what the steps after a solve will take): the rest of that time must hold twice
    ``reserve`` and SLACK_LEAST_SECONDS, ``_use_slack``'s own condition. Where it cannot, the first solve gets
    FIRST_ROUND_SHARE: GPT-2 b8 (fine) at 15.5 GiB with a 30 s limit at a load of 25 on 2 cores reached its solve
    at 17 s, SLACK_FIRST_SHARE gave it 4.0 s (approx: the ap-sqrtn baseline, +16.1%), and the compile ended at 27 s
    with no slack round (results/p720)."""
    if clock is None or clock.time_limit is None:
        return True
    avail = max(clock.time_limit - clock.elapsed() - reserve, 0.0)
    return (1.0 - SLACK_FIRST_SHARE) * avail >= 2 * reserve + SLACK_LEAST_SECONDS


def _use_slack(passes: list[Pass], state: State, report: FitReport, device: str, settings: Any,
               kernel_deadline: float | None, clock: CompileClock | None, on_pass: Callable | None,
               on_round: Callable[[dict[str, Any]], None] | None) -> None:
    """Spend what the fitting plan leaves of the budget: while the device needs at least ``SLACK_MIN`` of the
    budget less than the budget (remc's live-bytes model counts outputs ONNX Runtime does not allocate, so a plan
    solved at the budget often needs much less on the device), re-solve at the solver budget plus that slack,
    warm from the plan; keep the new plan when it fits the budget and costs less, else restore the fitting one.
    At most ``SLACK_ROUNDS`` re-solves, each with FIRST_ROUND_SHARE of the time left (the last solves of the
    compile), none once the clock has run out. Recorded in ``report.history`` (``slack``: True)."""
    budget = int(report.budget)
    for _ in range(SLACK_ROUNDS):
        pred = report.prediction
        if pred is None or state.schedule is None or state.dag is None:
            return
        slack = budget - pred.total
        if slack < SLACK_MIN * budget or (clock is not None and clock.time_limit is not None
                                          and (clock.left() or 0.0) < 2 * _after_solve(clock) + SLACK_LEAST_SECONDS):
            return
        if state.schedule.cost(state.dag) <= state.dag.total_cost * (1 + 1e-9):
            return  # nothing recomputed: no cheaper plan above it
        entry = _re_solve(passes, state, report, device, settings, kernel_deadline, clock, on_pass, on_round,
                          int(report.solver_budget) + int(slack), FIRST_ROUND_SHARE, "slack")
        if not entry.get("kept"):
            return


CONTINUE_MIN_SECONDS = 2.0
"""The least time left (beyond what the steps after a solve take) worth ``_use_time_left``'s re-solve."""


def _use_time_left(passes: list[Pass], state: State, report: FitReport, device: str, settings: Any,
                   kernel_deadline: float | None, clock: CompileClock | None, on_pass: Callable | None,
                   on_round: Callable[[dict[str, Any]], None] | None) -> None:
    """Spend the time the fit did not need: when the plan fits but its solve was cut short (status time_limit)
    and at least CONTINUE_MIN_SECONDS are left after what the steps after a solve take, re-solve once at the
    same solver budget, warm from the plan, with ONLY_ROUND_SHARE of the time left; keep the new plan when it
    fits and costs less. (The first solve got a share of the limit that kept time for rounds that did not run:
    a ConvNeXt-style torch export at a 20 s limit ended after 12 s with a 24% gap.) Recorded in
    ``report.history`` (``continued``: True)."""
    sched = state.schedule
    if clock is None or clock.time_limit is None or sched is None or state.dag is None or report.prediction is None:
        return
    if (clock.left() or 0.0) < 2 * _after_solve(clock) + CONTINUE_MIN_SECONDS:
        return
    if sched.report is None or sched.report.status != "time_limit" or \
            sched.cost(state.dag) <= state.dag.total_cost * (1 + 1e-9):
        return  # proven, finished without a proof (more time would not change it), or nothing recomputed
    _re_solve(passes, state, report, device, settings, kernel_deadline, clock, on_pass, on_round,
              int(report.solver_budget), ONLY_ROUND_SHARE, "continued")


def _re_solve(passes: list[Pass], state: State, report: FitReport, device: str, settings: Any,
              kernel_deadline: float | None, clock: CompileClock | None, on_pass: Callable | None,
              on_round: Callable[[dict[str, Any]], None] | None, solver_budget: int, share: float,
              why: str) -> dict[str, Any]:
    """One more solve of a fitting plan at ``solver_budget``, warm from it, with ``share`` of the time left; the
    new plan is kept (``entry["kept"]``) when it fits the budget and costs less, else the fitting plan
    (schedule, plan, lowered graph, prediction) is restored. Returns the history entry (``why``: True)."""
    assert state.schedule is not None and state.dag is not None and report.prediction is not None
    budget, pred, cost = int(report.budget), report.prediction, state.schedule.cost(state.dag)
    kept = (state.schedule, state.plan, state.sim, state.lowered, report.solver_budget, pred)
    state.budget = solver_budget
    if on_round is not None:
        on_round({"round": report.rounds + 1, "predicted": pred.total, "budget": budget,
                  "solver_budget": solver_budget, why: True})
    entry: dict[str, Any] = {"round": report.rounds + 1, "solver_budget": solver_budget, why: True}
    try:
        run(timed_passes(passes[-3:], state, clock, share=share, warm=True, reserve=_after_solve(clock)), state,
            on_pass=on_pass)
    except (InfeasibleError, SolverError):
        entry["infeasible"] = True
        report.history.append(entry)
        state.schedule, state.plan, state.sim, state.lowered, report.solver_budget, report.prediction = kept
        return entry
    report.rounds += 1
    checks = [] if clock is None else [p.seconds for p in clock.phases if p.name == "arena check"]
    if clock is not None and clock.time_limit is not None and checks and RECHECK_GIVES_WAY and \
            (clock.left() or 0.0) < checks[-1] + _write_estimate(clock):
        # no time for this plan's arena check (as long as the last one) and the write: the checked plan stays
        entry["unchecked"] = True
        report.history.append(entry)
        clock.notes.append(f"{why} round: its plan was not checked against the device (its arena check would end past "
                           "the time limit), so the plan checked before it was kept")
        state.schedule, state.plan, state.sim, state.lowered, report.solver_budget, report.prediction = kept
        return entry
    t0 = None if clock is None else clock.elapsed()
    new_pred = predict(state.lowered, device, settings=settings, deadline=kernel_deadline,
                       layout_time_left=_layout_time_left(clock))
    if clock is not None and t0 is not None:
        clock.record("arena check", t0)
    new_cost = state.schedule.cost(state.dag)
    entry.update(predicted=new_pred.total, live_peak=int(state.sim.peak) if state.sim is not None else None,
                 cost=new_cost, kept=new_pred.total <= budget and new_cost < cost)
    report.history.append(entry)
    if not entry["kept"]:
        state.schedule, state.plan, state.sim, state.lowered, report.solver_budget, report.prediction = kept
    else:
        report.solver_budget, report.prediction = solver_budget, new_pred
    return entry


RECHECK_GIVES_WAY = True
"""A slack or continued round (``_re_solve``) whose plan's arena check (as long as the last one) and the write no
longer fit in the time left is not checked: the plan checked before it is kept, and the clock's notes say so."""


UPWARD_ROUNDS = 3
"""Rounds ``compile_fit`` may spend above the first round's solver budget once lowering it found no plan."""


def _upward_budgets(report: FitReport, budget: int) -> list[int]:
    """Solver budgets above the lowest one tried, not tried yet: the device's need is not monotone in the solver
    budget (a tighter live-bytes schedule may place its peak where the layout or the arena needs more: VGG16 test
    size on remc's CPU placement, approx: 1045888 bytes at a solver budget of 790 KiB, 1077888 at 700 KiB), so
    once lowering it fails, a few higher ones are tried: between the first round's and the user's budget, or,
    when the first round solved at the budget itself (``remc train``'s loop), between the lowest solver budget
    that gave a plan and the budget (ViT-B/16 zoo step at 1.44 GB on ONNX Runtime's arena, approx: one step
    needed 1472660808 bytes at the budget and 1590905160 at 1406999328, and nothing in between was tried)."""
    solved = [h["solver_budget"] for h in report.history if "predicted" in h]
    if not solved:
        return []
    first = solved[0]
    lo, hi = (first, budget) if first < budget else (min(solved), first)
    tol = max(budget // 1000, 256)
    if hi - lo <= tol:
        return []
    tried = [h["solver_budget"] for h in report.history]
    step = (hi - lo) / (UPWARD_ROUNDS + 1)
    out = []
    for k in range(1, UPWARD_ROUNDS + 1):
        b = int(lo + k * step)
        if all(abs(b - t) > tol for t in tried):
            out.append(b)
    return out


def _anticipate(state: State, device: str, clock: CompileClock, kernel_deadline: float | None,
                report: FitReport, settings: Any = None) -> int:
    """The first round's solver budget in a time-limited compile: the budget less what ONNX Runtime needs
    beyond the live bytes on the input graph in its own order (a re-solve round costs a solve, a plan, a
    lowering and an arena check: ResNet50 fine at batch 256, 16 GiB: the input graph's excess is 1.27 GB,
    the first plan's 1.00 GB, and the plan at the budget less 1.27 GB fits). Recorded on the report. (Where
    ONNX Runtime needs less than the live bytes, the first solve stays at the budget: solving above it by the
    input graph's saving overshot on a torch TransformerEncoder, 21.9 MiB for a 20 MiB budget, with no time
    left to re-solve; ``_use_slack`` spends the saving from a plan that fits instead.)"""
    from .ir.schedule import checkpoint_all
    from .pipeline import shaped_model
    assert state.dag is not None and state.budget is not None
    t0 = clock.elapsed()
    budget = int(state.budget)
    pred = state.input_need  # (the ratio budget's measure: the same graph, and no kernel measured since)
    if pred is None or pred.kernels_unmeasured:
        try:
            if kernels_measurable(device):
                km, left, _, shaped = input_kernels(state, device, settings, kernel_deadline)
                pred = predict(shaped, device, settings=settings, kernels=(km, left),
                               layout_time_left=_layout_time_left(clock))
            else:
                pred = predict(shaped_model(state.graph), device, settings=settings, deadline=kernel_deadline,
                               layout_time_left=_layout_time_left(clock))
        finally:
            clock.record("arena estimate", t0)
    excess = pred.total - int(checkpoint_all(state.dag).peak(state.dag))
    first = budget - excess if excess > 0 and budget - excess > int(state.dag.constant) else budget
    report.history.append({"round": 0, "input_graph_excess": int(excess), "solver_budget": int(first)})
    return first


def unmodified_need(state: State, device: str, settings: Any = None) -> int:
    """The bytes the input graph as it is (every tensor kept, its own order) needs on ``device``: ``predict`` of
    it, kernel memory measured as ``compile_fit`` measures it (until the clock's KERNEL_SHARE) and remc's layout
    within the time left. What ``remc compile --budget 0.8x`` takes the ratio of."""
    from .pipeline import shaped_model
    clock = state.clock
    assert state.graph is not None
    kernel_deadline = _measure_kernels(state, device, clock, settings)
    t0 = None if clock is None else clock.elapsed()
    try:
        km, left, _, shaped = input_kernels(state, device, settings, kernel_deadline) \
            if kernels_measurable(device) else (None, 0, 0, shaped_model(state.graph))
        state.input_need = predict(shaped, device, settings=settings, deadline=kernel_deadline,
                                   layout_time_left=None if clock is None else clock.left(),
                                   kernels=None if km is None else (km, left))
        return int(state.input_need.total)
    finally:
        if clock is not None and t0 is not None:
            clock.record("unmodified graph's need", t0)


KERNEL_NOTE = "kernel memory:"
"""How the clock's note on unmeasured kernel signatures starts."""


def measure_kernels_first(state: State, device: str, settings: Any = None) -> None:
    """Measure kernel memory on the imported graph before its op costs are profiled, until the clock's
    KERNEL_FIRST_SHARE (``remc compile``, before the costs and units passes; ``compile_fit`` measures the rest
    until KERNEL_SHARE). A plan is checked against the device with the kernel memory measured by then, and a
    signature left unmeasured has no scratch in the check (a plan that needs more than predicted), while an op
    left unprofiled is priced by its FLOPs (a plan that costs more than the optimum): the measurement comes
    first. A torchvision EfficientNet-B0 (b8, 96 px) compiled with a 60 s limit at a load of 10 spent 10.2 s
    on costs and 7.6 s on units, measured 76 of 461 signatures in the 1.9 s left to it, and its plan needed
    133708480 bytes under ``remc run`` for a budget of 107.2 MiB."""
    _measure_kernels(state, device, state.clock, settings, share=KERNEL_FIRST_SHARE, least=KERNEL_FIRST_LEAST)


def _measure_kernels(state: State, device: str, clock: CompileClock | None, settings: Any = None, *,
                     share: float = KERNEL_SHARE, least: float = 0.0) -> float | None:
    """Measure kernel memory on the input graph until the clock's ``share``, or ``least`` of the limit from
    now if that is later (cached, so ``predict`` on the lowered graph finds it); the ``time.perf_counter()``
    deadline ``predict`` keeps to afterwards (None: no clock). A note on the clock when the limit left
    signatures unmeasured (it replaces an earlier one: the measurement runs up to three times in a compile,
    each from the cache)."""
    if clock is None or state.graph is None or not kernels_measurable(device):
        return None
    at = clock.until(share)
    if at is not None and clock.time_limit is not None and least > 0:
        at = min(max(at, clock.elapsed() + least * clock.time_limit), clock.time_limit)
    deadline = clock.perf_deadline(at)
    t0 = clock.elapsed()
    _, left, total, _ = input_kernels(state, device, settings, deadline)
    clock.record("kernel memory", t0, at)
    clock.notes[:] = [n for n in clock.notes if not n.startswith(KERNEL_NOTE)]
    if left:
        clock.notes.append(f"{KERNEL_NOTE} the time limit left {left} of {total} op signatures unmeasured (measured "
                           "smallest first, the ops that may need scratch before the elementwise ones): the arena "
                           "prediction has no kernel scratch "
                           "for them, so the plan may need more than predicted; the measurements are cached, and "
                           "one that this limit cut short is not started again with as little time: a compile "
                           "with a longer --time-limit measures the rest")
    return deadline


@dataclass
class InputKernels:
    """The input graph's kernel-memory table as ``input_kernels`` keeps it on the state (``State.input_kernels``)."""
    graph: Any
    """The graph it is of (``State.graph``, by identity)."""
    target: tuple[str, Any]
    """(device, settings) it was measured for."""
    table: dict
    total: int
    """Signatures in all."""
    shaped: onnx.ModelProto
    left: int
    """Signatures left unmeasured at ``deadline``."""
    deadline: float | None
    keys: dict[str, str]
    """``scratch.kernel_keys`` of ``shaped``: not computed again by a later call."""


def input_kernels(state: State, device: str, settings: Any = None, deadline: float | None = None
                  ) -> tuple[dict, int, int, onnx.ModelProto]:
    """(the input graph's kernel-memory table, signatures left unmeasured at ``deadline``, signatures in all, the
    shaped model it is of): ``backends.scratch.unmeasured_kernels`` on ``shaped_model(state.graph)``, kept on the
    state (``State.input_kernels``; with signatures left unmeasured, for calls whose deadline is no later:
    INPUT_KERNELS_KEPT), with its keys (``scratch.kernel_keys``), so that the compile's later reads of the
    same table (the kernel-memory phases, the unmodified graph's need, the solver's scratch, the device floor)
    do not build it again: each took 0.15-0.5 s of CPU on a torchvision Swin-T (shape inference and one cache
    look-up per node), 1-2 s of wall under a load of 9."""
    from .backends import runtime
    from .backends.scratch import unmeasured_kernels
    from .pipeline import shaped_model
    settings = settings or runtime.DEFAULT_SETTINGS
    memo = state.input_kernels
    same = memo is not None and memo.graph is state.graph
    if same and memo.target == (device, settings) and (
            not memo.left or (INPUT_KERNELS_KEPT and deadline is not None and memo.deadline is not None
                              and deadline <= max(memo.deadline, time.perf_counter()))):
        return memo.table, memo.left, memo.total, memo.shaped
    shaped = memo.shaped if same else shaped_model(state.graph)
    keys: dict[str, str] = memo.keys if same and memo.target == (device, settings) else {}  # (filled by the first call)
    km, left, total = unmeasured_kernels(shaped, device, deadline=deadline, settings=settings, keys=keys)
    state.input_kernels = InputKernels(state.graph, (device, settings), km, total, shaped, left, deadline, keys)
    return km, left, total, shaped


INPUT_KERNELS_KEPT = True
"""``input_kernels`` with signatures left unmeasured is read again from the state, not rebuilt, by a call whose
deadline is no later than the one that built it (or has passed): it could measure nothing more. Each rebuild
(shape inference, 2277 signatures hashed, the cache read) took 0.45-0.7 s of a ResNet50 b256 fine compile at a load
of 5 and ran three times after the kernel-memory phases (solver scratch, the arena estimate, the device floor)."""


def dag_with_measured_scratch(state: State, device: str, settings: Any = None,
                              deadline: float | None = None) -> int:
    """Rebuild ``state.dag`` with each node's kernel scratch measured on ``device`` (``backends.scratch``,
    cached; until ``deadline``) in its unit's workspace W_v, where it exceeds ``passes.dagbuild.kernel_scratch``'s
    rule: cuDNN's workspace of a forward convolution (518 MB for U-Net b4 416x608's block1/conv2), which the
    rule puts at 0, is then seen by the solver and not only by the layout; on CPU, MLAS' im2col buffers (U-Net
    test size b2: the least budget approx fits fell from 1226752 to 1178880 bytes). The pre-packed weight copies
    session creation makes (``prepacked_bytes``) join the constant overhead. How many nodes got more scratch
    than the rule."""
    if state.graph is None or state.units is None:
        return 0
    from .passes.dagbuild import build_dag, kernel_scratch
    km, _, _, shaped = input_kernels(state, device, settings, deadline)
    by_name = {n.name: n for n in state.graph.nodes}
    scratch = {name: int(k.scratch) for name, k in km.items()
               if name in by_name and k.scratch > kernel_scratch(by_name[name], device)}
    packed = prepacked_bytes(shaped, km, device, settings)
    granule, rounding = allocation_rounding(state.graph, device, settings)
    if scratch or packed or rounding or granule > 1:
        state.dag = build_dag(state.graph, state.costs or {}, state.units, granularity=state.granularity,
                              device=device, scratch=scratch, prepacked=packed, granule=granule, rounding=rounding)
    return len(scratch)


def allocation_rounding(graph: Any, device: str, settings: Any = None) -> tuple[int, int]:
    """(granule, rounding) for ``passes.dagbuild.build_dag`` on remc's CPU placement, where every block is a
    multiple of 256 bytes: the kept outputs (graph outputs) rounded to it, and the bytes the small initializers
    copied into remc's buffer (``passes.arena.initializer_in_arena``) take beyond their size (GPT-2 test size:
    57 initializers of 1469 bytes in 14592). (1, 0) elsewhere (live tensors are not rounded in the model)."""
    from .backends import runtime
    from .ir.device import parse_device
    from .passes.arena import MIN_ALLOCATION, initializer_in_arena, rounded
    settings = settings or runtime.DEFAULT_SETTINGS
    if not settings.placed(device) or parse_device(device)[0] != "cpu":
        return 1, 0
    small = [v.nbytes for v in graph.params if initializer_in_arena(v.nbytes, device)]
    return MIN_ALLOCATION, sum(rounded(b) - b for b in small)


def prepacked_bytes(graph: onnx.ModelProto, km: dict, device: str, settings: Any = None) -> int:
    """The bytes of the weight copies that session creation packs and keeps for ``graph`` on remc's placement:
    one 256-byte-rounded block per distinct (op, weight, attributes) whose kernel's measured ``prepack`` is
    positive, as ``passes.placement`` lays them out ('pre-packed weight' blocks). A recomputed copy of such a
    node packs the same weight again and frees it at session creation (the kernels share the first copy), so
    the count does not depend on the plan. 0 on ONNX Runtime's arena (its replay counts them itself)."""
    from .backends import runtime
    from .passes.arena import graph_events, rounded
    settings = settings or runtime.DEFAULT_SETTINGS
    if not settings.placed(device):
        return 0
    ev = graph_events(graph, device, km)
    return sum(rounded(s) for s, again in zip(ev.prepack_sizes, ev.prepack_shared) if not again)


MIN_ROUND_SECONDS = 0.5
"""Least time a fit round's solve is worth, beyond what the steps after it take (``_after_solve``)."""


def _after_solve(clock: CompileClock | None) -> float:
    """Seconds the steps after the last solve took (plan, lower, arena check, verify), and the output's write
    (``_write_estimate``): what a later round keeps back from its solve's share. 0 before any solve."""
    if clock is None:
        return 0.0
    last = max((k for k, p in enumerate(clock.phases) if p.name == "schedule"), default=None)
    return 0.0 if last is None else sum(p.seconds for p in clock.phases[last + 1:]) + _write_estimate(clock)


PLAN_LOWER_SECONDS_PER_UNIT = 3.5e-4
"""CPU seconds per unit that generating, validating and lowering a plan take (``plan`` and ``lower``): ResNet50 fine
(2277 units) 1.6 s of wall at about half a core (results/time21), GPT-2 fine (1730 units) 4.6-9.1 s at a load of 25.
Times the compile's measured slowdown (``CompileClock.slowdown``) in the first solve's reserve."""


def _plan_lower_estimate(state: State, clock: CompileClock | None) -> float:
    """What ``plan`` and ``lower`` after the first solve will take: PLAN_LOWER_SECONDS_PER_UNIT a unit times the
    compile's slowdown (0 without a clock or a DAG)."""
    if clock is None or state.dag is None:
        return 0.0
    return PLAN_LOWER_SECONDS_PER_UNIT * state.dag.n * clock.slowdown()


def _first_reserve(state: State, clock: CompileClock | None) -> float:
    """What the first solve keeps back for the steps after it: the arena check, about twice the input graph's
    prediction (the arena estimate, or the ratio budget's measure where it was reused: a lowered graph with
    recomputations has more blocks; times how much the compile's slowdown grew since it), plan and lower
    (``_plan_lower_estimate``) and the output's write
    (``_write_estimate``). Without plan and lower, Swin-T from torchvision at 0.9x, 60 s, at a load of 21-26 ended at
    53-63 s (results/any20)."""
    if clock is None:
        return 0.0
    check = sum(p.seconds for p in clock.phases if p.name == "arena estimate") * clock.grown("arena estimate") \
        or sum(p.seconds for p in clock.phases if p.name == "unmodified graph's need") \
        * clock.grown("unmodified graph's need")
    return 2 * check + _plan_lower_estimate(state, clock) + _write_estimate(clock)


def _layout_time_left(clock: CompileClock | None) -> float | None:
    """The time an arena check's layout may count on (``predict``'s ``layout_time_left``): the time left less the
    output's write (``_write_estimate``); None without a limit. CP-SAT's layout stops at EXACT_WALL_SHARE of it."""
    if clock is None or clock.time_limit is None:
        return None
    return max((clock.left() or 0.0) - _write_estimate(clock), 0.0)


def _write_estimate(clock: CompileClock | None) -> float:
    """What writing the lowered model (``remc compile``'s last phase) will take: what reading the input took
    (``import``: the same weights, and shape inference besides), times how much the compile's slowdown grew since
    (``CompileClock.grown``). Kept back by every round's solve: Swin-T from torchvision (115 MB) at a load of 25
    wrote for 2.3-6.7 s after the fit and ended at 61-65 s of a 60 s limit."""
    return 0.0 if clock is None else sum(p.seconds for p in clock.phases if p.name == "import") * clock.grown("import")


def _later_share(clock: CompileClock | None, after: float | None = None) -> float:
    """A later round's share of the time left less what the steps after a solve take (``_after_solve``):
    LATER_ROUND_SHARE where the rest would still hold another round (those steps again and MIN_ROUND_SECONDS),
    else FIRST_ROUND_SHARE, as a first round that is the only one: no round can follow it, so the half it would
    keep back is of no use. EfficientNetV2-S
    from torchvision at 0.9x, 60 s: round 1's plan needed 0.1% more than the budget, 7.5 s were left, of which the
    steps after a solve took 5.3 s, and round 2's solve got half of the 2.2 s: its warm start's repair did not
    finish and it returned a baseline (1.380x of ideal against 1.002x). ``after``: those steps' seconds where the
    caller has its own estimate."""
    if clock is None or clock.time_limit is None:
        return LATER_ROUND_SHARE
    after, left = _after_solve(clock) if after is None else after, clock.left() or 0.0
    rest = (1 - LATER_ROUND_SHARE) * max(left - after, 0.0)
    return LATER_ROUND_SHARE if rest >= after + MIN_ROUND_SECONDS else FIRST_ROUND_SHARE


def timed_passes(passes: list[Pass], state: State, clock: CompileClock | None, *, share: float,
                 warm: bool = False, reserve: float = 0.0) -> list[Pass]:
    """``passes`` with the schedule pass's time limit cut to ``share`` of the clock's time left less
    ``reserve`` (when its strategy has a time limit), and, ``warm``, starting from the schedule the state
    holds."""
    from .pipeline import SchedulePass
    passes = list(passes)
    i = next((k for k, p in enumerate(passes) if isinstance(p, SchedulePass)), None)
    if i is None:
        return passes
    sp = passes[i]
    assert isinstance(sp, SchedulePass)
    opts = sp.options
    secs, at = (None, None) if clock is None else clock.solve_limit(share, reserve)
    if secs is not None and opts is not None and any(f.name == "time_limit" for f in dataclasses.fields(opts)):
        opts = dataclasses.replace(opts, time_limit=secs)
    else:
        at = None
    passes[i] = dataclasses.replace(sp, options=opts, start=state.schedule if warm else None, deadline_at=at)
    return passes


def run_round(passes: list[Pass], state: State, clock: CompileClock | None, *, share: float,
              warm: bool = False, on_pass: Callable | None = None, reserve: float = 0.0) -> None:
    """Run ``passes`` (from schedule on) as ``timed_passes`` sets them up."""
    run(timed_passes(passes, state, clock, share=share, warm=warm, reserve=reserve), state, on_pass=on_pass)


def _with_report(err: PlanError, report: FitReport) -> PlanError:
    err.fit_report = report  # type: ignore[attr-defined]  (the rounds, for tools that record them)
    return err


def _least_need(history: list[dict[str, Any]], budget: int) -> tuple[int, str]:
    """(the least bytes a round's plan needed on the device, and why that plan did not fit when its loop's
    least cap is within the budget): a fit round must fit the loop at the budget itself and one step alone."""
    rounds = [h for h in history if "predicted" in h]
    h = min(rounds, key=lambda h: max(h["predicted"], h.get("single") or 0))
    need = max(h["predicted"], h.get("single") or 0)
    why = []
    if h.get("fits_at_budget") is False and h["predicted"] <= budget:
        why.append(f"its training loop's least cap is {h['predicted']} bytes, but at a cap of the budget itself "
                   f"the loop runs out of memory (the arena's fit is not monotone in the cap)")
    if (h.get("single") or 0) > budget:
        why.append(f"one step alone needs {h['single']} bytes")
    return need, ("; " + "; ".join(why)) if why else ""


def _loop_prediction(lowered: onnx.ModelProto, device: str, steps: int, budget: int, fixed_buffers: bool | None,
                     report: FitReport, settings: Any = None) -> ArenaPrediction:
    """The replayed training loop ``compile_fit`` judges: the one asked for, or (``fixed_buffers`` None) fixed
    buffers when they fit the budget, else fresh outputs when they do, else the one that needs less."""
    from .backends import runtime
    placed = (settings or runtime.DEFAULT_SETTINGS).placed_loop(device)  # remc's allocator: fixed buffers only
    loops = [True] if placed else [True, False] if fixed_buffers is None else [fixed_buffers]
    best: tuple[bool, ArenaPrediction] | None = None
    for fixed in loops:
        p = predict_loop(lowered, device, steps, budget=budget, fixed_buffers=fixed, settings=settings)
        if p.fits_budget:
            best = (fixed, p)
            break
        if best is None or p.total < best[1].total:
            best = (fixed, p)
    assert best is not None
    report.fixed_buffers = best[0]
    return best[1]


RAISE_ATTEMPTS = 3
"""Solves above the user's budget (``_solve_raising``) before its InfeasibleError stands."""
RAISE_SAVING_SHARES = (0.5, 1.0)
"""The first raises above the user's budget, as shares of the input graph's saving on the device (the raise after
them: 0.5% of the budget). A plan with recomputations saves less there than the input graph: Swin-T from
torchvision at 0.9x (the input graph 14.8 MB less on the device than its live bytes) found no schedule at the
budget in 13 s under a load of 27, and the raise by the whole saving gave a plan of 394.3 MB live bytes that needed
384.3 MB on the device for a budget of 380.7 MB, with no time left for a round below it; the stage search finds a
schedule at 388-389 MB in 0.2-0.6 s of CPU (2.3k rows; at 386 MB 3.3 s, 19.5k rows). Then the whole saving
(RegNetY-400MF: the least feasible budget was 1.5 MB above its budget, its saving 8.7 MB)."""


def _solve_raising(passes: list[Pass], state: State, report: FitReport, on_pass: Callable | None,
                   on_round: Callable[[dict[str, Any]], None] | None, clock: CompileClock | None = None,
                   device: str = "cpu", settings: Any = None, reserve: float = 0.0
                   ) -> tuple[int | None, InfeasibleError | NoScheduleInTime | None]:
    """Run ``passes`` at ``state.budget``. When the strategy finds no schedule there in remc's live-bytes
    model (infeasible, or none found within its time limit) although the user's budget holds what every plan
    needs on ``device`` (``device_floor``), solve at a higher solver budget (the
    strategy's least feasible budget or its bound, else 0.5% more), at most ``RAISE_ATTEMPTS`` times: the
    live-bytes model counts what ONNX Runtime does not allocate (outputs of in-place and aliasing
    kernels), so a plan above the budget there may still fit on the device, which the replay then decides. The
    first raise is by at least the input graph's saving on the device (``_input_graph_saving``).
    (the last solver budget that was infeasible, the first InfeasibleError), both None when the first solve
    succeeded; the first InfeasibleError is raised when every attempt fails. Each attempt gets
    LATER_ROUND_SHARE of what is left on ``clock`` then (not the first solve's limit again), and none starts once
    the clock has run out."""
    budget = int(state.budget)
    try:
        run(passes, state, on_pass=on_pass)
        return None, None
    except (InfeasibleError, NoScheduleInTime) as e:
        dag = state.dag
        if dag is None or budget <= int(dag.constant):
            raise
        least, why = device_floor(state, device, settings)
        if least > report.budget:  # what every plan needs on the device exceeds the budget: nothing to raise for
            e.args = (f"{e}; every plan needs at least {least} bytes on the device ({why}), above the budget of "
                      f"{report.budget} bytes, so no higher solver budget was tried",) + e.args[1:]
            raise
        first, err, last = _detached(e), e, budget
    # the input graph's saving on the device (``_anticipate``): where ONNX Runtime needs that much less than the
    # live bytes, a plan solved that much higher may fit the budget there (RegNetY-400MF from torchvision: the
    # live-bytes model holds 85.2 MB without recomputation, the device 76.5 MB; at --budget 0.95x no strategy
    # found a schedule within 72.7 MB in remc's model, and raises of 0.5% ended "least feasible 74.2 MB"); a plan
    # with recomputations saves less than the input graph, so first by a part of it (RAISE_SAVING_SHARES)
    saving = _input_graph_saving(report)
    for k in range(RAISE_ATTEMPTS):
        if clock is not None and clock.time_limit is not None and clock.left() == 0:
            break
        least = err.least_feasible if isinstance(err, InfeasibleError) else None
        by_saving = budget + int(RAISE_SAVING_SHARES[k] * saving) if k < len(RAISE_SAVING_SHARES) else 0
        new = max(int(least) if least is not None else 0, last + max(budget // 200, 256), by_saving)
        state.budget = report.solver_budget = new
        if on_round is not None:
            on_round({"round": 1, "predicted": new, "budget": budget, "solver_budget": new, "raised": True})
        try:
            # (no plan yet, so no steps after a solve measured: the first round's estimate of them, ``reserve``;
            # without it Swin-T's raised solve at a load of 25 took half of what was left and the compile ended
            # at 61-65 s of a 60 s limit)
            after = _after_solve(clock) or reserve
            run(timed_passes(passes[-3:], state, clock, share=_later_share(clock, after), reserve=after),
                state, on_pass=on_pass)
            return last, first
        except (InfeasibleError, NoScheduleInTime) as e:
            err, last = _detached(e), new
    state.budget = budget
    raise first


def device_floor(state: State, device: str = "cpu", settings: Any = None) -> tuple[int, str]:
    """(bytes, why): a lower bound on what any plan of ``state.dag`` needs on ``device``, whatever ONNX Runtime
    saves on remc's live-bytes model (``passes.arena``: outputs aliasing an input, ``ALIAS_OPS``, and outputs
    written in place, ``IN_PLACE``). Every plan holds the DAG's constant (inputs, parameters, pre-packed weights)
    and each graph output from its computation to the end; while a node runs, its inputs, its outputs and its
    kernel's scratch are allocated too. So for each node that neither aliases nor may write in place, with
    ``k`` its unit (in a frontier-advancing plan units before ``k`` were computed by then): the constant, the
    graph outputs of units before ``k`` that no aliasing or in-place node produced, the distinct buffers of
    the node's other inputs (an alias or in-place output is its input's buffer), its outputs and its measured
    scratch (cached measurements only; none where unmeasured). The largest of those, and the constant with every
    graph output. Without the graph: the constant and the graph outputs."""
    dag = state.dag
    assert dag is not None
    kept_all = int(dag.constant) + int(dag.kept.sum())
    what = "the always-resident bytes and the graph's outputs, which ONNX Runtime allocates whatever the schedule"
    graph = state.graph
    if graph is None or state.units is None or not dag.members:
        return kept_all, what
    import math

    from .ir.device import parse_device
    from .ir.sizes import format_size
    from .passes.arena import ALIAS_OPS, IN_PLACE
    shared = ALIAS_OPS | IN_PLACE.get(parse_device(device)[0], frozenset())
    km: dict = {}
    if kernels_measurable(device):
        km, _, _, _ = input_kernels(state, device, settings, -math.inf)
    kept = graph.kept
    by_name = {n.name: n for n in graph.nodes}

    def root(v):
        while v.producer is not None and v.producer.op_type in shared and v.producer.inputs \
                and v.producer.inputs[0] is not None:
            v = v.producer.inputs[0]
        return v

    best, why = kept_all, what
    before = int(dag.constant)  # the constant and the graph outputs of the units so far
    for k, members in enumerate(dag.members):  # (unit k's graph outputs: dag.kept[k], 0 where the DAG holds them
        # in its constant from the start, ``DAG.kept_from_start``)
        nodes = [by_name[m] for m in members if m in by_name]
        for n in nodes:
            if n.op_type in shared:
                continue
            ins = {id(r): r for r in (root(v) for v in n.inputs if v is not None)
                   if r.producer is not None and r not in kept}
            outs = sum(v.nbytes for v in n.outputs if v is not None)
            scratch = int(km[n.name].scratch) if n.name in km else 0
            need = before + sum(r.nbytes for r in ins.values()) + outs + scratch
            if need > best:
                best = need
                why = (f"{format_size(before)} always resident or graph outputs computed by then, and node "
                       f"{n.name!r} ({n.op_type}) needs its {len(ins)} input buffer(s) "
                       f"{format_size(sum(r.nbytes for r in ins.values()))}, its outputs {format_size(outs)} and "
                       f"scratch {format_size(scratch)} while it runs; ONNX Runtime saves nothing on them")
        before += min(int(dag.kept[k]), sum(v.nbytes for n in nodes for v in n.outputs
                                            if v is not None and v in kept and n.op_type not in shared))
    return best, why


def _input_graph_saving(report: FitReport) -> int:
    """How many bytes less than its live bytes the input graph needed on the device (``_anticipate``'s record;
    0 where it needed more, or was not measured)."""
    first = next((h for h in report.history if "input_graph_excess" in h), None)
    return max(0, -int(first["input_graph_excess"])) if first is not None else 0


def _at_user_budget(err: InfeasibleError | NoScheduleInTime, budget: int, first_solver: int,
                    device: str) -> InfeasibleError | NoScheduleInTime:
    """``err``, raised at a solver budget below the user's ``budget`` (the first solve's budget less what the
    device holds beyond remc's live-bytes model), with the user's budget leading its message."""
    if first_solver >= budget:
        return err
    why = (f"no plan fits the budget of {budget} bytes on ONNX Runtime {device}: the unmodified graph holds "
           f"{budget - first_solver} bytes on the device beyond remc's live-bytes model (kernel scratch, pre-packed "
           f"weights, allocator rounding), so the first solve had {first_solver} bytes; {err}")
    if isinstance(err, InfeasibleError):
        return InfeasibleError(why, err.least_feasible)
    return NoScheduleInTime(why)


def _detached(err: BaseException) -> BaseException:
    """``err`` (and the exceptions it was raised from or during) without their tracebacks. A failed solve's
    exception that the fit keeps (its message stands if no later round fits) would otherwise keep the
    strategy's frames alive through every later round, and their locals with them: approx's LP relaxation
    and its HiGHS instance, about 1.1 GiB on GPT-2 at sequence 512 (``tools/fit_memory.py``)."""
    e: BaseException | None = err
    seen: set[int] = set()
    while e is not None and id(e) not in seen:
        seen.add(id(e))
        e.__traceback__ = None
        e = e.__cause__ or e.__context__
    return err


def _verify(lowered: onnx.ModelProto, device: str, budget: int, runs: int = 8,
            settings: Any = None) -> tuple[int | None, str]:
    """Run ``lowered`` on ``device`` under the cap of ``budget`` as ``remc run`` does (on an arena: a profiled
    session, then a session run ``runs`` times: later runs start from the regions the first one left; with
    remc's placement: a session on remc's buffer of the cap, run ``runs`` times): (None, '') if every run fits,
    else how many bytes it was short (at least 1) and the error."""
    from .backends import runtime
    settings = settings or runtime.DEFAULT_SETTINGS
    try:
        cap = runtime.arena_cap(lowered, device, budget)
        feeds = runtime.random_inputs(lowered, 0)
        if not settings.placed(device):
            runtime.profiler_peak(lowered, device, feeds=feeds, mem_limit=cap, settings=settings)
        sess, alloc = runtime.capped_session(lowered, device, cap, settings, native=False)  # no JIT in the clock
        r = runtime.Runner(sess, feeds, device, mem_limit=cap, allocator=alloc)
        for _ in range(runs):
            r()
        return None, ""
    except runtime.NoProfilerStats:
        return None, ""
    except runtime.OutOfMemory as e:
        if e.requested is not None and e.available is not None:
            return max(e.requested - e.available, 1), str(e)
        return max(budget // 100, 1), str(e)


def _annotate(state: State, report: FitReport) -> None:
    """Record the user's budget in the plan, and the fit in its report."""
    plan = state.plan
    if plan is None:
        return
    p = report.prediction
    extra = {"solver_budget": report.solver_budget, "fit_rounds": report.rounds,
             "placement": p.placement if p else None,
             "arena_predicted": p.arena if p else None, "arena_in_use_predicted": p.in_use_peak if p else None,
             "outside_arena": p.outside if p else None, "verified": report.verified}
    state.plan = dataclasses.replace(plan, budget=report.budget, report={**plan.report, **extra})
