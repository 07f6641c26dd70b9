"""Zoo training graphs at the paper's sizes: nodes, edges, parameter bytes, checkpoint-all peak, least
feasible budget bounds, and the scheduling DAG and MILP sizes at fine (ONNX node) and coarse (unit)
granularity.

Weights are shape-only (no tensor data is allocated), so paper-size graphs import in seconds.

    python tools/zoo_stats.py --out results/zoo_stats.json [--models vgg16,resnet50] [--size paper|small]
        [--lp-time-limit 120] [--fine-lp-units 400]

Least-budget bounds (every one a proven lower bound on the peak of any schedule of that DAG): ``simple``
(``simple_lower_bound``: one unit with its inputs), ``pinned`` (``pinned_lower_bound``: the same plus the
no-recompute units that must stay resident meanwhile) and ``lp`` (the LP relaxation of eq. 9 minimizing
the budget, as in ``least_budget_bound``; only when it solves to optimality within the time limit, and at
fine granularity only up to ``--fine-lp-units`` units). ``least`` is the largest of them.

Prints a Markdown table (the one in BENCHMARKS.md) and writes every number to the JSON file.
"""
from __future__ import annotations

import argparse
import json
import math
import time
from pathlib import Path

import numpy as np

from remc import zoo
from remc.backends.highs import solve_highs
from remc.backends.runtime import import_model
from remc.ir.schedule import checkpoint_all
from remc.ir.sizes import format_size
from remc.passes.coarsen import coarse_units
from remc.passes.costs import node_costs
from remc.passes.dagbuild import build_dag, fine_units
from remc.passes.milp_model import allowed, build_model, simple_lower_bound
from remc.pipeline import shaped_model

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


def pinned_lower_bound(dag) -> int:
    """A proven lower bound on any schedule's peak: while unit t runs in its frontier stage, its inputs, its
    own M_t + W_t and every no-recompute unit computed before t and read at or after t are resident (a
    no-recompute unit is computed once, so it stays resident from its stage to its last reader's)."""
    pinned = np.zeros(dag.n + 1, dtype=np.int64)
    for i in np.flatnonzero(dag.no_recompute):
        pinned[i + 1] += dag.mem[i]
        pinned[dag.last_use[i] + 1] -= dag.mem[i]
    live = np.cumsum(pinned)[:-1]
    best = 0
    for t, p in enumerate(dag.preds):
        own_pins = int(dag.mem[p[dag.no_recompute[p]]].sum())
        best = max(best, int(live[t]) - own_pins + int(dag.mem[p].sum()) + int(dag.mem[t] + dag.workspace[t]))
    return best + int(dag.constant)


def least_bounds(dag, time_limit: float, lp: bool) -> dict:
    """The least-budget lower bounds of the module docstring, the LP's status and solve seconds."""
    out = {"simple": simple_lower_bound(dag), "pinned": pinned_lower_bound(dag), "lp": None, "lp_status": "not run"}
    if lp:
        model = build_model(dag, None, usefulness=False)
        res = solve_highs(model, integral=False, time_limit=time_limit)
        out["lp_status"], out["lp_seconds"] = res.status, res.seconds
        if res.status == "optimal" and res.x is not None:
            out["lp"] = math.ceil(res.objective * model.scale.unit * (1 - 1e-6)) + int(dag.constant)
    out["least"] = max(v for v in (out["simple"], out["pinned"], out["lp"]) if v is not None)
    return out


def stats(name: str, size: str, lp_time_limit: float = 120.0, fine_lp_units: int = 400) -> dict:
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
                     "milp": milp_size(dag),
                     "least_budget": least_bounds(dag, lp_time_limit, gran == "coarse" or dag.n <= fine_lp_units)}
    out["seconds"] = time.perf_counter() - t0
    return out


def _least(b: dict) -> str:
    """The least-budget bound, which bound gave it and, when the LP did not, why."""
    if b["lp"] is not None and b["lp"] == b["least"]:
        return f"{format_size(b['least'])} (LP)"
    which = "pinned" if b["pinned"] == b["least"] and b["pinned"] > b["simple"] else "simple"
    lp = {"not run": "LP not run", "time_limit": "LP time limit", "optimal": "LP no higher"}.get(
        b["lp_status"], f"LP {b['lp_status']}")
    return f"{format_size(b['least'])} ({which}; {lp})"


def table(rows: list[dict]) -> str:
    head = ("| model | batch | ONNX nodes | edges | params | checkpoint-all peak fine (coarse) | "
            "least budget bound fine | least budget bound coarse | units fine → coarse | "
            "MILP columns fine → coarse | MILP rows fine → coarse |\n|" + "---|" * 11)
    lines = [head]
    for r in rows:
        f, c = r["fine"], r["coarse"]
        col = lambda m: f"{m['columns']:,}" if m["built"] else f"~{m['columns_estimate']:,} (not built)"
        row = lambda m: f"{m['rows']:,}" if m["built"] else "—"
        lines.append(f"| {r['model']} | {r['batch']} | {r['onnx_nodes']} | {r['onnx_edges']} | "
                     f"{format_size(r['param_bytes'])} | {format_size(f['checkpoint_all_peak'])} "
                     f"({format_size(c['checkpoint_all_peak'])}) | "
                     f"{_least(f['least_budget'])} | {_least(c['least_budget'])} | "
                     f"{f['units']} → {c['units']} | {col(f['milp'])} → {col(c['milp'])} | "
                     f"{row(f['milp'])} → {row(c['milp'])} |")
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", default=",".join(zoo.list_models()))
    ap.add_argument("--size", choices=("paper", "small"), default="paper")
    ap.add_argument("--out", default="results/zoo_stats.json")
    ap.add_argument("--lp-time-limit", type=float, default=120.0, help="seconds per least-budget LP")
    ap.add_argument("--fine-lp-units", type=int, default=400, help="solve the fine LP up to this many units")
    args = ap.parse_args()
    rows = []
    for name in args.models.split(","):
        rows.append(stats(name, args.size, args.lp_time_limit, args.fine_lp_units))
        print(f"{name}: {rows[-1]['seconds']:.1f} s", flush=True)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(rows, indent=1, default=float))
    print(table(rows))


if __name__ == "__main__":
    np.seterr(all="ignore")
    main()
