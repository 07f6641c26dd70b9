"""``remc train``: training steps of a compiled step graph under a memory cap, against the unmodified graph.

Straight-line: load the training graph; append the optimizer (``passes/optimizer.py``) unless the
graph already has one; compile the step graph under ``--budget`` (the standard pipeline, so the
schedule holds weights, gradients, new weights and optimizer state); run ``--steps`` steps on ONNX
Runtime under ``--mem-limit`` (default: the budget) with the state on the device (``backends/trainer``);
measure the arena peak over two profiled steps; with ``--reference`` run the unmodified step graph the
same number of steps on the same data (first under the same cap, to show whether it fits, then without
one) and compare the losses step for step. Random nodes carry seeds (``passes/random_ops``), so both
graphs draw the same masks at every step.
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import math
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from .ir.errors import InfeasibleError, ModelError, RuntimeFailure
from .ir.sizes import format_size

if TYPE_CHECKING:  # onnx is imported where it is used: the CLI's parser imports this module
    import onnx


@dataclass(frozen=True)
class TrainOptions:
    """What ``remc train`` runs."""

    steps: int = 10
    """Training steps."""
    device: str = "cpu"
    """'cpu' or 'cuda[:N]'."""
    mem_limit: int | None = None
    """Arena cap of the run (default: the budget)."""
    fresh_batches: bool = False
    """Draw new random data every step (default: one fixed batch, which the loss should fit)."""
    seed: int = 0
    """Seed of the random data."""
    reference: bool = False
    """Also run the unmodified step graph and compare losses."""
    least_cap: bool = False
    """Also find the least arena cap under which two steps run (bisection)."""
    cuda_graph: bool = False
    """Run the steps from fixed buffers, captured as CUDA graphs (``backends/trainer``)."""
    settings: Any = None
    """``backends.runtime.DeviceSettings`` (None: the defaults; on CUDA remc's placement under the cap)."""
    fixed_buffers: bool = True
    """Two sets of state, the data and the outputs in buffers bound once, outside the arena (every step's
    arena traffic the same); False: ONNX Runtime allocates each step's outputs in its arena, where they stay
    as the next step's state (``backends/trainer``). ``remc train --loop auto`` takes the loop the compiled
    plan fits."""


def step_graph(model: onnx.ModelProto, optimizer: Any) -> onnx.ModelProto:
    """``model`` if it is a step graph already, else the training graph with ``optimizer`` appended."""
    from .passes.optimizer import append_optimizer, state_inputs
    if state_inputs(model):
        return model
    return append_optimizer(model, optimizer)


def data_feeds(model: onnx.ModelProto, seed: int, fresh: bool) -> Callable[[int], dict[str, np.ndarray]]:
    """Random data for every non-carried input: one batch for all steps, or a new one per step."""
    import onnx

    from .backends.runtime import random_inputs
    from .ir.onnx_types import copy_model
    from .passes.optimizer import state_inputs
    carried = set(state_inputs(model))
    dropped = [t for t in model.graph.initializer if t.name in carried]
    probe = copy_model(model, drop=lambda t: t.name in carried)  # the weights' bytes are not needed here
    probe.graph.value_info.extend(onnx.helper.make_tensor_value_info(t.name, t.data_type, list(t.dims))
                                  for t in dropped)  # their shapes bound integer data (e.g. Gather indices)
    keep = [i for i in probe.graph.input if i.name not in carried]
    del probe.graph.input[:]
    probe.graph.input.extend(keep)
    fixed = random_inputs(probe, seed)
    return (lambda k: random_inputs(probe, seed + k)) if fresh else (lambda k: fixed)


def compile_step_graph(model: onnx.ModelProto, budget: int, strategy: str, *, device: str = "cpu",
                       cost: str = "flops", granularity: str = "coarse", options: Any = None,
                       steps: int = 2, progress: Any = None, on_round: Callable | None = None,
                       fixed_buffers: bool | None = None, settings: Any = None,
                       clock: Any = None) -> tuple[Any, Any]:
    """The compile pipeline on the step graph, re-solved until the replay of ``steps`` steps of the training
    loop fits under a cap of ``budget`` (``remc/fit.py``, ``predict_loop``; on CUDA with remc's placement, its
    layout); the final pipeline state (lowered, sim, schedule, dag) and the fit report (``fixed_buffers``: the
    loop; None: the one that fits, ``fit.fixed_buffers``). ``clock`` (``remc.timebudget.CompileClock``; None: only
    the strategy's own time limit): the whole compile's time limit, as ``remc compile`` keeps it."""
    from .fit import compile_fit
    from .pipeline import State, compile_pipeline, run, stages
    passes = compile_pipeline(cost=cost, granularity=granularity, strategy=strategy, device=device, options=options,
                              progress=progress)
    state = run(stages(passes, last="units"), State(model=model, budget=budget, clock=clock))
    fit = compile_fit(stages(passes, first="schedule"), state, device=device, steps=steps, on_round=on_round,
                      fixed_buffers=fixed_buffers, settings=settings)
    return state, fit


def run_training(model: onnx.ModelProto, opts: TrainOptions, *, on_step: Callable | None = None
                 ) -> dict[str, Any]:
    """Train ``model`` (a step graph) ``opts.steps`` steps; the report (losses, steps/s, peaks)."""
    from .backends.runtime import DEFAULT_SETTINGS, OutOfMemory
    from .backends.trainer import measure_train_peak, train
    settings = opts.settings or DEFAULT_SETTINGS
    feeds = data_feeds(model, opts.seed, opts.fresh_batches)
    fixed = opts.fixed_buffers or opts.cuda_graph
    res = train(model, feeds, opts.steps, opts.device, mem_limit=opts.mem_limit, on_step=on_step,
                cuda_graph=opts.cuda_graph, fixed_buffers=fixed, settings=settings)
    _release_freed_memory()  # the trainer's session and state, before the profiled steps build their own
    rep: dict[str, Any] = {"losses": list(res.losses), "steps_per_second": res.steps_per_second,
                           "state_bytes": res.state_bytes, "mem_limit": opts.mem_limit,
                           "cuda_graph": opts.cuda_graph}
    from .backends.trainer import fixed_outside_bytes, loop_outside_bytes, split_state
    if res.placed_peak is not None:  # remc's allocator: its high-water mark is the measured peak, exactly
        rep["fixed_buffers"] = True
        rep["placed_peak"] = res.placed_peak
        rep["placement"] = res.placement
        rep["arena_peak"] = None
        rep["measured_peak"] = res.placed_peak
    else:
        rep["fixed_buffers"] = fixed
        stripped, initial = split_state(model)
        rep["outside"] = (fixed_outside_bytes if fixed else loop_outside_bytes)(stripped, initial, opts.device)
        del stripped, initial  # a copy of the state: not held while the next trainer holds its own
        try:
            rep["arena_peak"] = measure_train_peak(model, feeds, opts.device, mem_limit=opts.mem_limit,
                                                   steps=max(opts.steps, 2), fixed_buffers=fixed)
        except OutOfMemory:  # the profiler's own buffers under the cap
            rep["arena_peak"] = None
        rep["measured_peak"] = rep["arena_peak"] + rep["outside"] if rep["arena_peak"] is not None else None
    if opts.least_cap:
        from .backends.trainer import least_cap
        from .fit import predict_loop
        steps = max(opts.steps, 2)
        rep["least_cap"] = least_cap(model, feeds, opts.device, steps=steps, fixed_buffers=fixed, settings=settings)
        rep["least_cap_replayed"] = predict_loop(model, opts.device, steps, fixed_buffers=fixed,
                                                 settings=settings).total
    return rep


def reference_run(model: onnx.ModelProto, opts: TrainOptions) -> dict[str, Any]:
    """The unmodified step graph: does it fit the cap (one step), and its losses without a cap."""
    from .backends.runtime import DEFAULT_SETTINGS, OutOfMemory
    from .backends.trainer import train
    feeds = data_feeds(model, opts.seed, opts.fresh_batches)
    rep: dict[str, Any] = {}
    settings = opts.settings or DEFAULT_SETTINGS
    if opts.mem_limit is not None:
        # under the same cap as remc's allocator places it, and (CUDA) as ONNX Runtime's arena does
        ways = [("", settings)] + ([("_arena", dataclasses.replace(settings, placement="arena"))]
                                   if settings.placed_loop(opts.device) else [])
        for tag, st in ways:
            try:
                train(model, feeds, max(opts.steps, 2), opts.device, mem_limit=opts.mem_limit, settings=st,
                      fixed_buffers=opts.fixed_buffers or opts.cuda_graph)
                rep["fits_cap" + tag] = True
            except OutOfMemory as e:
                rep["fits_cap" + tag] = False
                rep["oom" + tag] = str(e)
    rep.update(run_training(model, TrainOptions(**{**opts.__dict__, "mem_limit": None})))
    return rep


def train_command(args: argparse.Namespace) -> int:
    """``remc train`` (see the module docstring)."""
    from .backends.runtime import load_model, require_cuda
    from .ir.onnx_io import save_model
    from .passes.optimizer import OptimizerOptions
    if args.steps < 1:
        raise ModelError(f"--steps must be >= 1, got {args.steps}")
    if args.device.startswith("cuda"):
        require_cuda()
    from .cli import device_settings
    settings = device_settings(args)
    opt = OptimizerOptions(kind=args.optimizer, lr=args.lr, momentum=args.momentum,
                           weight_decay=args.weight_decay)
    model = step_graph(load_model(args.model), opt)
    rep: dict[str, Any] = {"model": args.model, "device": args.device, "steps": args.steps,
                           "optimizer": {p.key: p.value for p in model.metadata_props}.get("remc.optimizer")}
    from .passes.optimizer import memory_parts
    rep["memory_parts"] = memory_parts(model)
    compiled = model
    loop = _loop(args) is not False  # fixed buffers unless asked otherwise or the plan fits the other loop
    if args.budget is not None:
        from .backends.strategies import make_options
        from .passes.strategies import SOLVER_NAMES
        options = make_options(args.strategy, time_limit=args.time_limit) if args.strategy in SOLVER_NAMES else None
        from .timebudget import CompileClock, process_age
        clock = CompileClock(args.time_limit, started_ago=process_age())
        try:
            state, fit = compile_step_graph(model, args.budget, args.strategy, device=args.device, options=options,
                                            steps=args.steps, fixed_buffers=_loop(args), settings=settings,
                                            clock=clock)
        except InfeasibleError as e:
            raise InfeasibleError(f"{e}; the step holds {_parts_text(rep['memory_parts'])}",
                                  e.least_feasible) from None
        compiled = state.lowered
        state.lowered = state.graph = state.model = None  # the compiled graph is all that trains: no other copy
        _release_freed_memory()
        loop = fit.fixed_buffers if fit.fixed_buffers is not None else loop
        ideal = state.dag.total_cost
        rep.update(budget=args.budget, strategy=args.strategy, predicted_peak=state.sim.peak,
                   predicted_overhead=state.sim.cost / ideal if ideal else None,
                   recomputes=int(sum(state.sim.recomputes.values())), fit_rounds=fit.rounds,
                   solver_budget=fit.solver_budget,
                   predicted_on_device=fit.prediction.total if fit.prediction is not None else None,
                   device_model="remc's layout" if fit.prediction is not None and fit.prediction.placement == "remc"
                   else "replayed arena",
                   predicted_fits_budget=fit.prediction.fits_budget if fit.prediction is not None else None,
                   predicted_in_use=(fit.prediction.peak_total if fit.prediction is not None else None),
                   predicted_single_run=fit.single.total if fit.single is not None else None)
        rep["compile_time"] = clock.summary()
        if not args.json:
            for line in [clock.text(), *clock.notes]:
                print(("" if line.startswith("time:") else "note: ") + line, file=sys.stderr)
        if args.output:
            save_model(compiled, args.output)
            rep["output"] = args.output
    limit = args.mem_limit if args.mem_limit is not None else args.budget
    opts = TrainOptions(steps=args.steps, device=args.device, mem_limit=limit, fresh_batches=args.fresh_batches,
                        settings=settings,
                        seed=args.seed, reference=args.reference, least_cap=args.least_cap,
                        cuda_graph=args.cuda_graph, fixed_buffers=loop)
    rep["loop"] = "fixed buffers" if loop or args.cuda_graph else "fresh outputs"
    if args.cuda_graph and not args.device.startswith("cuda"):
        raise ModelError("--cuda-graph needs --device cuda")
    printer = None if args.json else _print_step
    if not args.reference:
        model = None  # the unmodified step is needed again only for the reference run
    rep.update(run_training(compiled, opts, on_step=printer))
    if rep.get("placed_peak") is not None:
        rep["loop"] = "fixed buffers"  # remc's allocator runs the fixed-buffer loop only
    if args.reference:
        ref = reference_run(model, opts)
        rep["reference"] = ref
        diffs = [abs(a - b) / max(abs(b), 1e-30) for a, b in zip(rep["losses"], ref["losses"])]
        rep["loss_max_rel_diff"] = max(diffs)
    if args.json:
        print(json.dumps(rep, indent=2, default=float))
    else:
        print(format_train(rep))
    rtol = args.rtol if args.rtol is not None else (1e-4 if args.device.startswith("cuda") else 1e-5)
    if args.reference and not rep["loss_max_rel_diff"] <= rtol:
        raise RuntimeFailure(f"losses differ from the unmodified graph's by up to {rep['loss_max_rel_diff']:.3g} "
                             f"(relative; --rtol {rtol})")
    return 0


def _release_freed_memory() -> None:
    """Hand the heap the compile freed back to the OS before training: glibc keeps freed chunks below its
    (dynamic, up to 32 MiB) mmap threshold in the heap, which protobuf's and numpy's buffers of a large model
    leave at gigabytes of resident memory (``tools/rss_phases.py``). No-op where there is no glibc."""
    import ctypes
    import gc
    gc.collect()
    try:
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):
        pass


def _loop(args: argparse.Namespace) -> bool | None:
    """``--loop``: True fixed buffers, False fresh outputs, None the one the compiled plan fits."""
    if args.cuda_graph:
        return True
    return {"fixed": True, "fresh": False}.get(args.loop)


def _parts_text(parts: dict[str, int]) -> str:
    return (f"weights {format_size(parts['weights'])}, optimizer state {format_size(parts['optimizer_state'])}, "
            f"their updated copies {format_size(parts['updated'])}, data {format_size(parts['data'])} "
            f"for the whole step, and gradients {format_size(parts['gradients'])} "
            f"(the largest {format_size(parts['largest_gradient'])}) until their updates")


def _print_step(k: int, loss: float, seconds: float) -> None:
    print(f"step {k + 1:4d}  loss {loss:.6f}  ({1e3 * seconds:.1f} ms)", flush=True)


def format_train(rep: dict[str, Any]) -> str:
    """The summary lines of a ``remc train`` report."""
    lines = [f"{rep['steps']} steps of {rep['optimizer']} on {rep['device']}"
             f"{' (CUDA graphs)' if rep.get('cuda_graph') else ''}, {rep.get('loop', 'fixed buffers')}: "
             f"{rep['steps_per_second']:.2f} steps/s"]
    if rep.get("budget") is not None:
        on_device = rep.get("predicted_on_device")
        lines.append(f"  compiled under {format_size(rep['budget'])} ({rep['strategy']}): predicted live peak "
                     f"{format_size(rep['predicted_peak'])}"
                     + ((f", {format_size(on_device)} on ONNX Runtime (remc's layout, {rep['fit_rounds']} round(s))"
                         if rep.get("device_model") == "remc's layout" else
                         f"; replayed on ONNX Runtime's arena over {rep['steps']} steps: the least cap "
                         f"{on_device} bytes, fits the budget ({rep['fit_rounds']} round(s))")
                        if on_device is not None else "")
                     + f", {rep['recomputes']} recomputations, predicted overhead {rep['predicted_overhead']:.3f}x")
    lines.append(f"  the step holds {_parts_text(rep['memory_parts'])}")
    cap = f" under a cap of {format_size(rep['mem_limit'])}" if rep.get("mem_limit") else ""
    predicted_in_use = rep.get("predicted_in_use")
    if rep.get("placed_peak") is not None:
        st = rep.get("placement") or {}
        lines.append(f"  measured peak {rep['placed_peak']} bytes (remc's buffer's high-water mark plus the state, "
                     f"data and output buffers){cap}"
                     + (f" (predicted: {predicted_in_use} bytes)" if predicted_in_use is not None else "")
                     + f"; {st.get('planned', 0)} of {st.get('calls', 0)} allocations at their planned address"
                     + f"; weights and optimizer state {format_size(rep['state_bytes'])}")
    else:
        peak = f"{rep['measured_peak']} bytes" if rep.get("measured_peak") is not None else "not measured"
        lines.append(f"  measured peak in use {peak}{cap}"
                     + (f" (replayed: {predicted_in_use} bytes)" if predicted_in_use is not None else "")
                     + f"; weights and optimizer state {format_size(rep['state_bytes'])}")
    placed = rep.get("placed_peak") is not None
    predicted = "predicted by remc's layout" if placed else "replayed"
    if rep.get("least_cap") is not None:
        lines.append(f"  least cap that runs {max(rep['steps'], 2)} steps: measured {rep['least_cap']} bytes, "
                     f"{predicted} {rep['least_cap_replayed']} bytes"
                     + (" (below the layout's height a request that no longer fits at its offset is placed by "
                        "best fit)" if placed and rep["least_cap"] < rep["least_cap_replayed"] else ""))
    ref = rep.get("reference")
    if ref is not None:
        if "fits_cap" in ref:
            lines.append(f"  unmodified graph under the same cap: "
                         f"{'fits' if ref['fits_cap'] else 'out of memory'}"
                         + ("" if "fits_cap_arena" not in ref else
                            f" (remc's allocator); on ONNX Runtime's arena: "
                            f"{'fits' if ref['fits_cap_arena'] else 'out of memory'}"))
        if ref.get("least_cap") is not None:
            lines.append(f"  unmodified graph's least cap that runs {max(rep['steps'], 2)} steps: measured "
                         f"{ref['least_cap']} bytes, {predicted} {ref['least_cap_replayed']} bytes")
        lines.append(f"  unmodified graph without a cap: peak in use "
                     f"{format_size(ref['measured_peak']) if ref.get('measured_peak') else '?'}, "
                     f"{ref['steps_per_second']:.2f} steps/s; losses step for step: max relative difference "
                     f"{rep['loss_max_rel_diff']:.3g}")
        if not math.isfinite(rep["loss_max_rel_diff"]):
            lines.append("  (a loss is not finite)")
    return "\n".join(lines)


def _device(text: str) -> str:
    from .ir.device import parse_device
    try:
        parse_device(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None
    return text


def add_parser(sub: Any, size_type: Callable[[str], int]) -> None:
    """The ``train`` subcommand."""
    from .passes.options import OPTIMIZERS
    from .passes.strategies import STRATEGIES
    t = sub.add_parser("train", help="run training steps of a (compiled) graph under a memory cap")
    t.add_argument("model", help="training graph (from remc grad / zoo export --train) or a step graph")
    t.add_argument("--steps", type=int, default=10)
    t.add_argument("--optimizer", choices=OPTIMIZERS, default="adamw")
    t.add_argument("--lr", type=float, default=1e-3)
    t.add_argument("--momentum", type=float, default=0.9, help="SGD momentum")
    t.add_argument("--weight-decay", type=float, default=0.0)
    t.add_argument("--budget", type=size_type, help="compile the step graph under this budget first")
    t.add_argument("--strategy", default="checkmate", choices=STRATEGIES)
    t.add_argument("--time-limit", type=float, default=60.0,
                   help="with --budget: wall-clock seconds for compiling the step graph, every phase (from the "
                        "process's start, as remc compile counts them)")
    t.add_argument("--mem-limit", type=size_type, help="arena cap of the run (default: the budget)")
    t.add_argument("--device", default="cpu", type=_device, help="cpu or cuda[:N]")
    t.add_argument("--fresh-batches", action="store_true", help="new random data every step")
    t.add_argument("--seed", type=int, default=0, help="seed of the random data")
    t.add_argument("--reference", action="store_true",
                   help="also train the unmodified graph and compare the losses step for step")
    t.add_argument("--least-cap", action="store_true",
                   help="also find the least arena cap that runs two steps (of the unmodified graph too with "
                        "--reference)")
    t.add_argument("--cuda-graph", action="store_true",
                   help="capture the steps as CUDA graphs (fixed buffers; their bytes count against the cap)")
    t.add_argument("--loop", choices=("auto", "fixed", "fresh"), default="auto",
                   help="fixed: two sets of state, the data and the outputs in buffers bound once outside the arena "
                        "(counted in the budget; every step the same); fresh: ONNX Runtime allocates each step's "
                        "outputs in its arena, where they stay as the next step's state; auto (default): the one "
                        "the compiled plan fits, fixed buffers first (fixed without --budget; always fixed on "
                        "remc's allocator)")
    t.add_argument("--rtol", type=float, default=None,
                   help="relative tolerance of the loss comparison (default 1e-5 on CPU, 1e-4 on CUDA, whose cuDNN "
                        "kernels are not bitwise deterministic)")
    t.add_argument("--placement", choices=("remc", "arena"), default="remc",
                   help="tensors at remc's layout in one buffer of the cap (default; on CPU through ONNX Runtime's "
                        "C library), or ONNX Runtime's arena")
    from .cli import prepack_option
    prepack_option(t)
    t.add_argument("-o", "--output", help="write the compiled step graph here")
    t.add_argument("--json", action="store_true")
    t.set_defaults(func=train_command)
