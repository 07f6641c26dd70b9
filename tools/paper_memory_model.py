"""Max batch (paper Fig. 6) under the paper's memory model, beside remc's, to explain the gap between them.

Checkmate's experiments (github.com/parasj/checkmate, branch mlsys20_artifact:
``remat/tensorflow2/extraction.py:dfgraph_from_keras``, ``experiments/experiment_max_batchsize_*.py``) build
their graph from a Keras model, one node per layer:

- forward node i per layer (the input layer left out), a loss node, and a backward node per layer with the
  same memory as the layer's output and twice its cost;
- edges: layer j -> its consumer i; grad(i) -> grad(j); consumer output i -> grad(j); output i -> grad(i);
  the last layer -> loss -> grad(last). A backward node needs no other tensor (no transposed copies, no
  masks, no saved statistics);
- memory: the layer's output bytes (float32) times the batch; the loss 4 bytes per sample; the input image
  is not counted; the fixed part is parameters and their gradients (2 x 4 bytes x parameters), taken from
  the budget of 16 * 10^9 bytes (``platform_memory("p32xlarge")``);
- the cost bound: 2 x forward + backward (eq. 10).

This tool builds that graph from the zoo's forward ONNX model (each ONNX node a layer, Keras-style: a
Relu after a Conv/Gemm is folded into it for VGG, as ``keras.applications.VGG*`` uses
``Conv2D(activation="relu")``; shape-only nodes (Reshape/Flatten of a parameter-free kind) stay layers as
in Keras) with remc's FLOP costs, and runs remc's max-batch search (``passes/maxbatch.max_batch``, the
same strategies) on it. Beside it, ``remc maxbatch``'s own model (ONNX training graph: every tensor the
gradient really reads, transposed copies for weight gradients, inputs counted, 16 GiB).

    python tools/paper_memory_model.py --models vgg19,mobilenet,resnet50 --strategies checkpoint-all,lin-greedy,approx

It prints one row per model and strategy: the batch under the paper's model and the ratio to
checkpoint-all's, which is what the paper's figure reports.
"""
from __future__ import annotations

import argparse
import json
import sys

import numpy as np

from remc import zoo
from remc.ir.dag import DAG
from remc.ir.onnx_io import build_graph, infer_shapes
from remc.passes.costs import node_costs
from remc.passes.maxbatch import max_batch

PAPER_BUDGET = 16 * 1000 ** 3
"""``platform_memory("p32xlarge")`` in the paper's code: 16 GB, not GiB."""
FUSED_ACTIVATION = {"vgg16", "vgg19"}
"""Zoo models whose Keras counterpart folds the ReLU into the Conv/Dense layer."""


def keras_layers(name: str) -> tuple[list, dict[str, float], int]:
    """(the forward graph's layers in order as (node, [producer layer indices]), their FLOP costs, the
    number of parameters) for zoo model ``name`` at the paper's size, batch 1."""
    cfg = dict(zoo.paper_config(name))
    cfg.pop("batch", None)
    model = infer_shapes(zoo.build(name, 1, weights="shape-only", **cfg))
    costs = node_costs(model)
    graph = build_graph(model)
    params = sum(int(np.prod(v.shape)) for v in graph.params)
    fuse = name in FUSED_ACTIVATION
    layer_of: dict[str, int] = {}     # value name -> layer index producing it
    layers: list[tuple[list, list[int], int, float]] = []   # (nodes, inbound layers, out bytes, cost)
    for node in graph.nodes:
        ins = [layer_of[v.name] for v in node.inputs if v is not None and v.name in layer_of]
        cost = float(costs.get(node.name, 0.0))
        out = int(sum(v.nbytes for v in node.outputs))
        if not ins and not any(v is not None and v in graph.inputs for v in node.inputs):
            continue                  # parameter-only node (a reshaped constant): part of its reader
        prev = layers[ins[0]] if len(ins) == 1 else None
        if (fuse and node.op_type == "Relu" and prev is not None and prev[0][-1].op_type in ("Conv", "Gemm")
                and len(ins) == 1):
            k = ins[0]
            layers[k] = (prev[0] + [node], prev[1], out, prev[3] + cost)
        else:
            layers.append(([node], sorted(set(ins)), out, cost))
            k = len(layers) - 1
        for v in node.outputs:
            layer_of[v.name] = k
    return layers, costs, params


def paper_dag(name: str) -> DAG:
    """The Checkmate dfgraph of zoo model ``name`` (module docstring) as a remc DAG at batch 1."""
    layers, _, params = keras_layers(name)
    n_fwd = len(layers)
    n = 2 * n_fwd + 1
    loss = n_fwd
    bwd = lambda i: n - 1 - i  # noqa: E731
    edges: set[tuple[int, int]] = set()
    for i, (_, ins, _, _) in enumerate(layers):
        for j in ins:
            edges.add((j, i))                  # forward
            edges.add((bwd(i), bwd(j)))        # gradient flows back
            edges.add((i, bwd(j)))             # next_outputs_deps
        edges.add((i, bwd(i)))                 # output_dep
    last = n_fwd - 1
    edges.add((last, loss))
    edges.add((loss, bwd(last)))
    cost = np.zeros(n)
    mem = np.zeros(n, dtype=np.int64)
    for i, (_, _, out, c) in enumerate(layers):
        cost[i], cost[bwd(i)] = c, 2 * c
        mem[i] = mem[bwd(i)] = out
    mem[loss] = 4
    names = tuple([f"{layers[i][0][0].name}" for i in range(n_fwd)] + ["loss"]
                  + [f"{layers[i][0][0].name}/grad" for i in reversed(range(n_fwd))])
    return DAG(names, cost, mem, np.array(sorted(edges)), 2 * 4 * params,
               backward=np.arange(n) > loss, meta={"input_bytes": 0, "constant_per_sample": 0})


def _solver(strategy: str, time_limit: float):
    from remc.backends.strategies import make_options, solve
    from remc.ir.errors import InfeasibleError
    from remc.passes.approx import LpUnfinished
    options = make_options(strategy, time_limit=time_limit, threads=1)

    def probe(d: DAG, budget: int):
        try:
            return solve(strategy, d, budget, options)
        except LpUnfinished as e:
            raise InfeasibleError(str(e)) from None
    probe.__name__ = strategy
    return probe


def run(models: list[str], strategies: list[str], time_limit: float) -> list[dict]:
    """Max batch of every model and strategy under the paper's model (rows as dicts)."""
    from remc.ir.errors import RemcError
    rows = []
    for m in models:
        dag = paper_dag(m)
        found: dict[str, int] = {}
        start = None
        for s in strategies:
            target = _solver(s, time_limit) if s in ("approx", "checkmate") else s
            try:
                b, _ = max_batch(dag, PAPER_BUDGET, target, 1, start=start if s in ("approx", "checkmate") else None)
            except RemcError as e:
                rows.append({"model": m, "strategy": s, "batch": 0, "error": str(e)[:200]})
                print(json.dumps(rows[-1]), flush=True)
                continue
            found[s] = b
            if s == "lin-greedy":
                start = b
            ref = found.get("checkpoint-all")
            rows.append({"model": m, "strategy": s, "batch": b, "layers": (dag.n - 1) // 2,
                         "vs_checkpoint_all": round(b / ref, 3) if ref else None})
            print(json.dumps(rows[-1]), flush=True)
    return rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", default="vgg19,mobilenet,resnet50,unet,fcn8,segnet")
    ap.add_argument("--strategies", default="checkpoint-all,griewank,chen-greedy,lin-greedy,approx")
    ap.add_argument("--time-limit", type=float, default=20.0, help="approx/checkmate seconds per probe")
    ap.add_argument("-o", "--output", help="write the rows here as JSON")
    args = ap.parse_args(argv)
    rows = run(args.models.split(","), args.strategies.split(","), args.time_limit)
    if args.output:
        with open(args.output, "w") as f:
            json.dump(rows, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
