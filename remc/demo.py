"""``remc demo``: the main job on a built-in example.

Builds a zoo model's training graph, compiles it under a budget below its checkpoint-all peak, runs the
original and the compiled graph on ONNX Runtime with the same inputs, and prints measured vs predicted
peak memory and overhead.
"""
from __future__ import annotations

import argparse
import math
import tempfile
from pathlib import Path
from typing import Any

from .ir.errors import RemcError
from .ir.sizes import format_size


def run_demo(model: str = "resnet50", *, fraction: float = 0.7, strategy: str = "checkmate",
             time_limit: float = 60.0, device: str = "cpu", workdir: str | None = None,
             size: str = "small", batch: int | None = 8) -> dict[str, Any]:
    """Compile zoo ``model`` at ``fraction`` of its checkpoint-all peak and run it; the report."""
    from . import zoo
    from .ir.onnx_io import save_model, write_text_atomic
    from .ir.plan import print_plan
    from .ir.schedule import checkpoint_all
    from .pipeline import State, compile_pipeline, run, stages
    from .run_cli import run_graph

    if model not in zoo.list_models():
        raise RemcError(f"unknown zoo model {model!r}; models: {', '.join(zoo.list_models())}")
    cfg = dict(zoo.small_config(model) if size == "small" else zoo.paper_config(model))
    b = batch or cfg.pop("batch", 1)
    cfg.pop("batch", None)
    out_dir = Path(workdir or tempfile.mkdtemp(prefix="remc-demo-"))
    out_dir.mkdir(parents=True, exist_ok=True)
    train_path, out_path, plan_path = out_dir / f"{model}_train.onnx", out_dir / f"{model}_remat.onnx", \
        out_dir / f"{model}.plan"
    save_model(zoo.export(model, b, train=True, **cfg), train_path)

    from .backends.strategies import make_options
    options = make_options(strategy, time_limit=time_limit) if strategy in ("checkmate", "approx") else None
    passes = compile_pipeline(strategy=strategy, options=options)
    state = run(stages(passes, last="units"), State(model=str(train_path)))  # import, costs, units
    full_peak = checkpoint_all(state.dag).peak(state.dag)
    state.budget = int(fraction * full_peak)
    run(stages(passes, first="schedule"), state)                    # schedule, plan, lower
    save_model(state.lowered, out_path)
    write_text_atomic(plan_path, print_plan(state.plan))
    rep = run_graph(str(out_path), device=device, compare=str(train_path), plan=str(plan_path), iters=5)
    rep.update(zoo_model=model, batch=b, checkpoint_all_peak=full_peak, budget=state.budget,
               strategy=strategy, solver_status=state.schedule.report.status,
               solver_gap=state.schedule.report.gap, units=state.dag.n, workdir=str(out_dir))
    return rep


def print_demo(rep: dict[str, Any]) -> None:
    print(f"{rep['zoo_model']} (batch {rep['batch']}, {rep['units']} scheduling units): checkpoint-all needs "
          f"{format_size(rep['checkpoint_all_peak'])}; budget {format_size(rep['budget'])}")
    g = rep.get("solver_gap")
    gap = "" if g is None else f", gap {100 * g:.2f}%" if math.isfinite(g) else ", no dual bound yet"
    print(f"strategy {rep['strategy']}: {rep['solver_status']}{gap}")
    print(f"predicted: peak {format_size(rep['predicted_peak'])}, overhead {rep['predicted_overhead']:.3f}x")
    print(f"measured on onnxruntime {rep['device']}: peak {format_size(rep['measured_peak'])} "
          f"(unmodified graph: {format_size(rep['reference_peak'])}), "
          f"time overhead {rep['measured_overhead']:.3f}x")
    print(f"outputs match the unmodified graph: {rep['outputs_match']} ({rep['compare_worst']})")
    print(f"files in {rep['workdir']}")


def demo_command(args: argparse.Namespace) -> int:
    from .ir.errors import RuntimeFailure
    rep = run_demo(args.model, fraction=args.fraction, strategy=args.strategy, time_limit=args.time_limit,
                   device=args.device, workdir=args.workdir, batch=args.batch)
    print_demo(rep)
    if not rep["outputs_match"]:
        raise RuntimeFailure(rep.get("error", "outputs differ"))
    return 0
