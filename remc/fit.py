"""Compile so that the lowered graph fits the budget on ONNX Runtime, not only in remc's live-bytes model.

The solvers keep constant + live bytes within the budget. On the device the graph also needs what ONNX
Runtime's BFC arena adds (256-byte rounding, chunks handed out whole, regions that never coalesce, kernel
scratch, pre-packed weights). ``predict`` replays the arena over the lowered graph
(``passes.arena``, with kernel memory measured per op signature on the device: ``backends.scratch``);
``compile_fit`` re-solves at a tighter solver budget while the replayed need exceeds the user's budget,
and with ``verify`` also runs the lowered graph once on the device under the cap and tightens on
out-of-memory. The plan keeps the user's budget; its report records the solver budget and the rounds.
"""
from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import onnx

from .ir.errors import InfeasibleError, PlanError, SolverError
from .pipeline import Pass, State
from .timebudget import FIRST_ROUND_SHARE, KERNEL_SHARE, LATER_ROUND_SHARE, CompileClock


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
    kernels_unmeasured: int = 0
    """Op signatures whose kernel memory the time limit left unmeasured (not modeled; 0: all measured)."""

    @property
    def total(self) -> int:
        """What the budget must hold: the arena's least limit plus the bytes outside it."""
        return self.arena + self.outside

    @property
    def in_use_total(self) -> int:
        return self.in_use_peak + self.outside


def predict(lowered: onnx.ModelProto, device: str = "cpu", *, measure_kernels: bool | None = None,
            cap: int | None = None, deadline: float | None = None) -> ArenaPrediction:
    """Replay ONNX Runtime's arena over ``lowered`` on ``device``. Kernel memory is measured on the device
    when it is here (``measure_kernels`` None: CPU always, CUDA when the provider is available), signatures
    not in the cache until ``deadline`` (a ``time.perf_counter()`` value; the rest are counted in
    ``kernels_unmeasured``). The bytes in use are replayed under the arena limit ``cap`` when given (on CPU
    the one region is the cap, and which chunks are handed out whole depends on its size), else under the
    least limit."""
    from .backends import runtime
    from .backends.scratch import unmeasured_kernels
    from .passes.arena import graph_events, least_limit, replay
    if measure_kernels is None:
        measure_kernels = kernels_measurable(device)
    km, unmeasured = None, 0
    if measure_kernels:
        km, unmeasured, _ = unmeasured_kernels(lowered, device, deadline=deadline)
    ev = graph_events(lowered, device, km)
    cfg = runtime.arena_config(device)
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
                           best[1].peak_node, measure_kernels, unmeasured)


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
    history: list[dict[str, Any]] = field(default_factory=list)


def compile_fit(passes: list[Pass], state: State, *, device: str = "cpu", verify: bool = False,
                max_rounds: int = 12, on_pass: Callable | None = None,
                on_round: Callable[[dict[str, Any]], None] | None = None,
                clock: CompileClock | None = None) -> FitReport:
    """Run the compile ``passes`` (the last three: schedule, plan, lower) at ``state.budget``; while the
    replayed arena (``predict``) plus the bytes outside it exceed the budget, or with ``verify`` a run under
    the cap runs out of memory, re-solve at a lower solver budget: the plan's live peak less the excess (at
    least 0.5% of the budget), or, once a solver budget proved infeasible for the strategy, the midpoint
    between it and the smallest solver budget whose plan was still too big. PlanError when ``max_rounds``
    rounds find no plan that fits. ``on_round`` is called before each re-solve with the round about to run,
    the need that made it necessary, the budget and the new solver budget.

    ``clock`` (remc/timebudget.py; default: the state's, else none): the compile's one clock. Kernel memory
    is measured first, on the input graph (its signatures are the lowered graph's), until the clock's
    KERNEL_SHARE; the first solve gets FIRST_ROUND_SHARE of the time left and each re-solve
    LATER_ROUND_SHARE of what is left then, warm from the previous round's schedule; each phase is
    recorded on the clock."""
    clock = clock if clock is not None else state.clock
    budget = int(state.budget)
    kernel_deadline = _measure_kernels(state, device, clock)
    sched_at = len(passes) - 3
    report = FitReport(budget, budget, 1)
    first = budget if clock is None else _anticipate(state, device, clock, kernel_deadline, report)
    state.budget = first
    # keep back what plan, lower and the arena check will take: about two arena replays' time
    reserve = 0.0 if clock is None else 2 * sum(p.seconds for p in clock.phases if p.name == "arena estimate")
    try:
        run_round(passes, state, clock, share=FIRST_ROUND_SHARE, on_pass=on_pass, reserve=reserve)
    except (InfeasibleError, SolverError):
        if first == budget:
            raise
        report.history.append({"round": 1, "solver_budget": first, "infeasible": True})
        state.budget = first = budget  # the anticipated budget was too tight for the strategy: the user's
        run_round(passes, state, clock, share=FIRST_ROUND_SHARE, on_pass=on_pass, reserve=reserve)
    report.solver_budget = first
    too_big, infeasible = budget, None  # solver budgets: plan too big at; strategy infeasible at
    for rnd in range(1, max_rounds + 1):
        report.rounds = rnd
        t0 = None if clock is None else clock.elapsed()
        pred = predict(state.lowered, device, deadline=kernel_deadline)
        if clock is not None:
            clock.record("arena check", t0)
        report.prediction = pred
        excess = pred.total - budget
        entry: dict[str, Any] = {"round": rnd, "solver_budget": int(state.budget), "predicted": pred.total,
                                 "live_peak": int(state.sim.peak) if state.sim is not None else None}
        if excess <= 0 and verify:
            t0 = None if clock is None else clock.elapsed()
            short = _verify(state.lowered, device, budget)
            if clock is not None:
                clock.record("verify", t0)
            entry["verified"] = short is None
            report.verified = short is None
            if short is not None:
                excess = max(short, 1)
        report.history.append(entry)
        if excess <= 0:
            break
        live = int(state.sim.peak) if state.sim is not None else int(state.budget)
        too_big = min(too_big, live)
        while True:
            if infeasible is None:
                new = too_big - max(excess, budget // 200)
            else:
                new = (infeasible + too_big) // 2
            if rnd == max_rounds or new <= int(state.dag.constant) or \
                    (infeasible is not None and too_big - infeasible <= max(budget // 1000, 256)):
                best = min(h["predicted"] for h in report.history if "predicted" in h)
                raise PlanError(f"no plan of strategy {state.schedule.strategy!r} fits {budget} bytes on ONNX "
                                f"Runtime {device}: after {rnd} round(s) the best needs {best} bytes there "
                                f"(replayed arena plus inputs and parameters; its live bytes in remc's model: "
                                f"{min(h['live_peak'] for h in report.history if h.get('live_peak'))})")
            state.budget = new
            report.solver_budget = new
            if on_round is not None:
                on_round({"round": rnd + 1, "predicted": pred.total, "budget": budget, "solver_budget": new})
            try:
                run_round(passes[sched_at:], state, clock, share=LATER_ROUND_SHARE, warm=True, on_pass=on_pass,
                          reserve=_after_solve(clock))
                break
            except (InfeasibleError, SolverError):
                infeasible = new
                report.history.append({"round": rnd, "solver_budget": new, "infeasible": True})
    state.budget = budget
    _annotate(state, report)
    return report


def _anticipate(state: State, device: str, clock: CompileClock, kernel_deadline: float | None,
                report: FitReport) -> int:
    """The first round's solver budget in a time-limited compile: the budget less what ONNX Runtime's arena
    needs beyond the live bytes on the input graph in its own order (a re-solve round costs a solve, a plan,
    a lowering and an arena check: ResNet50 fine at batch 256, 16 GiB: the input graph's excess is 1.27 GB,
    the first plan's 1.00 GB, and the plan at the budget less 1.27 GB fits). Recorded on the report."""
    from .ir.schedule import checkpoint_all
    from .pipeline import shaped_model
    t0 = clock.elapsed()
    budget = int(state.budget)
    try:
        pred = predict(shaped_model(state.graph), device, deadline=kernel_deadline)
    finally:
        clock.record("arena estimate", t0)
    excess = pred.total - int(checkpoint_all(state.dag).peak(state.dag))
    first = budget - excess if excess > 0 and budget - excess > int(state.dag.constant) else budget
    report.history.append({"round": 0, "input_graph_excess": int(excess), "solver_budget": int(first)})
    return first


def _measure_kernels(state: State, device: str, clock: CompileClock | None) -> float | None:
    """Measure kernel memory on the input graph until the clock's KERNEL_SHARE (cached, so ``predict`` on
    the lowered graph finds it); the ``time.perf_counter()`` deadline ``predict`` keeps to afterwards
    (None: no clock). A note on the clock when the limit left signatures unmeasured."""
    if clock is None or state.graph is None or not kernels_measurable(device):
        return None
    from .backends.scratch import unmeasured_kernels
    from .pipeline import shaped_model
    at = clock.until(KERNEL_SHARE)
    deadline = clock.perf_deadline(at)
    t0 = clock.elapsed()
    _, left, total = unmeasured_kernels(shaped_model(state.graph), device, deadline=deadline)
    clock.record("kernel memory", t0, at)
    if left:
        clock.notes.append(f"kernel memory: the time limit left {left} of {total} op signatures unmeasured (the "
                           "largest tensors; measured smallest first): the arena prediction has no kernel scratch "
                           "for them, so the plan may need more than predicted; the measurement is cached, so a "
                           "later compile measures more")
    return deadline


def _after_solve(clock: CompileClock | None) -> float:
    """Seconds the steps after the last solve took (plan, lower, arena check, verify): what a later round
    keeps back from its solve's share."""
    if clock is None:
        return 0.0
    last = max((k for k, p in enumerate(clock.phases) if p.name == "schedule"), default=None)
    return 0.0 if last is None else sum(p.seconds for p in clock.phases[last + 1:])


def run_round(passes: list[Pass], state: State, clock: CompileClock | None, *, share: float,
              warm: bool = False, on_pass: Callable | None = None, reserve: float = 0.0) -> None:
    """Run ``passes`` (from schedule on) with the schedule pass's time limit cut to ``share`` of the clock's
    time left (when its strategy has one), and, ``warm``, starting from the schedule the state holds."""
    from .pipeline import SchedulePass, run
    passes = list(passes)
    i = next((k for k, p in enumerate(passes) if isinstance(p, SchedulePass)), None)
    if i is not None:
        sp = passes[i]
        assert isinstance(sp, SchedulePass)
        opts = sp.options
        secs, at = (None, None) if clock is None else clock.solve_limit(share, reserve)
        if secs is not None and opts is not None and any(f.name == "time_limit" for f in dataclasses.fields(opts)):
            opts = dataclasses.replace(opts, time_limit=secs)
        else:
            at = None
        passes[i] = dataclasses.replace(sp, options=opts, start=state.schedule if warm else None, deadline_at=at)
    run(passes, state, on_pass=on_pass)


def _verify(lowered: onnx.ModelProto, device: str, budget: int, runs: int = 8) -> int | None:
    """Run ``lowered`` on ``device`` under the cap of ``budget`` as ``remc run`` does (a profiled session, then a
    session run ``runs`` times: later runs start from the regions the first one left): None if every run
    fits, else how many bytes it was short (at least 1)."""
    from .backends import runtime
    try:
        cap = runtime.arena_cap(lowered, device, budget)
        feeds = runtime.random_inputs(lowered, 0)
        runtime.profiler_peak(lowered, device, feeds=feeds, mem_limit=cap)
        sess = runtime.make_session(lowered, device, mem_limit=cap, log_level=4)
        r = runtime.Runner(sess, feeds, device, mem_limit=cap)
        for _ in range(runs):
            r()
        return None
    except runtime.NoProfilerStats:
        return None
    except runtime.OutOfMemory as e:
        if e.requested is not None and e.available is not None:
            return max(e.requested - e.available, 1)
        return max(budget // 100, 1)


def _annotate(state: State, report: FitReport) -> None:
    """Record the user's budget in the plan, and the fit in its report."""
    plan = state.plan
    if plan is None:
        return
    p = report.prediction
    extra = {"solver_budget": report.solver_budget, "fit_rounds": report.rounds,
             "arena_predicted": p.arena if p else None, "arena_in_use_predicted": p.in_use_peak if p else None,
             "outside_arena": p.outside if p else None, "verified": report.verified}
    state.plan = dataclasses.replace(plan, budget=report.budget, report={**plan.report, **extra})
