"""Static types of ONNX values and the names nodes are keyed by (shared by costs, profiling and runtime)."""
from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np
import onnx
from google.protobuf.descriptor import FieldDescriptor
from onnx import helper

from .errors import ModelError


class TensorType(NamedTuple):
    """Static shape and ONNX element type of a value."""

    shape: tuple[int, ...]
    elem_type: int

    @property
    def size(self) -> int:
        """Number of elements."""
        return math.prod(self.shape)

    @property
    def nbytes(self) -> int:
        """Bytes of a dense tensor of this type."""
        return self.size * np.dtype(helper.tensor_dtype_to_np_dtype(self.elem_type)).itemsize


# ---------------------------------------------------------------------------------------------------
# Static types of every value
# ---------------------------------------------------------------------------------------------------

def _type_of(vi: onnx.ValueInfoProto) -> TensorType | None:
    t = vi.type
    if not t.HasField("tensor_type") or not t.tensor_type.HasField("shape"):
        return None
    dims = t.tensor_type.shape.dim
    if any(not d.HasField("dim_value") or d.dim_value < 0 for d in dims):
        return None
    return TensorType(tuple(int(d.dim_value) for d in dims), int(t.tensor_type.elem_type))


def _constant_node_type(node: onnx.NodeProto) -> TensorType | None:
    for a in node.attribute:
        if a.name == "value":
            return TensorType(tuple(int(d) for d in a.t.dims), int(a.t.data_type))
        if a.name in ("value_float", "value_int"):
            return TensorType((), onnx.TensorProto.FLOAT if a.name == "value_float" else onnx.TensorProto.INT64)
        if a.name in ("value_floats", "value_ints"):
            n = len(a.floats) if a.name == "value_floats" else len(a.ints)
            return TensorType((n,), onnx.TensorProto.FLOAT if a.name == "value_floats" else onnx.TensorProto.INT64)
    return None


def _collect_types(model: onnx.ModelProto) -> dict[str, TensorType]:
    g = model.graph
    types: dict[str, TensorType] = {}
    for vi in [*g.input, *g.value_info, *g.output]:
        t = _type_of(vi)
        if t is not None:
            types[vi.name] = t
    for init in g.initializer:
        types[init.name] = TensorType(tuple(int(d) for d in init.dims), int(init.data_type))
    for node in g.node:
        if node.op_type == "Constant" and node.domain in ("", "ai.onnx"):
            t = _constant_node_type(node)
            if t is not None:
                types[node.output[0]] = t
    return types


def static_types(model: onnx.ModelProto) -> dict[str, TensorType]:
    """Static type of every value with a known static shape (inputs, initializers, node outputs).

    Runs ``onnx.shape_inference.infer_shapes(model, data_prop=True)`` when some node output has no
    static type in ``value_info``; initializer data is never read (dims and data_type only), so
    shape-only external-data initializers are fine. Values whose shape stays unknown or symbolic are
    absent from the result.
    """
    types = _collect_types(model)
    missing = any(o and o not in types for n in model.graph.node for o in n.output)
    if missing:
        try:
            inferred = onnx.shape_inference.infer_shapes(shapes_view(model), check_type=False, strict_mode=False,
                                                         data_prop=True)
        except Exception as exc:  # onnx raises several types; report them as one model error
            raise ModelError(f"ONNX shape inference failed: {exc}") from exc
        types.update({k: v for k, v in _collect_types(inferred).items() if k not in types})
    return types


def node_keys(model: onnx.ModelProto) -> list[str]:
    """Key of each node in ``node_costs`` results: its name, or ``<op_type>_<index>`` when unnamed.

    The fallback is the name ONNX Runtime's profiler gives unnamed nodes. Duplicate keys are a
    ModelError, since costs keyed by name would be ambiguous.
    """
    keys = [n.name or f"{n.op_type}_{i}" for i, n in enumerate(model.graph.node)]
    if len(set(keys)) != len(keys):
        dup = next(k for k in keys if keys.count(k) > 1)
        raise ModelError(f"node name {dup!r} is not unique; costs are keyed by node name")
    return keys


def _copy_field(dst: Any, fd: FieldDescriptor, value: Any) -> None:
    """Set field ``fd`` of message ``dst`` to ``value`` (a copy)."""
    if fd.is_repeated:
        getattr(dst, fd.name).extend(value)
    elif fd.message_type is not None:
        getattr(dst, fd.name).CopyFrom(value)
    else:
        setattr(dst, fd.name, value)


def copy_model(model: onnx.ModelProto, *, drop: Callable[[onnx.TensorProto], bool] | None = None) -> onnx.ModelProto:
    """A copy of ``model`` without the initializers ``drop`` selects; those are never copied (``CopyFrom``
    then deleting would copy every weight first: at GPT-2 size 500 MB a time)."""
    m = onnx.ModelProto()
    for fd, value in model.ListFields():
        if fd.name != "graph":
            _copy_field(m, fd, value)
    if not model.HasField("graph"):
        return m
    m.graph.SetInParent()
    for fd, value in model.graph.ListFields():
        if fd.name == "initializer" and drop is not None:
            m.graph.initializer.extend(t for t in value if not drop(t))
        else:
            _copy_field(m.graph, fd, value)
    return m


_FLOAT_TYPES = {onnx.TensorProto.FLOAT, onnx.TensorProto.DOUBLE, onnx.TensorProto.FLOAT16, onnx.TensorProto.BFLOAT16}


def _is_weight(t: onnx.TensorProto) -> bool:
    """A float initializer of 64 elements or more: shape inference never reads its values."""
    return t.data_type in _FLOAT_TYPES and int(np.prod(t.dims, dtype=np.int64)) >= 64


def shapes_view(model: onnx.ModelProto) -> onnx.ModelProto:
    """A copy of ``model`` for shape inference whose float weights (``_is_weight``) are typed graph inputs
    instead of initializers, so no weight is copied: onnx's ``infer_shapes`` serializes the model and
    parses the result, two more copies of every weight otherwise. Data propagation reads integer tensors
    (shapes, axes), which stay."""
    weights = [t for t in model.graph.initializer if _is_weight(t)]
    names = {t.name for t in weights}
    view = copy_model(model, drop=lambda t: t.name in names)
    have = {vi.name for vi in view.graph.input}
    view.graph.input.extend(onnx.helper.make_tensor_value_info(t.name, t.data_type, list(t.dims))
                            for t in weights if t.name not in have)
    return view
