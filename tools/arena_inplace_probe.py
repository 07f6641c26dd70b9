"""Which ops ONNX Runtime runs in place (output 0 written into input 0 at its last use) on a device.

For each op, a two-node graph ``T = op(X, ...); Y = Neg(T)`` runs once with the profiler on: the op's node
allocates nothing (``mem_in_use_delta == 0``) exactly when the allocation planner reused X's buffer for T
(``KernelDef::MayInplace``). X is itself computed (``X = Neg(X0)``) so that it is an arena buffer at its
last use. Prints a JSON object {op: true/false}; ``remc.passes.arena.IN_PLACE`` holds the results.

    python tools/arena_inplace_probe.py [--device cpu|cuda]
"""
from __future__ import annotations

import argparse
import json

import numpy as np
from onnx import TensorProto, helper

from remc.backends import runtime

UNARY = ("Relu Sigmoid Tanh Exp Log Sqrt Reciprocal Neg Abs Erf Softplus LeakyRelu Elu Selu HardSigmoid "
         "Clip Cast Identity Dropout Softmax LogSoftmax Floor Ceil Sign Not Round Gelu").split()
BINARY = "Add Sub Mul Div Pow Max Min Greater Less Equal And Or PRelu".split()
TERNARY = ("Where", "ScatterElements", "ScatterND")


def probe(op: str, device: str) -> bool | None:
    shape = [64, 64]
    f = TensorProto.FLOAT
    nodes = [helper.make_node("Neg", ["X0"], ["X"], name="pre")]
    ins = [helper.make_tensor_value_info("X0", f, shape)]
    attrs: dict = {}
    if op == "Cast":
        attrs["to"] = f
    if op in ("Not", "And", "Or"):
        nodes = [helper.make_node("Greater", ["X0", "Z"], ["X"], name="pre")]
        ins.append(helper.make_tensor_value_info("Z", f, shape))
    args = ["X"]
    if op in BINARY:
        other = "X1b" if op in ("And", "Or") else "X1"
        if op in ("And", "Or"):
            nodes.append(helper.make_node("Greater", ["X1", "Z"], ["X1b"], name="pre2"))
            if not any(i.name == "Z" for i in ins):
                ins.append(helper.make_tensor_value_info("Z", f, shape))
        ins.append(helper.make_tensor_value_info("X1", f, shape))
        args.append(other)
    if op == "Where":
        nodes.append(helper.make_node("Greater", ["X1", "X2"], ["C"], name="pre2"))
        ins += [helper.make_tensor_value_info("X1", f, shape), helper.make_tensor_value_info("X2", f, shape)]
        args = ["C", "X", "X1"]
    inits = []
    if op in ("ScatterElements", "ScatterND"):
        ishape, ushape = ([64, 1], [64, 1]) if op == "ScatterElements" else ([1, 1], [1, 64])
        inits = [helper.make_tensor("I", TensorProto.INT64, ishape, [0] * int(np.prod(ishape)))]
        ins.append(helper.make_tensor_value_info("U", f, ushape))
        args = ["X", "I", "U"]
    nodes.append(helper.make_node(op, args, ["T"], name="op", **attrs))
    post = "Not" if op in ("Greater", "Less", "Equal", "And", "Or", "Not") else "Neg"
    nodes.append(helper.make_node(post, ["T"], ["Y"], name="post"))
    out_type = TensorProto.BOOL if post == "Not" else f
    g = helper.make_graph(nodes, "p", ins, [helper.make_tensor_value_info("Y", out_type, None)], inits)
    opset = 20 if op == "Gelu" else 17
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 10
    feeds = {i.name: np.random.default_rng(0).standard_normal(
        [d.dim_value for d in i.type.tensor_type.shape.dim]).astype(np.float32) for i in ins}
    try:
        events = runtime._profile_events(m, device, feeds, mem_limit=1 << 40)
    except Exception:
        return None
    e = next(e for e in events if e["name"] == "op_kernel_time")
    return int(e["args"]["mem_in_use_delta"]) == 0


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--device", default="cpu")
    a = ap.parse_args()
    print(json.dumps({op: probe(op, a.device) for op in UNARY + BINARY + list(TERNARY)}))


if __name__ == "__main__":
    main()
