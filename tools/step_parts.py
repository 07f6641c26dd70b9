"""The always-resident parts of a step graph and a floor under every schedule, counted from the ONNX file with
onnx alone (no remc code), to check the lower bound that remc's infeasible-budget messages print (issue #13
item 5): weights (the carried inputs with an initializer), optimizer state (carried inputs without one),
their updated copies (outputs ``x.updated``), other initializers, data inputs, the loss; then the floor:
all of those plus the neediest gradient while it is formed: a parameter's gradient and, when the node that
forms it is an ``Add``/``Sum`` of contributions (a tied or shared weight), those inputs, each as large as the
parameter.

    python tools/step_parts.py gpt2_s512_sgd_step.onnx
"""
from __future__ import annotations

import argparse
import json
import math

import onnx
from onnx import helper

GRAD_PREFIX, UPDATED = "grad.", ".updated"


def nbytes(t: onnx.TypeProto | onnx.TensorProto) -> int:
    """Bytes of a tensor (initializer) or of a statically shaped tensor type."""
    if isinstance(t, onnx.TensorProto):
        dims, elem = list(t.dims), t.data_type
    else:
        dims = [d.dim_value for d in t.tensor_type.shape.dim]
        elem = t.tensor_type.elem_type
    return math.prod(dims) * helper.tensor_dtype_to_np_dtype(elem).itemsize


def parts(model: onnx.ModelProto) -> dict[str, int]:
    """The parts in bytes, and the floor."""
    g = model.graph
    inits = {t.name: nbytes(t) for t in g.initializer}
    outs = {o.name: o for o in g.output}
    carried = [i for i in g.input if i.name + UPDATED in outs]
    carried_names = {i.name for i in carried}
    weights = {i.name: inits.get(i.name, nbytes(i.type)) for i in carried if i.name in inits}
    state = {i.name: nbytes(i.type) for i in carried if i.name not in inits}
    updated = sum(nbytes(o.type) if o.type.tensor_type.shape.dim else inits.get(o.name[:-len(UPDATED)], 0)
                  for n, o in outs.items() if n.endswith(UPDATED))
    data = sum(nbytes(i.type) for i in g.input if i.name not in carried_names and i.name not in inits)
    other_inits = sum(b for n, b in inits.items() if n not in carried_names)
    other_outputs = sum(nbytes(o.type) for n, o in outs.items() if not n.endswith(UPDATED))
    resident = sum(weights.values()) + sum(state.values()) + updated + data + other_inits + other_outputs
    # the neediest gradient: the parameter whose gradient, with the inputs of the node that forms it when that
    # node sums contributions (each as large as the parameter), needs the most while it is formed
    def need(name: str) -> tuple[int, int, str]:
        producer = next((n for n in g.node if GRAD_PREFIX + name in n.output), None)
        k = len(producer.input) if producer is not None and producer.op_type in ("Add", "Sum") else 0
        return weights[name] * (1 + k), k, "" if producer is None else producer.op_type
    p = max(weights, key=lambda n: need(n)[0])
    total, contributions, op = need(p)
    grad = weights[p]
    return {"weights": sum(weights.values()), "optimizer_state": sum(state.values()), "updated": updated,
            "other_initializers": other_inits, "data": data, "other_outputs": other_outputs,
            "always_resident": resident, "neediest_parameter": p, "its_gradient": grad,
            "gradient_formed_by": f"{op} of {contributions} contributions" if contributions
            else op, "floor": resident + total}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("model")
    a = ap.parse_args()
    print(json.dumps({"model": a.model, **parts(onnx.load(a.model))}, indent=1))


if __name__ == "__main__":
    main()
