"""Zoo training graphs at the paper's sizes: nodes, edges, parameter bytes, checkpoint-all peak, and the
scheduling DAG and MILP sizes at fine (ONNX node) and coarse (unit) granularity.

Weights are shape-only (no tensor data is allocated), so paper-size graphs import in seconds.

    python tools/zoo_stats.py --out results/zoo_stats.json [--models vgg16,resnet50] [--size paper|small]

Prints a Markdown table (the one in BENCHMARKS.md) and writes every number to the JSON file.
"""
from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np

from remc import zoo
from remc.ir.onnx_io import import_model
from remc.ir.schedule import checkpoint_all
from remc.passes._lp import allowed, build_model
from remc.passes.coarsen import coarse_units
from remc.passes.costs import node_costs
from remc.passes.dagbuild import build_dag, fine_units
from remc.pipeline import shaped_model
from remc.sizes import format_size

BUILD_LIMIT = 3_000_000
"""Build the MILP only when its R/S/FREE columns are estimated below this; otherwise count columns only."""


def milp_size(dag) -> dict:
    """Columns, binaries and rows of the MILP at a budget of the checkpoint-all peak."""
    r_ok, s_ok, _ = allowed(dag)
    m = len(dag.edges)
    estimate = int(r_ok.sum() + s_ok.sum()) + m * dag.n // 2
    if estimate > BUILD_LIMIT:
        return {"columns_estimate": estimate, "r_s_binaries": int(r_ok.sum() + s_ok.sum() - dag.n), "built": False}
    model = build_model(dag, int(checkpoint_all(dag).peak(dag)))
    return {"columns": model.num_col, "binaries": int(model.integral.sum()), "rows": model.num_row, "built": True,
            "nonzeros": int(model.A.nnz)}


def stats(name: str, size: str) -> dict:
    cfg = dict(zoo.paper_config(name) if size == "paper" else zoo.small_config(name))
    batch = cfg.pop("batch", 1)
    t0 = time.perf_counter()
    model = zoo.export(name, batch, train=True, weights="shape-only", **cfg)
    graph = import_model(model)
    costs = node_costs(shaped_model(graph), "flops")
    out = {"model": name, "batch": batch, "config": cfg, "onnx_nodes": len(graph.nodes),
           "onnx_edges": sum(len(v.uses) for v in graph.values.values() if v.kind == "activation"),
           "param_bytes": sum(v.nbytes for v in graph.params), "input_bytes": sum(v.nbytes for v in graph.inputs),
           "constant_bytes": graph.constant_bytes(), "flops": float(sum(costs.values()))}
    for gran, units in (("fine", fine_units(graph)), ("coarse", coarse_units(graph))):
        dag = build_dag(graph, costs, units, granularity=gran)
        out[gran] = {"units": dag.n, "edges": len(dag.edges), "checkpoint_all_peak": int(checkpoint_all(dag).peak(dag)),
                     "milp": milp_size(dag)}
    out["seconds"] = time.perf_counter() - t0
    return out


def table(rows: list[dict]) -> str:
    head = ("| model | batch | ONNX nodes | edges | params | checkpoint-all peak fine (coarse) | units fine → coarse | "
            "MILP columns fine → coarse | MILP rows fine → coarse |\n|" + "---|" * 9)
    lines = [head]
    for r in rows:
        f, c = r["fine"], r["coarse"]
        col = lambda m: f"{m['columns']:,}" if m["built"] else f"~{m['columns_estimate']:,} (not built)"
        row = lambda m: f"{m['rows']:,}" if m["built"] else "—"
        lines.append(f"| {r['model']} | {r['batch']} | {r['onnx_nodes']} | {r['onnx_edges']} | "
                     f"{format_size(r['param_bytes'])} | {format_size(f['checkpoint_all_peak'])} "
                     f"({format_size(c['checkpoint_all_peak'])}) | "
                     f"{f['units']} → {c['units']} | {col(f['milp'])} → {col(c['milp'])} | "
                     f"{row(f['milp'])} → {row(c['milp'])} |")
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", default=",".join(zoo.list_models()))
    ap.add_argument("--size", choices=("paper", "small"), default="paper")
    ap.add_argument("--out", default="results/zoo_stats.json")
    args = ap.parse_args()
    rows = []
    for name in args.models.split(","):
        rows.append(stats(name, args.size))
        print(f"{name}: {rows[-1]['seconds']:.1f} s", flush=True)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(rows, indent=1, default=float))
    print(table(rows))


if __name__ == "__main__":
    np.seterr(all="ignore")
    main()
