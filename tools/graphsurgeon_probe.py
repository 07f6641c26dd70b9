"""Should lowering use onnx-graphsurgeon? Measure it on the zoo instead of guessing (issue #10, item 7).

For each model: compile a plan with recomputations (a baseline strategy under a budget below
checkpoint-all), lower it with remc's own lowering (``passes/lower.py``), and lower it again with the
dead-copy removal done by onnx-graphsurgeon (``import_onnx`` -> ``cleanup()`` -> ``export_onnx``) instead of
remc's ``dead_nodes``/``_drop_dead_optional_outputs``. Reports whether both give the same node list
(order included), whether graphsurgeon's round trip alone keeps the order, and the time of each (median of
``--repeats``; ratios in one run). Writes JSON to ``--out``.

    pip install onnx-graphsurgeon
    python tools/graphsurgeon_probe.py --out results/graphsurgeon_probe.json
"""
from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path

import onnx
import onnx_graphsurgeon as gs

from remc import zoo
from remc.ir.errors import InfeasibleError
from remc.ir.onnx_io import export_model
from remc.ir.plan import Compute
from remc.ir.schedule import checkpoint_all
from remc.passes import lower as remc_lower
from remc.pipeline import State, compile_pipeline, run, stages


def lower_with_graphsurgeon(graph, plan) -> onnx.ModelProto:
    """remc's lowering with graphsurgeon doing the dead-code removal (cleanup keeps node order)."""
    members = {u.name: u.members for u in plan.units}
    by_name = {n.name: n for n in graph.nodes}
    current: dict[str, str] = {}
    count: dict[str, int] = {}
    protos = []
    for stage in plan.stages:
        for stmt in stage:
            if isinstance(stmt, Compute):
                k = count.get(stmt.unit, 0)
                count[stmt.unit] = k + 1
                protos += [remc_lower._emit(by_name[m].proto, k, current) for m in members[stmt.unit]]
    g = gs.import_onnx(export_model(graph, protos, name=f"{graph.name}_remat"))
    g.cleanup(remove_unused_node_outputs=True)
    return remc_lower.order_for_ort(gs.export_onnx(g))


def node_list(m: onnx.ModelProto) -> list[tuple[str, str, tuple[str, ...], tuple[str, ...]]]:
    """Op, name, inputs and outputs of every node in order; trailing unused optional outputs ('')
    are dropped (graphsurgeon writes fewer of them, which means the same)."""
    def strip(names) -> tuple[str, ...]:
        out = list(names)
        while out and not out[-1]:
            out.pop()
        return tuple(out)
    return [(n.op_type, n.name, tuple(n.input), strip(n.output)) for n in m.graph.node]


def timed(fn, repeats: int) -> tuple[float, object]:
    times, out = [], None
    for _ in range(repeats):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), out


def probe(name: str, strategy: str, fraction: float, repeats: int) -> dict:
    cfg = zoo.small_config(name)
    model = zoo.export(name, cfg.pop("batch"), train=True, weights="shape-only", **cfg)
    passes = compile_pipeline(strategy=strategy)
    state = run(stages(passes, last="units"), State(model=model))
    full = checkpoint_all(state.dag).peak(state.dag)
    while True:  # the largest budget <= fraction that the strategy can meet (baselines have few points)
        state.budget = int(fraction * full)
        try:
            run(stages(passes, "schedule", "plan"), state)
            break
        except InfeasibleError:
            fraction = round(fraction + 0.05, 2)
    recomputed = sum(isinstance(s, Compute) for st in state.plan.stages for s in st) - len(state.plan.units)
    t_remc, ours = timed(lambda: remc_lower.lower(state.graph, state.plan), repeats)
    t_gs, theirs = timed(lambda: lower_with_graphsurgeon(state.graph, state.plan), repeats)
    t_rt, rt = timed(lambda: gs.export_onnx(gs.import_onnx(ours)), repeats)
    try:
        onnx.shape_inference.infer_shapes(theirs, check_type=True, strict_mode=True)
        theirs_valid = True
    except Exception:  # e.g. a Split whose non-optional outputs cleanup() removed
        theirs_valid = False
    return {"model": name, "strategy": strategy, "budget_fraction": fraction, "onnx_nodes": len(ours.graph.node),
            "recomputed_units": recomputed, "same_node_list": node_list(ours) == node_list(theirs),
            "graphsurgeon_model_valid": theirs_valid,
            "roundtrip_keeps_order": node_list(rt) == node_list(ours),
            "remc_lower_s": t_remc, "graphsurgeon_lower_s": t_gs, "ratio": t_gs / t_remc}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", default="vgg16,resnet50,mobilenet_v2,unet,gpt2")
    ap.add_argument("--strategy", default="lin-greedy")
    ap.add_argument("--fraction", type=float, default=0.7)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--out", default="results/graphsurgeon_probe.json")
    args = ap.parse_args()
    rows = []
    for name in args.models.split(","):
        r = probe(name, args.strategy, args.fraction, args.repeats)
        print(json.dumps(r))
        rows.append(r)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps({"graphsurgeon": gs.__version__, "rows": rows}, indent=1) + "\n")


if __name__ == "__main__":
    main()
