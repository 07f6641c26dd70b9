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
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import onnx

from .ir.errors import InfeasibleError, PlanError, SolverError
from .pipeline import Pass, State, run


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

    @property
    def total(self) -> int:
        """What the budget must hold: the arena's least limit plus the bytes outside it."""
        return self.arena + self.outside

    @property
    def in_use_total(self) -> int:
        return self.in_use_peak + self.outside


def predict(lowered: onnx.ModelProto, device: str = "cpu", *, measure_kernels: bool | None = None,
            cap: int | None = None, settings: Any = None) -> ArenaPrediction:
    """What ``lowered`` needs on ``device``: with remc's placement (CUDA, ``settings.placed``) the height of its
    layout; else ONNX Runtime's arena replayed. Kernel memory is measured on the device
    when it is here (``measure_kernels`` None: CPU always, CUDA when the provider is available). The bytes in
    use are replayed under the arena limit ``cap`` when given (on CPU the one region is the cap, and which
    chunks are handed out whole depends on its size), else under the least limit."""
    from .backends import runtime
    from .backends.scratch import kernel_memory
    from .passes.arena import graph_events, least_limit, replay
    from .passes.placement import layout
    settings = settings or runtime.DEFAULT_SETTINGS
    if measure_kernels is None:
        measure_kernels = not device.startswith("cuda") or runtime.cuda_available()
    km = kernel_memory(lowered, device, settings=settings) if measure_kernels else None
    ev = graph_events(lowered, device, km)
    if settings.placed(device):
        lay = layout(ev)
        return ArenaPrediction(lay.height, lay.lower_bound, runtime.outside_bytes(lowered, device), lay.peak_what,
                               measure_kernels, "remc")
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
                           best[1].peak_node, measure_kernels)


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
                on_round: Callable[[dict[str, Any]], None] | None = None, settings: Any = None) -> FitReport:
    """Run the compile ``passes`` (the last three: schedule, plan, lower) at ``state.budget``; while the
    replayed arena (``predict``) plus the bytes outside it exceed the budget, or with ``verify`` a run under
    the cap runs out of memory, re-solve at a lower solver budget: the plan's live peak less the excess (at
    least 0.5% of the budget), or, once a solver budget proved infeasible for the strategy, the midpoint
    between it and the smallest solver budget whose plan was still too big. PlanError when ``max_rounds``
    rounds find no plan that fits. ``on_round`` is called before each re-solve with the round about to run,
    the need that made it necessary, the budget and the new solver budget. ``settings``: the
    ``backends.runtime.DeviceSettings`` the plan will run with (placement, cuDNN search)."""
    budget = int(state.budget)
    run(passes, state, on_pass=on_pass)
    report = FitReport(budget, budget, 1)
    too_big, infeasible = budget, None  # solver budgets: plan too big at; strategy infeasible at
    for rnd in range(1, max_rounds + 1):
        report.rounds = rnd
        pred = predict(state.lowered, device, settings=settings)
        report.prediction = pred
        excess = pred.total - budget
        entry: dict[str, Any] = {"round": rnd, "solver_budget": int(state.budget), "predicted": pred.total,
                                 "live_peak": int(state.sim.peak) if state.sim is not None else None}
        if excess <= 0 and verify:
            short, why = _verify(state.lowered, device, budget, settings=settings)
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
        while True:
            if infeasible is None:
                new = too_big - max(excess, budget // 200)
            else:
                new = (infeasible + too_big) // 2
            if rnd == max_rounds or new <= int(state.dag.constant) or \
                    (infeasible is not None and too_big - infeasible <= max(budget // 1000, 256)):
                best = min(h["predicted"] for h in report.history if "predicted" in h)
                what = "remc's layout" if pred.placement == "remc" else "replayed arena"
                fails = [h["verify_error"] for h in report.history if h.get("verify_error")]
                raise _with_report(PlanError(f"no plan of strategy {state.schedule.strategy!r} fits {budget} bytes on ONNX "
                                f"Runtime {device}: after {rnd} round(s) the best needs {best} bytes there "
                                f"({what} plus inputs and parameters; its live bytes in remc's model: "
                                f"{min(h['live_peak'] for h in report.history if h.get('live_peak'))})"
                                 + (f"; the run under the cap failed: {fails[-1]}" if fails else "")), report)
            state.budget = new
            report.solver_budget = new
            if on_round is not None:
                on_round({"round": rnd + 1, "predicted": pred.total, "budget": budget, "solver_budget": new})
            try:
                run(passes[-3:], state, on_pass=on_pass)
                break
            except (InfeasibleError, SolverError):
                infeasible = new
                report.history.append({"round": rnd, "solver_budget": new, "infeasible": True})
    state.budget = budget
    _annotate(state, report)
    return report


def _with_report(err: PlanError, report: FitReport) -> PlanError:
    err.fit_report = report  # type: ignore[attr-defined]  (the rounds, for tools that record them)
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
        sess, alloc = runtime.capped_session(lowered, device, cap, settings)
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
