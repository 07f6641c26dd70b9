"""Model preparation for the gradient builder: opset, static shapes, constant folding, node names.

``prepare`` returns a copy of the forward model that the backward construction can rely on:

- default-domain opset >= 16 (ScatterElements/ScatterND with ``reduction="add"`` need 16); older models
  (opset 13..15, or lower) are upgraded to 17 with ``onnx.version_converter``;
- every graph input has a static shape (a symbolic batch dimension is bound to ``batch``);
- constant subgraphs (Shape/Gather/Unsqueeze/Concat chains, Constant nodes, CastLike of constants, ...)
  are folded into initializers, so Reshape targets, Slice bounds and Resize scales are known values; folding
  and shape inference alternate until nothing more folds (a shape computed from a folded one);
- SplitToSequence read only by SequenceAt at constant positions (the dynamo exporter's ``torch.split``)
  becomes Split + Identity (or Squeeze), so no sequence values remain;
- every value has a static shape and dtype after shape inference (``data_prop=True``);
- every node has a unique name, and no forward name contains the backward marker ``/grad/``.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from remc.ir.errors import ModelError
from remc.ir.onnx_io import bind_batch, infer_shapes_in_place

from ..random_ops import RANDOM_OPS
from .emit import FLOAT_TYPES

MIN_OPSET = 16
UPGRADE_OPSET = 17
FOLD_LIMIT = 1 << 20
"""Constant subgraph outputs with more elements than this stay computed at run time."""

FOLD_ROUNDS = 32
"""Rounds of folding and shape inference: torch's computed shapes (Swin's window padding: Shape, Gather, Mod,
Sub, Pad, Reshape, and again) need one round per link of such a chain."""

SHAPE_ONLY_INPUT0 = frozenset({"Shape", "Size"})
"""Ops whose output depends on input 0's shape only."""


@dataclass
class Prepared:
    """A forward model ready for differentiation, with its static facts."""

    model: onnx.ModelProto
    opset: int
    shapes: dict[str, tuple[int, ...]]
    """Static shape of every value (inputs, initializers, node outputs)."""
    dtypes: dict[str, int]
    """ONNX element type of every value."""
    consts: dict[str, np.ndarray] = field(default_factory=dict)
    """Known values: initializers (all, trainable ones too: read their values with care)."""


def initializer_values(g: onnx.GraphProto, skip: set[str] | None = None) -> dict[str, np.ndarray]:
    """Values of the initializers that hold data (external-data ones, e.g. shape-only weights, are left
    out: their values are unknown here)."""
    return {t.name: numpy_helper.to_array(t) for t in g.initializer
            if t.data_location != TensorProto.EXTERNAL and (skip is None or t.name not in skip)}


def default_opset(model: onnx.ModelProto) -> int:
    """The model's default-domain ("" / ai.onnx) opset version."""
    for imp in model.opset_import:
        if imp.domain in ("", "ai.onnx"):
            return imp.version
    raise ModelError("the model imports no default-domain (ai.onnx) opset")


def upgrade_opset(model: onnx.ModelProto) -> onnx.ModelProto:
    """The model at opset >= MIN_OPSET, converted with onnx.version_converter when older."""
    opset = default_opset(model)
    if opset >= MIN_OPSET:
        return model
    try:
        from onnx import version_converter
        return version_converter.convert_version(model, UPGRADE_OPSET)
    except Exception as e:  # the converter raises plain RuntimeErrors from C++
        raise ModelError(f"model opset {opset} is below {MIN_OPSET} and onnx.version_converter could not "
                         f"upgrade it to {UPGRADE_OPSET}: {str(e).strip().splitlines()[0]}") from None


def drop_initializer_inputs(model: onnx.ModelProto) -> None:
    """Remove graph inputs that only declare an initializer (IR < 4 style), in place."""
    inits = {t.name for t in model.graph.initializer}
    keep = [vi for vi in model.graph.input if vi.name not in inits]
    del model.graph.input[:]
    model.graph.input.extend(keep)


def name_nodes(model: onnx.ModelProto) -> None:
    """Give every node a unique name without the backward marker '/grad/' (in place)."""
    seen: set[str] = set()
    for k, node in enumerate(model.graph.node):
        base = node.name or f"{node.op_type}_{k}"
        base = base.replace("/grad/", "/grad_/")
        if base.startswith("grad/"):
            base = "grad_/" + base[len("grad/"):]
        name, j = base, 1
        while name in seen:
            name, j = f"{base}~{j}", j + 1
        seen.add(name)
        node.name = name


def check_topological(model: onnx.ModelProto) -> None:
    """ModelError unless every node reads only graph inputs, initializers and earlier nodes' outputs."""
    g = model.graph
    known = {v.name for v in g.input} | {t.name for t in g.initializer} | {""}
    for node in g.node:
        for i in node.input:
            if i not in known:
                raise ModelError(f"{node.op_type} node {node.name!r} reads {i!r} before any node produces it; "
                                 f"the node list must be in topological order")
        known.update(node.output)


def _type_of(vi: onnx.ValueInfoProto) -> tuple[int, tuple[int, ...] | None]:
    tt = vi.type.tensor_type
    if not vi.type.HasField("tensor_type") or not tt.HasField("shape"):
        return tt.elem_type, None
    dims = []
    for d in tt.shape.dim:
        if not d.HasField("dim_value"):
            return tt.elem_type, None
        dims.append(d.dim_value)
    return tt.elem_type, tuple(dims)


def static_types(model: onnx.ModelProto) -> tuple[dict[str, tuple[int, ...]], dict[str, int]]:
    """Shapes and dtypes of every value; ModelError on the first value whose shape is not static."""
    g = model.graph
    shapes: dict[str, tuple[int, ...]] = {}
    dtypes: dict[str, int] = {}
    for t in g.initializer:
        shapes[t.name], dtypes[t.name] = tuple(t.dims), t.data_type
    infos = {vi.name: vi for vi in list(g.input) + list(g.value_info) + list(g.output)}
    for vi in g.input:
        dtypes[vi.name], shp = _type_of(vi)
        if shp is not None:
            shapes[vi.name] = shp
    for node in g.node:
        for out in node.output:
            if not out:
                continue
            vi = infos.get(out)
            elem, shp = _type_of(vi) if vi is not None else (0, None)
            if shp is None or elem == 0:
                raise ModelError(f"value {out!r} (output of {node.op_type} node {node.name!r}) has no static "
                                 f"shape after shape inference; remc needs static shapes (bind the batch "
                                 f"dimension or export with fixed sizes)")
            shapes[out], dtypes[out] = shp, elem
    return shapes, dtypes


def _eval_node(node: onnx.NodeProto, inputs: dict[str, np.ndarray], opset: int) -> list[np.ndarray]:
    """Evaluate one node on known inputs with onnx's reference evaluator."""
    from onnx.reference import ReferenceEvaluator
    ins = [helper.make_tensor_value_info(n, helper.np_dtype_to_tensor_dtype(v.dtype), v.shape)
           for n, v in inputs.items()]
    outs = [onnx.ValueInfoProto(name=o) for o in node.output if o]
    g = helper.make_graph([node], "fold", ins, outs)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    return list(ReferenceEvaluator(m).run(None, inputs))


def fold_constants(model: onnx.ModelProto, frozen: set[str], opset: int) -> onnx.ModelProto:
    """Fold every deterministic node whose result is known without running the model.

    A value is known when it is an initializer not in ``frozen`` (the trainable candidates), a Constant
    output, or a folded output; Shape/Size need only a static input shape and CastLike only a known
    input 0. Folded outputs become initializers and their nodes disappear. Requires inferred shapes.
    """
    g = model.graph
    shapes, dtypes = static_types_lenient(model)
    known = initializer_values(g, frozen)
    keep: list[onnx.NodeProto] = []
    new_inits: list[TensorProto] = []
    for node in g.node:
        vals = _try_fold(node, known, shapes, dtypes, opset)
        if vals is None:
            keep.append(node)
            continue
        for name, v in zip([o for o in node.output if o], vals):
            known[name] = v
            new_inits.append(numpy_helper.from_array(np.asarray(v), name))
    del g.node[:]
    g.node.extend(keep)
    outputs = {o.name for o in g.output}
    g.initializer.extend(t for t in new_inits if t.name not in outputs)
    for t in new_inits:  # a folded graph output keeps a node so that it stays an output
        if t.name in outputs:
            g.node.append(helper.make_node("Constant", [], [t.name], name=f"{t.name}/const", value=t))
    live = {vi.name for vi in g.value_info} - {t.name for t in new_inits}
    vis = [vi for vi in g.value_info if vi.name in live]
    del g.value_info[:]
    g.value_info.extend(vis)
    return model


def static_types_lenient(model: onnx.ModelProto) -> tuple[dict[str, tuple[int, ...]], dict[str, int]]:
    """Shapes and dtypes of the values whose shapes are static (others left out)."""
    shapes: dict[str, tuple[int, ...]] = {}
    dtypes: dict[str, int] = {}
    g = model.graph
    for t in g.initializer:
        shapes[t.name], dtypes[t.name] = tuple(t.dims), t.data_type
    for vi in list(g.input) + list(g.value_info) + list(g.output):
        elem, shp = _type_of(vi)
        dtypes[vi.name] = elem
        if shp is not None:
            shapes[vi.name] = shp
    return shapes, dtypes


def _try_fold(node: onnx.NodeProto, known: dict[str, np.ndarray], shapes: dict[str, tuple[int, ...]],
              dtypes: dict[str, int], opset: int) -> list[np.ndarray] | None:
    """The outputs of ``node`` when they are known without running the model, else None."""
    if node.domain not in ("", "ai.onnx") or node.op_type in RANDOM_OPS:
        return None
    if any(a.type in (onnx.AttributeProto.GRAPH, onnx.AttributeProto.GRAPHS) for a in node.attribute):
        return None
    ins = list(node.input)
    if node.op_type in SHAPE_ONLY_INPUT0:
        return [_shape_value(node, shapes[ins[0]])] if ins[0] in shapes else None
    if node.op_type == "CastLike":
        like = dtypes.get(ins[1], 0)
        if ins[0] not in known or like in (0, TensorProto.BFLOAT16, TensorProto.STRING):
            return None
        return [known[ins[0]].astype(helper.tensor_dtype_to_np_dtype(like))]
    if any(i and i not in known for i in ins):
        return None
    try:
        vals = _eval_node(node, {i: known[i] for i in ins if i}, opset)
    except Exception:  # noqa: BLE001 - the reference evaluator lacks the op: the node stays and runs in ORT
        return None
    vals = [np.asarray(v) for v in vals]
    return None if any(v.size > FOLD_LIMIT for v in vals) else vals


def _shape_value(node: onnx.NodeProto, shape: tuple[int, ...]) -> np.ndarray:
    if node.op_type == "Size":
        return np.asarray(int(np.prod(shape)), dtype=np.int64)
    attrs = {a.name: helper.get_attribute_value(a) for a in node.attribute}
    r = len(shape)
    start, end = attrs.get("start", 0), attrs.get("end", r)
    start, end = (start + r if start < 0 else start), (end + r if end < 0 else end)
    return np.asarray(shape[max(0, start):min(r, end)], dtype=np.int64)


def split_sequences(model: onnx.ModelProto) -> onnx.ModelProto:
    """Rewrite SplitToSequence whose sequence is only read by SequenceAt at constant positions (the
    dynamo exporter's ``torch.split``) into Split + Identity/Squeeze: tensors with static shapes."""
    g = model.graph
    consts = initializer_values(g)
    shapes, _ = static_types_lenient(model)
    users: dict[str, list[onnx.NodeProto]] = {}
    for node in g.node:
        for i in node.input:
            users.setdefault(i, []).append(node)
    graph_outputs = {o.name for o in g.output}
    replace: dict[int, list[onnx.NodeProto]] = {}
    taken = {o for n in g.node for o in n.output} | set(consts) | {i.name for i in g.input}
    for node in g.node:
        if node.op_type != "SplitToSequence" or node.domain not in ("", "ai.onnx"):
            continue
        seq, x = node.output[0], node.input[0]
        readers = users.get(seq, [])
        if (seq in graph_outputs or x not in shapes
                or not all(u.op_type == "SequenceAt" and u.input[1] in consts for u in readers)):
            continue
        attrs = {a.name: helper.get_attribute_value(a) for a in node.attribute}
        axis = int(attrs.get("axis", 0)) % len(shapes[x])
        dim = shapes[x][axis]
        squeeze = False
        if len(node.input) > 1 and node.input[1]:
            if node.input[1] not in consts:
                continue
            split = consts[node.input[1]]
            if split.ndim == 0:
                chunk = int(split)
                sizes = [chunk] * (dim // chunk) + ([dim % chunk] if dim % chunk else [])
            else:
                sizes = [int(v) for v in split]
        else:
            sizes, squeeze = [1] * dim, not int(attrs.get("keepdims", 1))
        outs = []
        for k in range(len(sizes)):
            name, j = f"{seq}.{k}", 0
            while name in taken:
                name, j = f"{seq}.{k}~{j}", j + 1
            taken.add(name)
            outs.append(name)
        split_name = f"{seq}.split_sizes"
        g.initializer.append(numpy_helper.from_array(np.asarray(sizes, dtype=np.int64), split_name))
        new = [helper.make_node("Split", [x, split_name], outs, name=node.name, axis=axis)]
        replace[id(node)] = new
        for u in readers:
            pos = int(consts[u.input[1]]) % len(sizes)
            if squeeze:
                axes_name = f"{seq}.squeeze_axes"
                if axes_name not in consts:
                    consts[axes_name] = np.asarray([axis], dtype=np.int64)
                    g.initializer.append(numpy_helper.from_array(consts[axes_name], axes_name))
                repl = helper.make_node("Squeeze", [outs[pos], axes_name], list(u.output), name=u.name)
            else:
                repl = helper.make_node("Identity", [outs[pos]], list(u.output), name=u.name)
            replace[id(u)] = [repl]
    if not replace:
        return model
    nodes = [m for n in g.node for m in replace.get(id(n), [n])]
    del g.node[:]
    g.node.extend(nodes)
    return model


def prepare(model: onnx.ModelProto, batch: int | None, frozen: set[str]) -> Prepared:
    """Normalize ``model`` (a copy) for differentiation; see the module docstring."""
    m = onnx.ModelProto()
    m.CopyFrom(model)
    m = upgrade_opset(m)
    opset = default_opset(m)
    drop_initializer_inputs(m)
    m = bind_batch(m, batch)
    name_nodes(m)
    check_topological(m)
    m = infer(m)
    for _ in range(FOLD_ROUNDS):  # a fold makes shapes static downstream, which makes more Shape nodes foldable
        nodes = len(m.graph.node)
        m = fold_constants(m, frozen, opset)
        if len(m.graph.node) == nodes:
            break
        m = infer(m)
    m = split_sequences(m)
    m = infer(m)
    shapes, dtypes = static_types(m)
    consts = initializer_values(m.graph)
    return Prepared(m, opset, shapes, dtypes, consts)


def infer(model: onnx.ModelProto) -> onnx.ModelProto:
    """``model`` with inferred shapes (strict, data propagation), inferred on a view without its float weights:
    onnx's inference serializes the model it is given, 1.5 s a call for ViT-B/16's 344 MB of weights."""
    infer_shapes_in_place(model)
    return model


def float_type(elem_type: int) -> bool:
    """True for the floating element types that carry gradients."""
    return elem_type in FLOAT_TYPES
