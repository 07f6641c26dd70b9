"""The pass pipeline: named passes over one compilation state, validated between passes.

A pipeline is a text spec that parses and prints back the same, e.g.
``import{batch=8},costs{method=flops},units{granularity=coarse},schedule{strategy=checkmate,time_limit=60},plan,lower``.
After every pass the runner verifies what the pass produced: a schedule against the paper's constraints
and the budget (exact bytes), a plan by the independent simulator (passes/validate.py). Nothing is
written or run that did not pass.
"""
from __future__ import annotations

import dataclasses
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, ClassVar

import onnx

from .ir.dag import DAG
from .ir.errors import PlanError, RemcError
from .ir.graph import Graph
from .ir.plan import Plan
from .ir.schedule import Schedule, check
from .timebudget import PROFILE_SHARE, CompileClock


@dataclass
class State:
    """What the passes read and write. ``model`` is the input model or, after ``lower``, the output."""

    model: Any = None
    budget: int | None = None
    graph: Graph | None = None
    costs: dict[str, float] | None = None
    units: list | None = None
    granularity: str = "fine"
    dag: DAG | None = None
    schedule: Schedule | None = None
    plan: Plan | None = None
    sim: Any = None
    lowered: onnx.ModelProto | None = None
    timings: dict[str, float] = field(default_factory=dict)
    clock: CompileClock | None = None
    """The compile's one clock (remc/timebudget.py): phases get deadlines from it and are recorded on it."""
    input_need: Any = None
    """What the input graph as it is needs on the device (``fit.unmodified_need``'s ``ArenaPrediction``, the
    measure of a ratio budget); the fit's first round reuses it where it had every kernel measured."""
    input_kernels: Any = None
    """The input graph's kernel-memory table (``fit.InputKernels``, kept by ``fit.input_kernels``), read again by each
    later phase instead of being rebuilt from the cache (with signatures left unmeasured, by a phase whose deadline is
    no later)."""


class Pass:
    """A named pass with typed options (dataclass fields); ``apply`` updates the state."""

    name: ClassVar[str]

    def apply(self, state: State) -> None:
        raise NotImplementedError

    def deadline(self, state: State) -> float | None:
        """The pass's deadline in seconds on ``state.clock`` (None: none; the default)."""
        return None

    def spec(self) -> str:
        opts = [f"{f.name}={getattr(self, f.name)}" for f in dataclasses.fields(self)
                if getattr(self, f.name) != f.default]
        return self.name + ("{" + ",".join(opts) + "}" if opts else "")


@dataclass(frozen=True)
class ImportPass(Pass):
    name: ClassVar[str] = "import"
    batch: int | None = None
    """Binds the symbolic batch dimension of the graph inputs."""

    def apply(self, state: State) -> None:
        from .backends.runtime import import_model
        state.graph = import_model(state.model, batch=self.batch)


@dataclass(frozen=True)
class CostsPass(Pass):
    name: ClassVar[str] = "costs"
    method: str = "flops"
    """'flops' (static model) or 'profile' (time each op signature alone on ONNX Runtime)."""
    device: str = "cpu"
    """Device to profile on."""

    def deadline(self, state: State) -> float | None:
        """Profiling keeps to PROFILE_SHARE of the compile's time limit (the rest priced by FLOPs, noted)."""
        if self.method != "profile" or state.clock is None:
            return None
        return state.clock.until(PROFILE_SHARE)

    def apply(self, state: State) -> None:
        if self.method == "profile":
            from .backends.profile import ProfileCosts
            clock = state.clock
            prof = ProfileCosts(self.device, deadline=None if clock is None else clock.perf_deadline(self.deadline(state)))
            state.costs = prof.apply(shaped_model(state.graph))
            if clock is not None and prof.summary.note():
                clock.notes.append(prof.summary.note())
        else:
            from .passes.costs import node_costs
            state.costs = node_costs(shaped_model(state.graph), self.method)


@dataclass(frozen=True)
class UnitsPass(Pass):
    name: ClassVar[str] = "units"
    granularity: str = "fine"
    """'fine' (one unit per ONNX node) or 'coarse' (passes/coarsen.py groups nodes into units)."""
    device: str = "cpu"
    """The device the plan is for: its kernel scratch is part of each unit's workspace."""

    def apply(self, state: State) -> None:
        from .passes.dagbuild import build_dag, fine_units
        if self.granularity == "coarse":
            from .passes.coarsen import coarse_units
            units = coarse_units(state.graph)
        elif self.granularity == "fine":
            units = fine_units(state.graph)
        else:
            raise RemcError(f"unknown granularity {self.granularity!r}: use fine or coarse")
        state.units, state.granularity = units, self.granularity
        state.dag = build_dag(state.graph, state.costs, units, granularity=self.granularity, device=self.device)


def _fits_without_recompute(state: State) -> str:
    """'; a budget of N bytes fits without recomputation (checkpoint-all, remc's live-bytes model)': a budget
    the user knows works, for infeasible-budget messages."""
    from .ir.schedule import checkpoint_all
    from .ir.sizes import describe_size
    if state.dag is None or not state.dag.n:
        return ""
    peak = checkpoint_all(state.dag).peak(state.dag)
    return (f"; without recomputation (checkpoint-all) every tensor fits in {describe_size(peak)} "
            f"in remc's live-bytes model")


@dataclass(frozen=True)
class SchedulePass(Pass):
    name: ClassVar[str] = "schedule"
    strategy: str = "checkpoint-all"
    """A name of the strategy registry (backends/strategies.py)."""
    options: Any = None
    """The strategy's typed options (CheckmateOptions, ApproxOptions, ...; None: its defaults)."""
    progress: Callable[[Any], None] | None = field(default=None, compare=False, repr=False)
    """Called with ProgressEvents while a solver strategy runs (the CLI's live display)."""
    start: Schedule | None = field(default=None, compare=False, repr=False)
    """A schedule to start from (a previous fit round's, over this budget): approx and checkmate repair it."""
    deadline_at: float | None = field(default=None, compare=False, repr=False)
    """The deadline its time limit was cut to, seconds on the compile's clock (recorded; None: none)."""

    def deadline(self, state: State) -> float | None:
        return self.deadline_at

    def apply(self, state: State) -> None:
        from .backends.strategies import solve
        from .ir.errors import InfeasibleError
        try:
            state.schedule = solve(self.strategy, state.dag, state.budget, self.options, progress=self.progress,
                                   start=self.start)
        except InfeasibleError as err:
            if state.graph is None:
                raise
            from .passes.milp_model import lower_bound_text
            bound = "" if "can need less than" in str(err) else f"; {lower_bound_text(state.dag)}"
            held = "always resident" if state.dag is None or not int(state.dag.kept.sum()) else \
                "held by every schedule (inputs and parameters from the start, outputs from their computation on)"
            raise InfeasibleError(f"{err}; {held}: {constant_parts_text(state.graph)}{bound}"
                                  f"{_fits_without_recompute(state)}", err.least_feasible) from None

    def spec(self) -> str:
        opts = [f"strategy={self.strategy}"] if self.strategy != "checkpoint-all" else []
        if self.options is not None:
            opts += [f"{f.name}={getattr(self.options, f.name)}" for f in dataclasses.fields(self.options)
                     if getattr(self.options, f.name) != f.default]
        return self.name + ("{" + ",".join(opts) + "}" if opts else "")

    @classmethod
    def from_body(cls, body: str) -> SchedulePass:
        """``strategy=NAME`` and the fields of that strategy's options dataclass."""
        from .backends.strategies import REGISTRY, make_options
        items = dict(_items(body))
        strategy = items.pop("strategy", "checkpoint-all")
        if strategy not in REGISTRY:
            raise RemcError(f"unknown strategy {strategy!r}; choose one of {', '.join(REGISTRY)}")
        fields = {f.name: f for f in dataclasses.fields(REGISTRY[strategy].options)}
        values = {}
        for key, raw in items.items():
            if key not in fields:
                raise RemcError(f"strategy {strategy!r} has no option {key!r}; options: {', '.join(fields)}")
            values[key] = _convert(raw, str(fields[key].type), f"schedule.{key}")
        return cls(strategy=strategy, options=make_options(strategy, **values) if values else None)


@dataclass(frozen=True)
class PlanPass(Pass):
    name: ClassVar[str] = "plan"
    early_free: bool = True
    """Move deallocations as early as legal (paper §4.8)."""

    def apply(self, state: State) -> None:
        from .passes.plangen import generate_plan
        state.plan = generate_plan(state.dag, state.schedule, early_free=self.early_free,
                                   graph_name=state.graph.name if state.graph else "",
                                   budget=state.budget, granularity=state.granularity)


@dataclass(frozen=True)
class LowerPass(Pass):
    name: ClassVar[str] = "lower"

    def apply(self, state: State) -> None:
        from .passes.lower import lower
        state.lowered = lower(state.graph, state.plan)


PASSES: dict[str, type[Pass]] = {p.name: p for p in (ImportPass, CostsPass, UnitsPass, SchedulePass, PlanPass,
                                                      LowerPass)}


def constant_parts(graph: Graph) -> dict[str, int]:
    """The constant overhead of ``graph`` by part, bytes: ``data`` (graph inputs not carried between
    steps: images, labels), ``parameters`` (initializers), ``optimizer_state`` (carried inputs without an
    initializer: momentum, moments, step), ``gradients`` (``grad.*`` outputs of a training graph),
    ``updated`` (``*.updated`` outputs of a step graph: new weights and state), ``other_outputs`` (the
    loss, ...). Their sum is the DAG's constant and its kept outputs (the outputs, held from the computation of
    the unit that produces them on: ``DAG.kept``), all resident at the end of every schedule."""
    from .passes.optimizer import GRAD_PREFIX, UPDATED_SUFFIX
    outs = {v.name for v in graph.outputs}
    carried = {v.name for v in graph.inputs + graph.params if v.name + UPDATED_SUFFIX in outs}
    held = {v.name for v in graph.inputs + graph.params}
    kept = [v for v in graph.outputs if v.name not in held]
    return {"data": sum(v.nbytes for v in graph.inputs if v.name not in carried),
            "parameters": sum(v.nbytes for v in graph.params),
            "optimizer_state": sum(v.nbytes for v in graph.inputs if v.name in carried),
            "gradients": sum(v.nbytes for v in kept if v.name.startswith(GRAD_PREFIX)),
            "updated": sum(v.nbytes for v in kept if v.name.endswith(UPDATED_SUFFIX)),
            "other_outputs": sum(v.nbytes for v in kept
                                 if not v.name.startswith(GRAD_PREFIX) and not v.name.endswith(UPDATED_SUFFIX))}


_PART_NAMES = {"data": "data inputs", "parameters": "parameters", "optimizer_state": "optimizer state",
               "gradients": "gradients", "updated": "updated weights and state", "other_outputs": "loss and other outputs"}


def constant_parts_text(graph: Graph) -> str:
    """The constant overhead of ``graph`` by part (``constant_parts``; parts of 0 bytes left out) and its
    sum, so a user sees why a budget is infeasible."""
    from .ir.sizes import format_size
    parts = constant_parts(graph)
    shown = [f"{_PART_NAMES[k]} {format_size(v)}" for k, v in parts.items() if v or k in ("data", "parameters")]
    return ", ".join(shown) + f" (together {format_size(sum(parts.values()))})"


def shaped_model(graph: Graph) -> onnx.ModelProto:
    """The graph as ONNX with the static shape of every value recorded (what the cost models read)."""
    from .ir.onnx_io import export_model
    return export_model(graph, value_info=True)


_ITEM = re.compile(r"\s*([a-z][a-z0-9_-]*)\s*(?:\{([^{}]*)\})?\s*(?:,|$)")


def parse_pipeline(spec: str) -> list[Pass]:
    """Passes from a spec such as ``import{batch=8},schedule{strategy=checkmate},plan``."""
    passes, pos = [], 0
    spec = spec.strip()
    while pos < len(spec):
        m = _ITEM.match(spec, pos)
        if not m or m.end() == pos:
            raise RemcError(f"cannot read pipeline {spec!r} at column {pos + 1}")
        name, body = m.group(1), m.group(2)
        if name not in PASSES:
            raise RemcError(f"unknown pass {name!r}; passes are {', '.join(PASSES)}")
        cls = PASSES[name]
        if cls is SchedulePass:
            passes.append(SchedulePass.from_body(body or ""))
        else:
            passes.append(cls(**_options(cls, body or "")))
        pos = m.end()
    return passes


def print_pipeline(passes: list[Pass]) -> str:
    return ",".join(p.spec() for p in passes)


def _items(body: str) -> list[tuple[str, str]]:
    """``key=value`` items of a pass body (keys with - spelled _)."""
    out = []
    for item in filter(None, (s.strip() for s in body.split(","))):
        key, _, raw = item.partition("=")
        out.append((key.strip().replace("-", "_"), raw.strip()))
    return out


def _options(cls: type[Pass], body: str) -> dict[str, Any]:
    fields = {f.name: f for f in dataclasses.fields(cls)}
    out: dict[str, Any] = {}
    for key, raw in _items(body):
        if key not in fields:
            raise RemcError(f"pass {cls.name!r} has no option {key!r}; options: {', '.join(fields) or 'none'}")
        out[key] = _convert(raw, str(fields[key].type), f"{cls.name}.{key}")
    return out


def _convert(raw: str, typ: str, what: str) -> Any:
    try:
        if typ.startswith("bool"):
            if raw.lower() not in ("true", "false", "1", "0"):
                raise ValueError(raw)
            return raw.lower() in ("true", "1")
        if typ.startswith("int"):
            return int(raw)
        if typ.startswith("float"):
            return float(raw)
    except ValueError:
        raise RemcError(f"option {what}: cannot read {raw!r} as {typ.split(' ')[0]}") from None
    return raw


def verify(state: State, before: State) -> None:
    """Check what the last pass produced: schedules against (1b, 1c, 7a-c) and the budget, plans by simulation."""
    if state.schedule is not None and state.schedule is not before.schedule:
        errs = check(state.dag, state.schedule.R, state.schedule.S)
        if errs:
            raise PlanError(f"strategy {state.schedule.strategy!r} produced an invalid schedule: {errs[0]}")
        peak = state.schedule.peak(state.dag)
        if state.budget is not None and peak > state.budget:
            raise PlanError(f"strategy {state.schedule.strategy!r} returned a schedule of peak {peak} bytes "
                            f"above the budget of {state.budget} bytes")
    if state.plan is not None and state.plan is not before.plan and state.dag is not None:
        from .passes.validate import validate
        state.sim = validate(state.plan, state.dag, budget=state.budget)


def run(passes: list[Pass], state: State, *, on_pass: Callable[[Pass, State], None] | None = None) -> State:
    """Run passes in order, verifying after each; record each pass's wall time in ``state.timings`` and, with
    a clock, each pass as a phase on ``state.clock``."""
    for p in passes:
        before = dataclasses.replace(state)
        t0 = time.perf_counter()
        c0 = None if state.clock is None else state.clock.elapsed()
        try:
            p.apply(state)
            verify(state, before)
        finally:  # a pass that failed (e.g. a fit round's infeasible solve) spent its time too
            if state.clock is not None:
                state.clock.record(p.name, c0, p.deadline(state))
        state.timings[p.name] = time.perf_counter() - t0
        if on_pass is not None:
            on_pass(p, state)
    return state


def stages(passes: list[Pass], first: str | None = None, last: str | None = None) -> list[Pass]:
    """The passes from the one named ``first`` to the one named ``last`` (both included; None: the ends)."""
    names = [p.name for p in passes]
    for want in (first, last):
        if want is not None and want not in names:
            raise RemcError(f"the pipeline {print_pipeline(passes)!r} has no pass {want!r}")
    lo = 0 if first is None else names.index(first)
    hi = len(passes) if last is None else names.index(last) + 1
    return passes[lo:hi]


def compile_pipeline(*, batch: int | None = None, cost: str = "flops", granularity: str = "coarse",
                     strategy: str = "checkpoint-all", device: str = "cpu", options: Any = None,
                     progress: Callable[[Any], None] | None = None) -> list[Pass]:
    """The standard compile pipeline, one stage per line; ``options``: the strategy's typed options."""
    return [
        ImportPass(batch=batch),                               # ONNX -> IR, shapes inferred, batch bound
        CostsPass(method=cost, device=device),                 # C_v per ONNX node (FLOPs or profiled)
        UnitsPass(granularity=granularity, device=device),     # scheduling units and the DAG
        SchedulePass(strategy, options, progress),             # R, S: the strategy's schedule
        PlanPass(),                                            # Algorithm 1 + early deallocation
        LowerPass(),                                           # plan order -> ONNX node list
    ]
