"""``remc demo``: the main job on a built-in example.

Builds a zoo model's training graph, compiles it under a budget below what its unmodified graph needs on
ONNX Runtime (the least cap it runs under, bisected on the device, plus its inputs and parameters), runs the
compiled graph under a cap equal to the budget and the unmodified graph under the same cap (it must run
out of memory), and prints measured vs predicted peak memory and overhead.
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


def run_demo(model: str = "resnet50", *, fraction: float = 0.9, strategy: str = "checkmate",
             time_limit: float = 60.0, device: str = "cpu", workdir: str | None = None,
             size: str = "small", batch: int | None = 8, progress: Any = None, settings: Any = None) -> dict[str, Any]:
    """Compile zoo ``model`` at ``fraction`` of its checkpoint-all peak and run it; the report. ``progress``:
    the solver's live display (``remc.progress.solver_progress``), which also shows each step. ``settings``:
    ``backends.runtime.DeviceSettings`` (on CUDA by default remc's placement: the unmodified graph's need is
    its layout's height plus the bytes outside it, and every capped run allocates from remc's buffer)."""
    from . import zoo
    from .backends import runtime
    from .backends.runtime import OutOfMemory
    from .backends.strategies import make_options
    from .fit import compile_fit, predict
    from .ir.onnx_io import load_model, save_model, write_text_atomic
    from .ir.plan import print_plan
    from .passes.strategies import SOLVER_NAMES
    from .pipeline import State, compile_pipeline, run, stages
    from .progress import fit_round_note
    from .run_cli import run_graph
    settings = settings or runtime.DEFAULT_SETTINGS

    if model not in zoo.list_models():
        raise RemcError(f"unknown zoo model {model!r}; models: {', '.join(zoo.list_models())}")
    cfg = dict(zoo.small_config(model) if size == "small" else zoo.paper_config(model))
    b = batch or cfg.pop("batch", 1)
    cfg.pop("batch", None)
    out_dir = Path(workdir or tempfile.mkdtemp(prefix="remc-demo-"))
    out_dir.mkdir(parents=True, exist_ok=True)
    train_path, out_path, plan_path = out_dir / f"{model}_train.onnx", out_dir / f"{model}_remat.onnx", \
        out_dir / f"{model}.plan"
    note = getattr(progress, "note", lambda text: None)
    note(f"building the training graph of {model}")
    save_model(zoo.export(model, b, train=True, **cfg), train_path)

    options = make_options(strategy, time_limit=time_limit) if strategy in SOLVER_NAMES else None
    passes = compile_pipeline(strategy=strategy, device=device, options=options, progress=progress)
    note(f"finding the least cap the unmodified graph runs under on {device}")
    # what the unmodified graph needs there: the least cap it runs under (bisected on the device), plus the
    # inputs and parameters outside the arena
    train = load_model(str(train_path), with_data=True)
    if settings.placed(device):  # exact: what remc's allocator needs for the unmodified graph
        full_peak = predict(train, device, settings=settings).total
    else:
        full_peak = runtime.bisect_peak(train, device, feeds=runtime.random_inputs(train, 0), runs=2,
                                        resolution=4096, settings=settings).peak + runtime.outside_bytes(train, device)
    state = run(stages(passes, last="units"), State(model=str(train_path)))  # import, costs, units
    state.budget = int(fraction * full_peak)
    note(f"compiling for a budget of {format_size(state.budget)}")
    fit = compile_fit(stages(passes, first="schedule"), state, device=device, verify=True,  # re-solve to fit
                      on_round=fit_round_note(progress), settings=settings)
    note("running the compiled graph and the unmodified one under a cap of the budget")
    save_model(state.lowered, out_path)
    write_text_atomic(plan_path, print_plan(state.plan))
    rep = run_graph(str(out_path), device=device, compare=str(train_path), plan=str(plan_path), iters=5,
                    settings=settings)
    ways = [("unmodified_under_cap", settings)]
    if settings.placed(device):  # also as a user without remc runs it: ONNX Runtime's arena, gpu_mem_limit = cap
        ways.append(("unmodified_under_cap_arena", dataclasses.replace(settings, placement="arena")))
    for key, st in ways:
        try:
            run_graph(str(train_path), device=device, mem_limit=state.budget, iters=1, settings=st)
            rep[key] = "ran"
        except OutOfMemory as e:
            rep[key] = f"out of memory ({e})"
    rep.update(zoo_model=model, batch=b, checkpoint_all_peak=full_peak, budget=state.budget,
               strategy=strategy, solver_status=state.schedule.report.status,
               solver_gap=state.schedule.report.gap, units=state.dag.n, workdir=str(out_dir),
               fit_rounds=fit.rounds, solver_budget=fit.solver_budget)
    return rep


def print_demo(rep: dict[str, Any]) -> None:
    how = "remc's layout of its tensors in one buffer" if rep.get("placement") == "remc" else "least cap it runs under"
    print(f"{rep['zoo_model']} (batch {rep['batch']}, {rep['units']} scheduling units): the unmodified graph needs "
          f"{format_size(rep['checkpoint_all_peak'])} on onnxruntime {rep['device']} ({how}, "
          f"inputs and parameters included); budget {format_size(rep['budget'])} ({rep['budget']} bytes)")
    g = rep.get("solver_gap")
    gap = "" if g is None else f", gap {100 * g:.2f}%" if math.isfinite(g) else ", no dual bound yet"
    print(f"strategy {rep['strategy']}: {rep['solver_status']}{gap}")
    print(f"fit: solver budget {format_size(rep['solver_budget'])} after {rep['fit_rounds']} round(s)")
    if rep.get("placement") == "remc":
        st = rep.get("placement_stats") or {}
        print(f"predicted: peak {format_size(rep['predicted_peak'])} ({rep['predicted_peak']} bytes: remc's layout of "
              f"every tensor in one buffer, plus the inputs), overhead {rep['predicted_overhead']:.3f}x; "
              f"{st.get('planned', 0)} of {st.get('calls', 0)} allocations at their planned address")
    else:
        print(f"predicted: peak {format_size(rep['predicted_peak'])} ({rep['predicted_peak']} bytes; the replayed "
              f"arena needs a cap of {rep['predicted_held']} bytes), "
              f"overhead {rep['predicted_overhead']:.3f}x")
    ok = rep["measured_peak"] is not None and rep["measured_peak"] <= rep["budget"]
    print(f"measured on onnxruntime {rep['device']} under a cap of the budget: peak "
          f"{format_size(rep['measured_peak'])} ({rep['measured_peak']} bytes, "
          f"{'<=' if ok else '>'} budget), time overhead {rep['measured_overhead']:.3f}x")
    print(f"the unmodified graph under the same cap: {rep['unmodified_under_cap']}")
    if "unmodified_under_cap_arena" in rep:
        print(f"  ... and on ONNX Runtime's own arena (gpu_mem_limit = cap): {rep['unmodified_under_cap_arena']}")
    print(f"outputs match the unmodified graph: {rep['outputs_match']} ({rep['compare_worst']})")
    print(f"files in {rep['workdir']}")


def demo_command(args: argparse.Namespace) -> int:
    from .ir.errors import RuntimeFailure
    from .progress import solver_progress
    with solver_progress(args.strategy) as progress:
        from .backends.runtime import DeviceSettings
        rep = run_demo(args.model, fraction=args.fraction, strategy=args.strategy, time_limit=args.time_limit,
                       device=args.device, workdir=args.workdir, batch=args.batch, progress=progress,
                       settings=DeviceSettings(placement=getattr(args, "placement", "remc")))
    print_demo(rep)
    if not rep["outputs_match"]:
        raise RuntimeFailure(rep.get("error", "outputs differ"))
    return 0
