"""What checkpoint-all keeps per sample under the paper's memory model and under remc's, by the op type of
the layer that produced it: the denominator of the paper's max-batch ratios (Fig. 6).

The paper's model (``tools/paper_memory_model.py``: Checkmate's Keras dfgraph) keeps every layer's output
from its forward node to its backward node, and a backward node holds as much as its layer's output; remc's
(``remc maxbatch``: the ONNX training graph) keeps the forward values the gradient reads, and the gradient's
own temporaries. For each: the checkpoint-all peak per sample, the fixed part, the largest batch under the
budget (the paper's 16 * 10^9 bytes; remc's 16 GiB), and the forward bytes per sample kept for the backward
pass, by producer op type.

    python tools/checkpoint_all_parts.py unet
"""
from __future__ import annotations

import argparse
import json
import sys
from collections import Counter

from paper_memory_model import PAPER_BUDGET, keras_layers, paper_dag

from remc.maxbatch_cli import _dag_at
from remc.passes.baselines import checkpoint_all

REMC_BUDGET = 16 * 1024 ** 3


def paper_parts(name: str) -> dict:
    """Checkpoint-all under the paper's model: per-sample peak, fixed bytes, batch, kept bytes by op type."""
    dag = paper_dag(name)
    per_sample = int(checkpoint_all(dag).peak(dag) - dag.constant)
    layers, _, _ = keras_layers(name)
    kept: Counter = Counter()
    for nodes, _, out, _ in layers:
        kept["+".join(n.op_type for n in nodes)] += out
    return {"per_sample": per_sample, "constant": int(dag.constant),
            "batch": int((PAPER_BUDGET - dag.constant) // per_sample),
            "batch_at_16GiB": int((REMC_BUDGET - dag.constant) // per_sample),
            "kept_by_op": dict(kept.most_common()), "kept_total": int(sum(kept.values()))}


def remc_parts(name: str) -> dict:
    """Checkpoint-all under remc's model (shape-only training graph at batch 1 and 2, coarse units)."""
    s1 = _dag_at(name, 1, "flops", "coarse")
    s2 = _dag_at(name, 2, "flops", "coarse", like=s1)
    p1, p2 = (int(checkpoint_all(s.dag).peak(s.dag)) for s in (s1, s2))
    per_sample = p2 - p1
    fixed = p1 - per_sample
    kept: Counter = Counter()
    for node in s1.graph.nodes:
        if "/grad/" in node.name:
            continue
        for v in node.outputs:
            if any("/grad/" in u.node.name for u in v.uses):
                kept[node.op_type] += v.nbytes
    inputs = sum(v.nbytes for v in s1.graph.inputs)
    return {"per_sample": per_sample, "constant": fixed, "batch": int((REMC_BUDGET - fixed) // per_sample),
            "kept_by_op": dict(kept.most_common()), "kept_total": int(sum(kept.values())),
            "inputs_per_sample": int(inputs)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("model")
    ap.add_argument("-o", "--output", help="write both as JSON")
    a = ap.parse_args(argv)
    mb = 1 << 20
    rows = {"paper": paper_parts(a.model), "remc": remc_parts(a.model)}
    for k, r in rows.items():
        extra = f", {r['batch_at_16GiB']} at 16 GiB" if "batch_at_16GiB" in r else ""
        print(f"{a.model}, {k}'s model: checkpoint-all {r['per_sample'] / mb:.1f} MiB per sample at its peak, "
              f"fixed {r['constant'] / mb:.1f} MiB -> batch {r['batch']}{extra}; forward bytes kept for the "
              f"backward pass {r['kept_total'] / mb:.1f} MiB per sample:")
        print("   " + ", ".join(f"{op} {b / mb:.1f}" for op, b in r["kept_by_op"].items()))
    if a.output:
        with open(a.output, "w") as f:
            json.dump({"model": a.model, **rows}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
