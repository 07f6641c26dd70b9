#!/usr/bin/env python3
"""remc's live-bytes model of a plan against what its lowered graph keeps live, node by node.

The solver keeps constant + (M of the live registers) + W of the running unit within the budget; the lowered
graph on the device holds its arena tensors (``passes.arena.graph_events``: ONNX Runtime's allocation planner,
in place and aliasing kernels, outputs nobody reads kept to the end). For every lowered node this tool puts
side by side:

- predicted: the bytes remc's model has live while the node runs (the M values of every live register, and the
  running unit's own values as ``passes.dagbuild.unit_peak`` counts them), named tensor by tensor
  (``<value>/re<k>`` for the k-th recompute, as lowering names them);
- lowered: the arena tensors live while the node runs (graph outputs and initializers excluded: the model's
  constant has them), from the lowered graph's events;

each with and without kernel scratch (the model's per-node scratch in W_v, the events' measured one; the
comparison is ``passes.livecheck.compare``), per plan for each strategy and budget asked. It prints the totals,
the first node where lowered > predicted and the tensors the lowered graph holds there that the model does not,
and what the device needs (``remc.fit.predict``) with its parts at the live peak.

    python tools/model_vs_lowered.py unet_s2.onnx --strategy checkmate,approx --fraction 0.7,0.75,0.8
    python tools/model_vs_lowered.py TRAIN.onnx --strategy approx --budget 1200000 --json out.json --save-lowered low.onnx
"""
# ruff: noqa: E402
from __future__ import annotations

import argparse
import dataclasses
import json
import sys

import onnx

from remc.backends.strategies import REGISTRY, make_options
from remc.fit import dag_with_measured_scratch
from remc.ir.plan import print_plan
from remc.ir.schedule import checkpoint_all
from remc.passes.arena import graph_events
from remc.passes.livecheck import NodeLive, compare
from remc.pipeline import State, compile_pipeline, run, shaped_model


def report(rows: list[NodeLive], with_scratch: bool, tolerance: int = 0) -> dict:
    """The totals, the first node where the lowered graph holds more than the model, and the worst one."""
    def tot(r: NodeLive) -> tuple[int, int]:
        return (r.predicted + r.predicted_scratch, r.lowered + r.lowered_scratch) if with_scratch else \
            (r.predicted, r.lowered)
    peak_p = max(tot(r)[0] for r in rows)
    peak_l = max(tot(r)[1] for r in rows)
    over = [r for r in rows if tot(r)[1] > tot(r)[0] + tolerance]
    worst = max(rows, key=lambda r: tot(r)[1] - tot(r)[0])
    def show(r: NodeLive | None) -> dict | None:
        if r is None:
            return None
        p, low = tot(r)
        return {"node": r.node, "predicted": p, "lowered": low, "excess": low - p,
                "lowered_not_in_model": r.extra[:8], "model_not_lowered": r.missing[:8]}
    return {"predicted_peak": peak_p, "lowered_peak": peak_l, "nodes": len(rows), "nodes_over": len(over),
            "first_over": show(over[0] if over else None), "worst": show(worst)}


def device_need(lowered: onnx.ModelProto, device: str, kernel: dict) -> dict:
    """What the device needs for ``lowered`` (``remc.fit.predict``: remc's layout on CPU) and, at the live peak
    of its allocations, the bytes by kind: tensors (graph outputs apart), kernel temporaries and kept buffers,
    initializers and pre-packed weights in the buffer, and the 256-byte rounding."""
    from remc.fit import predict
    from remc.passes.arena import rounded
    from remc.passes.placement import blocks_of
    pred = predict(lowered, device)
    ev = graph_events(lowered, device, kernel)
    blocks = blocks_of(ev)
    times = sorted({b.start for b in blocks})
    outputs = {o.name for o in lowered.graph.output}
    raw = {k: b for ne in ev.nodes for k, b in ne.allocs}
    best: tuple[int, int] = (-1, 0)
    for t in times:
        live = sum(b.size for b in blocks if b.start <= t < b.end)
        best = max(best, (live, t))
    parts: dict[str, int] = {}
    for b in blocks:
        if not b.start <= best[1] < b.end:
            continue
        w = b.what
        kind = ("initializer" if w == "initializer" else "pre-packed weight" if w == "pre-packed weight" else
                "kernel kept" if w.startswith("kept by") else "kernel temporary" if w.startswith(("scratch of",
                "temporary of")) else "graph output" if w in outputs else "tensor")
        parts[kind] = parts.get(kind, 0) + b.size
        if w in raw:
            parts["of which rounding"] = parts.get("of which rounding", 0) + rounded(raw[w]) - raw[w]
    return {"total": pred.total, "layout_height": pred.arena, "live_lower_bound": pred.in_use_peak,
            "outside": pred.outside, "at_live_peak": parts}


def one(st0: State, strategy: str, budget: int, time_limit: float, device: str, granularity: str,
        save: str | None = None) -> dict:
    """Solve, plan and lower at ``budget`` from the DAG state ``st0`` and compare (``report``)."""
    from remc.backends.scratch import kernel_memory
    from remc.passes.validate import simulate
    fields = {f.name for f in dataclasses.fields(REGISTRY[strategy].options)}
    passes = compile_pipeline(strategy=strategy, device=device, granularity=granularity,
                              options=make_options(strategy, **({"time_limit": time_limit}
                                                                if "time_limit" in fields else {})))
    st = State(model=st0.model, budget=budget, graph=st0.graph, costs=st0.costs, units=st0.units,
               granularity=st0.granularity, dag=st0.dag)
    run(passes[3:], st)
    assert st.plan is not None and st.lowered is not None and st.dag is not None and st.graph is not None
    sim = simulate(st.plan)
    km = kernel_memory(st.lowered, device)
    km_in = kernel_memory(shaped_model(st.graph), device)  # what W_v took (remc.fit.dag_with_measured_scratch)
    scratch = {n.name: int(k.scratch) for n in st.graph.nodes if (k := km_in.get(n.name)) is not None}
    rows = compare(st.graph, st.plan, st.lowered, device, scratch, km)
    if save:
        onnx.save(st.lowered, save)
        with open(save + ".plan", "w") as f:
            f.write(print_plan(st.plan))
    rep = {"strategy": strategy, "solver_budget": budget, "constant": int(st.dag.constant),
           "model_peak": int(sim.peak), "device": device_need(st.lowered, device, km),
           "validator_peak_less_constant": int(sim.peak - st.dag.constant),
           "recomputes": sum(sim.recomputes.values()),
           "without_scratch": report(rows, False), "with_scratch": report(rows, True)}
    return {"report": rep, "rows": [r.__dict__ for r in rows]}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("model", help="training graph (.onnx)")
    ap.add_argument("--strategy", default="checkmate", help="one or several, comma-separated")
    ap.add_argument("--fraction", default=None, help="budget: these fractions (comma-separated) of checkpoint-all's peak")
    ap.add_argument("--budget", type=int, default=None, help="solver budget in bytes")
    ap.add_argument("--time-limit", type=float, default=30.0)
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--granularity", default="coarse")
    ap.add_argument("--json", default=None, help="write the reports and per-node rows here")
    ap.add_argument("--save-lowered", default=None, help="write the (last) lowered graph here, its plan beside it")
    a = ap.parse_args(argv)
    model = onnx.load(a.model)
    passes = compile_pipeline(device=a.device, granularity=a.granularity)
    st = run(passes[:3], State(model=model))
    dag_with_measured_scratch(st, a.device)
    assert st.dag is not None
    ca = int(checkpoint_all(st.dag).peak(st.dag))
    budgets = [a.budget] if a.budget is not None else [int(float(f) * ca) for f in (a.fraction or "1.0").split(",")]
    results = []
    for strategy in a.strategy.split(","):
        for b in budgets:
            try:
                r = one(st, strategy, b, a.time_limit, a.device, a.granularity, a.save_lowered)
            except Exception as e:  # noqa: BLE001 (a strategy with no plan at this budget: recorded)
                r = {"report": {"strategy": strategy, "solver_budget": b, "error": str(e)[:300]}, "rows": []}
            rep = r["report"]
            rep["checkpoint_all_peak"] = ca
            results.append(r)
            ws, wsc = rep.get("without_scratch"), rep.get("with_scratch")
            line = {"strategy": strategy, "budget": b} | ({"error": rep["error"][:120]} if "error" in rep else {
                "model_peak": rep["model_peak"], "device_need": rep["device"]["total"],
                "model_live_peak": ws["predicted_peak"], "lowered_live_peak": ws["lowered_peak"],
                "nodes_over": ws["nodes_over"], "with_scratch": [wsc["predicted_peak"], wsc["lowered_peak"],
                                                                 wsc["nodes_over"]],
                "first_over": ws["first_over"] and [ws["first_over"]["node"], ws["first_over"]["excess"],
                                                    ws["first_over"]["lowered_not_in_model"][:3]]})
            print(json.dumps(line), flush=True)
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"model": a.model, "results": results}, f)
    return 0


if __name__ == "__main__":
    sys.exit(main())
