"""``remc demo``: the main job on a built-in example — training under a memory cap (on remc's placement by
default, CPU and CUDA: ``--placement arena`` for ONNX Runtime's arena).

Builds a zoo model's training step (forward, loss, backward and the SGD-with-momentum update, one ONNX
graph: ``passes/optimizer.py``), finds the least cap the unmodified step runs under on ONNX Runtime (a
training loop of ``steps`` steps and one run alone, bisected on the device, data included), compiles the
step for a budget of ``fraction`` of that (re-solved until the replayed arena of the loop and of one run
fits: ``remc/fit.py``), runs the compiled step once under a cap equal to the budget against the
unmodified one (which must run out of memory there) and compares their outputs, then trains ``steps``
steps of each under the cap (``remc train``'s loop): the compiled step's losses equal the unmodified
step's, trained without a cap, step for step, while the unmodified step runs out of memory under it.
"""
from __future__ import annotations

import argparse
import dataclasses
import math
import tempfile
from pathlib import Path
from typing import Any

from .ir.errors import RemcError
from .ir.sizes import format_size

DEMO_TIME_LIMIT = 40.0
"""The demo's compile time limit: with 20 s checkmate proved its ResNet50 schedule optimal on an idle 2-core
machine, but at a load of 6-7 it ended at "time_limit, gap 16.21%" with the same schedule (its CP-SAT phase's
share too short to close the gap); with 40 s, at the same load, "optimal" after 24.5 s."""


def run_demo(model: str = "resnet50", *, fraction: float = 0.9, strategy: str = "checkmate",
             time_limit: float = DEMO_TIME_LIMIT, device: str = "cpu", workdir: str | None = None,
             size: str = "small", batch: int | None = 8, steps: int = 5, progress: Any = None,
             settings: Any = None) -> dict[str, Any]:
    """Compile zoo ``model``'s training step under ``fraction`` of what the unmodified step needs, run it
    once and train ``steps`` steps under a cap of the budget; the report. ``progress``: the solver's live
    display (``remc.progress.solver_progress``), which also shows each stage. ``settings``:
    ``backends.runtime.DeviceSettings`` (on CUDA by default remc's placement: the unmodified step's need is
    its layout's height plus the bytes outside it, and every capped run allocates from remc's buffer)."""
    from . import zoo
    from .backends import runtime
    from .backends.runtime import OutOfMemory
    from .backends.strategies import make_options
    from .backends.trainer import least_cap
    from .fit import predict, predict_loop
    from .ir.onnx_io import save_model, write_text_atomic
    from .ir.plan import print_plan
    from .passes.optimizer import OptimizerOptions, append_optimizer
    from .passes.strategies import SOLVER_NAMES
    from .plancheck import stamp_plan
    from .progress import fit_round_note
    from .run_cli import run_graph
    from .train import TrainOptions, compile_step_graph, data_feeds, reference_run, run_training
    settings = settings or runtime.DEFAULT_SETTINGS
    if not settings.placed_loop(device):  # the demo trains: where the loop cannot run on remc's allocator,
        settings = dataclasses.replace(settings, placement="arena")  # every part of it runs on the arena

    if model not in zoo.list_models():
        raise RemcError(f"unknown zoo model {model!r}; models: {', '.join(zoo.list_models())}")
    cfg = dict(zoo.small_config(model) if size == "small" else zoo.paper_config(model))
    b = batch or cfg.pop("batch", 1)
    cfg.pop("batch", None)
    out_dir = Path(workdir or tempfile.mkdtemp(prefix="remc-demo-"))
    out_dir.mkdir(parents=True, exist_ok=True)
    step_path, out_path, plan_path = out_dir / f"{model}_step.onnx", out_dir / f"{model}_step_remat.onnx", \
        out_dir / f"{model}_step.plan"
    note = getattr(progress, "note", lambda text: None)
    note(f"building the training graph of {model} and its SGD update")
    optimizer = OptimizerOptions("sgd", lr=0.01, momentum=0.9)
    step = append_optimizer(zoo.export(model, b, train=True, **cfg), optimizer)
    save_model(step, step_path)

    note(f"finding the least cap the unmodified graph runs under on {device} ({steps} training steps, one run)")
    if settings.placed(device):  # exact: what remc's allocator needs for the unmodified step (its layout)
        loop_need = predict_loop(step, device, steps, settings=settings).total
        single_need = predict(step, device, settings=settings).total
    else:
        feeds = data_feeds(step, 0, False)
        loop_need = min(least_cap(step, feeds, device, steps=steps, fixed_buffers=fixed, settings=settings)
                        for fixed in (True, False))
        single_need = runtime.bisect_peak(step, device, feeds=runtime.random_inputs(step, 0), runs=2,
                                          resolution=256, settings=settings).peak + runtime.outside_bytes(step, device)
    budget = int(fraction * min(loop_need, single_need))

    note(f"compiling for a budget of {format_size(budget)}")
    options = make_options(strategy, time_limit=time_limit) if strategy in SOLVER_NAMES else None
    state, fit = compile_step_graph(step, budget, strategy, device=device, options=options, steps=steps,
                                    progress=progress, on_round=fit_round_note(progress), settings=settings)
    plan_text = print_plan(state.plan)
    stamp_plan(state.lowered, plan_text)
    save_model(state.lowered, out_path)
    write_text_atomic(plan_path, plan_text)

    note("running the compiled graph and the unmodified one under a cap of the budget")
    rep = run_graph(str(out_path), device=device, compare=str(step_path), plan=str(plan_path), iters=5,
                    settings=settings)
    ways = [("unmodified_under_cap", settings)]
    if settings.placed(device):  # also as a user without remc runs it: ONNX Runtime's arena capped at the budget
        ways.append(("unmodified_under_cap_arena", dataclasses.replace(settings, placement="arena")))
    for key, st in ways:
        try:
            run_graph(str(step_path), device=device, mem_limit=budget, iters=1, settings=st)
            rep[key] = "ran"
        except OutOfMemory as e:
            rep[key] = f"out of memory ({e})"

    note(f"training {steps} steps of each under a cap of the budget")
    opts = TrainOptions(steps=steps, device=device, mem_limit=budget, fixed_buffers=fit.fixed_buffers is not False,
                        settings=settings)
    training = run_training(state.lowered, opts)
    training["reference"] = reference_run(step, opts)
    training["predicted_in_use"] = fit.prediction.peak_total if fit.prediction is not None else None
    training["predicted_least_cap"] = fit.prediction.total if fit.prediction is not None else None
    rep.update(zoo_model=model, batch=b, loop_need=loop_need, single_need=single_need, budget=budget,
               strategy=strategy, solver_status=state.schedule.report.status, optimizer="sgd lr=0.01 momentum=0.9",
               solver_gap=state.schedule.report.gap, units=state.dag.n, workdir=str(out_dir),
               fit_rounds=fit.rounds, solver_budget=fit.solver_budget, training=training, steps=steps,
               loop="fixed buffers" if opts.fixed_buffers else "fresh outputs")
    return rep


def print_demo(rep: dict[str, Any]) -> None:
    """The demo's report, as the README shows it."""
    need = "the height of remc's layout" if rep.get("placement") == "remc" else "least caps"
    print(f"{rep['zoo_model']} (batch {rep['batch']}, {rep['units']} scheduling units), one training step = "
          f"forward, loss, backward and {rep['optimizer']}: the unmodified step needs "
          f"{format_size(rep['loop_need'])} on onnxruntime {rep['device']} for {rep['steps']} steps "
          f"({format_size(rep['single_need'])} for one run; {need}, data included); budget "
          f"{format_size(rep['budget'])} ({rep['budget']} bytes)")
    g = rep.get("solver_gap")
    gap = "" if g is None else f", gap {100 * g:.2f}% of the recomputation overhead" if math.isfinite(g) else ", no dual bound yet"
    print(f"strategy {rep['strategy']}: {rep['solver_status']}{gap}")
    print(f"fit: solver budget {format_size(rep['solver_budget'])} after {rep['fit_rounds']} round(s)")
    if rep.get("placement") == "remc":
        st = rep.get("placement_stats") or {}
        print(f"one step, predicted: peak {format_size(rep['predicted_peak'])} ({rep['predicted_peak']} bytes: remc's "
              f"layout of every tensor in one buffer, plus the inputs), overhead {rep['predicted_overhead']:.3f}x; "
              f"{st.get('planned', 0)} of {st.get('calls', 0)} allocations at their planned address")
    else:
        print(f"one step, predicted: peak {format_size(rep['predicted_peak'])} ({rep['predicted_peak']} bytes; the "
              f"replayed arena needs a cap of {rep['predicted_held']} bytes), overhead {rep['predicted_overhead']:.3f}x")
    ok = rep["measured_peak"] is not None and rep["measured_peak"] <= rep["budget"]
    print(f"one step, measured on onnxruntime {rep['device']} under a cap of the budget: peak "
          f"{format_size(rep['measured_peak'])} ({rep['measured_peak']} bytes, "
          f"{'<=' if ok else '>'} budget), time overhead {rep['measured_overhead']:.3f}x (a few runs of a "
          f"millisecond step: timing noise, not the plan's cost; the training rates below are steadier)")
    print(f"the unmodified graph under the same cap: {rep['unmodified_under_cap']}")
    if "unmodified_under_cap_arena" in rep:
        print(f"  ... and on ONNX Runtime's own arena ({_arena_cap(rep['device'])}): {rep['unmodified_under_cap_arena']}")
    print(f"outputs match the unmodified graph: {rep['outputs_match']} ({rep['compare_worst']})")
    print_training(rep)
    print(f"files in {rep['workdir']}")


def _arena_cap(device: str) -> str:
    return "gpu_mem_limit = cap" if device.startswith("cuda") else "its CPU arena's max_mem = cap"


def print_training(rep: dict[str, Any]) -> None:
    """The training part of the demo's report."""
    t, ref = rep["training"], rep["training"]["reference"]
    placed = t.get("placed_peak") is not None
    outside = "remc's buffer" if placed else "the arena"
    where = (f"two sets of weights and momentum in buffers bound once, outside {outside}"
             if rep["loop"] == "fixed buffers" else "weights and momentum kept in the arena between steps")
    print(f"training {rep['steps']} steps under a cap of the budget ({rep['budget']} bytes), {where}:")
    for k, (loss, ref_loss) in enumerate(zip(t["losses"], ref["losses"])):
        print(f"  step {k + 1}  loss {loss:.6f}   unmodified graph (no cap) {ref_loss:.6f}")
    peak = t.get("measured_peak")
    ok = peak is not None and peak <= rep["budget"]
    if placed:
        st = t.get("placement") or {}
        print(f"  compiled: {t['steps_per_second']:.2f} steps/s, peak measured {peak} bytes ({'<=' if ok else '>'} "
              f"budget: remc's buffer's high-water mark plus the state, data and output buffers), predicted "
              f"{t['predicted_in_use']} bytes (remc's layout); {st.get('planned', 0)} of {st.get('calls', 0)} "
              f"allocations at their planned address")
    else:
        print(f"  compiled: {t['steps_per_second']:.2f} steps/s, peak in use measured {peak} bytes "
              f"({'<=' if ok else '>'} budget), replayed {t['predicted_in_use']} bytes; least cap replayed "
              f"{t['predicted_least_cap']} bytes")
    under = "ran" if ref.get("fits_cap") else f"out of memory ({ref.get('oom', '')})"
    print(f"  the unmodified graph under the same cap: {under}")
    if "fits_cap_arena" in ref:
        under = "ran" if ref["fits_cap_arena"] else f"out of memory ({ref.get('oom_arena', '')})"
        print(f"  ... and on ONNX Runtime's own arena ({_arena_cap(rep['device'])}): {under}")
    same = t["losses"] == ref["losses"]
    diff = max((abs(a - b) / max(abs(b), 1e-30) for a, b in zip(t["losses"], ref["losses"])), default=0.0)
    print(f"  the unmodified graph without a cap: {ref['steps_per_second']:.2f} steps/s; losses equal step for "
          f"step: {same}" + ("" if same else f" (max relative difference {diff:.3g}; cuDNN is not bitwise "
                                             "deterministic)" if rep["device"].startswith("cuda") else
                             f" (max relative difference {diff:.3g})"))


def demo_command(args: argparse.Namespace) -> int:
    from .ir.errors import RuntimeFailure
    from .progress import solver_progress
    with solver_progress(args.strategy) as progress:
        from .cli import device_settings
        rep = run_demo(args.model, fraction=args.fraction, strategy=args.strategy, time_limit=args.time_limit,
                       device=args.device, workdir=args.workdir, batch=args.batch, steps=args.steps,
                       progress=progress, settings=device_settings(args))
    print_demo(rep)
    if not rep["outputs_match"]:
        raise RuntimeFailure(rep.get("error", "outputs differ"))
    if rep["training"]["losses"] != rep["training"]["reference"]["losses"]:
        raise RuntimeFailure("the compiled graph's losses differ from the unmodified graph's")
    return 0
