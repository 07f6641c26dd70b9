"""Import ONNX models into the graph IR (with shape inference and batch binding) and export them back."""
from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import networkx as nx
import numpy as np
import onnx
import onnx.external_data_helper
from google.protobuf.message import DecodeError
from onnx import inliner, numpy_helper

from .errors import ModelError, UnsupportedOpError
from .graph import Graph, Node, Use, Value
from .onnx_types import node_keys, shapes_view

SUPPORTED_DTYPES = {
    onnx.TensorProto.FLOAT, onnx.TensorProto.DOUBLE, onnx.TensorProto.FLOAT16, onnx.TensorProto.BFLOAT16,
    onnx.TensorProto.INT64, onnx.TensorProto.INT32, onnx.TensorProto.INT16, onnx.TensorProto.INT8,
    onnx.TensorProto.UINT8, onnx.TensorProto.BOOL,
}
MAX_IR_VERSION = 10
"""onnxruntime 1.31 (the GPU machine's build) reads ir_version <= 13; 10 is what opsets <= 21 need."""


def load_model(source: str | os.PathLike | bytes | onnx.ModelProto, *, with_data: bool = False) -> onnx.ModelProto:
    """Read a model file; raise ModelError on anything that is not ONNX. External weight data is loaded
    (from the file's folder) only ``with_data``: passes read shapes, runtimes need the values."""
    if isinstance(source, onnx.ModelProto):
        return source
    if isinstance(source, bytes):
        data, where = source, "input"
    else:
        path = Path(source)
        if not path.is_file():
            raise ModelError(f"{path}: no such file")
        data, where = path.read_bytes(), str(path)
    model = onnx.ModelProto()
    try:
        model.ParseFromString(data)
    except (DecodeError, RuntimeError, ValueError) as e:
        raise ModelError(f"{where} is not a readable ONNX model (protobuf decode failed: {e})") from None
    if not model.HasField("graph") or not model.opset_import or not model.graph.node:
        raise ModelError(f"{where} is not an ONNX model (no graph, opset or nodes; truncated or not ONNX?)")
    if with_data and not isinstance(source, bytes):
        try:
            onnx.external_data_helper.load_external_data_for_model(model, str(Path(source).resolve().parent))
        except (OSError, ValueError, onnx.checker.ValidationError) as e:
            raise ModelError(f"{where}: cannot load its external data ({e})") from None
    return model


def bind_batch(model: onnx.ModelProto, batch: int | None) -> onnx.ModelProto:
    """Copy of model with the symbolic leading dim of every graph input set to ``batch`` (the one batch
    binder: import and gradient construction both use it).

    Raises ModelError naming the input and axis when a dim is dynamic and cannot be bound, when an input
    has no tensor shape, or when a static batch dimension differs from ``batch``.
    """
    if batch is not None and batch < 1:
        raise ModelError(f"batch must be a positive integer, not {batch}")
    m = onnx.ModelProto()
    m.CopyFrom(model)
    inits = {t.name for t in m.graph.initializer}
    for vi in m.graph.input:
        if vi.name in inits:
            continue
        if not vi.type.HasField("tensor_type") or not vi.type.tensor_type.HasField("shape"):
            raise ModelError(f"graph input {vi.name!r} has no tensor shape; remc needs static shapes")
        for axis, dim in enumerate(vi.type.tensor_type.shape.dim):
            if dim.HasField("dim_value") and dim.dim_value > 0:
                if axis == 0 and batch is not None and dim.dim_value != batch:
                    raise ModelError(f"graph input {vi.name!r} has a static batch dimension {dim.dim_value}, "
                                     f"not the requested batch {batch}")
                continue
            if batch is None or axis != 0:
                hint = " (pass --batch N to bind it)" if axis == 0 else ""
                raise ModelError(f"graph input {vi.name!r} has a dynamic dimension {axis} "
                                 f"({dim.dim_param or '?'!r}); remc needs static shapes{hint}")
            dim.Clear()
            dim.dim_value = batch
    for vi in list(m.graph.output) + list(m.graph.value_info):
        for dim in vi.type.tensor_type.shape.dim:
            if not dim.HasField("dim_value"):
                dim.Clear()
    del m.graph.value_info[:]
    return m


def infer_shapes(model: onnx.ModelProto) -> onnx.ModelProto:
    """onnx shape inference in strict mode with data propagation; errors become ModelError."""
    try:
        return onnx.shape_inference.infer_shapes(model, check_type=True, strict_mode=True, data_prop=True)
    except (onnx.shape_inference.InferenceError, onnx.checker.ValidationError, RuntimeError) as e:
        msg = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise ModelError(f"shape inference failed: {msg}") from None


def import_model(source: str | os.PathLike | bytes | onnx.ModelProto, *, batch: int | None = None,
                 kernelless: Kernelless | None = None) -> Graph:
    """Load, bind the batch dim, infer shapes and build the IR. Raises ModelError on bad input.

    With ``kernelless`` (the runtime's answer to which nodes it has no kernel for), ops that ONNX Runtime has no kernel for (SoftmaxCrossEntropyLoss on CPU,
    ...) are expanded into their ONNX function bodies first: ONNX Runtime would expand them itself when
    loading and run the body late, out of the file's order, so remc schedules the body instead.
    """
    model = load_model(source)
    _check_supported(model)
    model = bind_batch(model, batch)
    _sort_nodes(model)  # shape inference reads nodes in file order: a cycle is named here, not as a missing type
    if kernelless is not None:
        model = inline_function_ops(model, kernelless)
    infer_shapes_in_place(model)  # ``model`` is this function's own copy (bind_batch's)
    return build_graph(model, copy=False)


def _sort_nodes(model: onnx.ModelProto) -> None:
    """Put the graph's nodes in topological order in place (ModelError naming a cycle)."""
    g = model.graph
    order = _toposort(list(g.node), {vi.name for vi in g.input} | {t.name for t in g.initializer})
    if [id(n) for n in order] != [id(n) for n in g.node]:
        copies = [onnx.NodeProto() for _ in order]
        for c, n in zip(copies, order):
            c.CopyFrom(n)
        del g.node[:]
        g.node.extend(copies)


def _check_supported(model: onnx.ModelProto) -> None:
    for op in model.opset_import:
        if op.domain in ("", "ai.onnx") and op.version < 7:
            raise ModelError(f"opset {op.version} is too old; remc needs opset >= 7 (upgrade the model)")
    for f in model.functions:
        raise ModelError(f"model-local functions are not supported (function {f.name!r}); inline them first")


def _toposort(nodes: list[onnx.NodeProto], graph_inputs: set[str]) -> list[onnx.NodeProto]:
    producer = {o: i for i, n in enumerate(nodes) for o in n.output if o}
    g = nx.DiGraph()
    g.add_nodes_from(range(len(nodes)))
    for j, n in enumerate(nodes):
        for name in n.input:
            if name and name in producer and name not in graph_inputs:
                g.add_edge(producer[name], j)
    try:
        order = list(nx.lexicographical_topological_sort(g))
    except nx.NetworkXUnfeasible:
        cycle = nx.find_cycle(g)
        names = " -> ".join(nodes[a].name or nodes[a].op_type for a, _ in cycle)
        raise ModelError(f"graph has a cycle: {names} -> {nodes[cycle[0][0]].name or nodes[cycle[0][0]].op_type}"
                         ) from None
    return [nodes[i] for i in order]


def _unique_node_names(nodes: list[onnx.NodeProto]) -> None:
    seen: set[str] = set()
    for i, n in enumerate(nodes):
        name = n.name or f"{n.op_type}_{i}"
        base, k = name, 1
        while name in seen:
            name = f"{base}_{k}"
            k += 1
        seen.add(name)
        n.name = name


def _np_dtype(elem_type: int, what: str) -> np.dtype:
    if elem_type not in SUPPORTED_DTYPES:
        tname = onnx.TensorProto.DataType.Name(elem_type) if elem_type in onnx.TensorProto.DataType.values() \
            else str(elem_type)
        raise ModelError(f"{what} has unsupported dtype {tname}")
    return np.dtype(onnx.helper.tensor_dtype_to_np_dtype(elem_type))


def _static_shape(vi: onnx.ValueInfoProto, what: str) -> tuple[int, ...]:
    tt = vi.type.tensor_type
    if not tt.HasField("shape"):
        raise ModelError(f"{what}: shape unknown after shape inference")
    dims = []
    for axis, d in enumerate(tt.shape.dim):
        if not d.HasField("dim_value"):
            raise ModelError(f"{what}: dimension {axis} is dynamic ({d.dim_param or '?'}) after shape inference")
        dims.append(d.dim_value)
    return tuple(dims)


def _fold_constant_nodes(model: onnx.ModelProto) -> None:
    """Turn Constant nodes into initializers (parameters that are never trained)."""
    keep = []
    for n in model.graph.node:
        if n.op_type == "Constant" and n.domain in ("", "ai.onnx") and len(n.attribute) == 1 \
                and n.attribute[0].name == "value":
            t = onnx.TensorProto()
            t.CopyFrom(n.attribute[0].t)
            t.name = n.output[0]
            model.graph.initializer.append(t)
        else:
            keep.append(n)
    del model.graph.node[:]
    model.graph.node.extend(keep)


def build_graph(model: onnx.ModelProto, *, copy: bool = True) -> Graph:
    """Build the IR from a shape-inferred, batch-bound model (``copy=False``: the graph takes ``model`` and
    changes it; for callers that own it)."""
    if copy:
        model = _copy(model)
    _fold_constant_nodes(model)
    g = model.graph
    info = {vi.name: vi for vi in list(g.input) + list(g.value_info) + list(g.output)}
    values: dict[str, Value] = {}
    params = []
    for t in g.initializer:
        _check_tensor_data(t)
        v = Value(t.name, tuple(t.dims), _np_dtype(t.data_type, f"initializer {t.name!r}"), "param")
        values[t.name] = v
        params.append(v)
    inputs = []
    for vi in g.input:
        if vi.name in values:
            continue
        what = f"input {vi.name!r}"
        v = Value(vi.name, _static_shape(vi, what), _np_dtype(vi.type.tensor_type.elem_type, what), "input")
        values[vi.name] = v
        inputs.append(v)
    protos = _toposort(list(g.node), set(values))
    _unique_node_names(protos)
    nodes = []
    for p in protos:
        ins: list[Value | None] = []
        for name in p.input:
            if not name:
                ins.append(None)
                continue
            if name not in values:
                raise ModelError(f"node {p.name!r} ({p.op_type}) reads {name!r}, which nothing produces")
            ins.append(values[name])
        node = Node(p.name, p.op_type, p.domain, ins, [], p)
        for name in p.output:
            if not name:
                continue
            what = f"value {name!r} (output of node {p.name!r}, {p.op_type})"
            if name in values:
                raise ModelError(f"{what} is defined twice; the graph is not in SSA form")
            vi = info.get(name)
            if vi is None or not vi.type.HasField("tensor_type"):
                raise ModelError(f"{what}: shape unknown after shape inference")
            v = Value(name, _static_shape(vi, what), _np_dtype(vi.type.tensor_type.elem_type, what),
                      "activation", node)
            values[name] = v
            node.outputs.append(v)
        for i, src in enumerate(ins):
            if src is not None:
                src.uses.append(Use(node, i))
        nodes.append(node)
    outputs = []
    for vi in g.output:
        if vi.name not in values:
            raise ModelError(f"graph output {vi.name!r} is not produced by any node")
        outputs.append(values[vi.name])
    del g.node[:]
    return Graph(g.name or "graph", nodes, inputs, params, outputs, values, model)


_FIELD_OF_DTYPE: dict[int, str] = {onnx.TensorProto.FLOAT: "float_data", onnx.TensorProto.DOUBLE: "double_data",
                 onnx.TensorProto.INT64: "int64_data", onnx.TensorProto.UINT64: "uint64_data"}


def _check_tensor_data(t: onnx.TensorProto) -> None:
    """ModelError when an initializer's embedded data does not hold what its shape and dtype say (a damaged
    file that still decodes); external data is checked where it is read."""
    if t.data_location == onnx.TensorProto.EXTERNAL or t.data_type not in SUPPORTED_DTYPES:
        return
    count = int(np.prod(t.dims, dtype=np.int64)) if len(t.dims) else 1
    if t.HasField("raw_data"):
        have, want = len(t.raw_data), count * np.dtype(onnx.helper.tensor_dtype_to_np_dtype(t.data_type)).itemsize
        unit = "bytes"
    else:
        have, want = len(getattr(t, _FIELD_OF_DTYPE.get(t.data_type, "int32_data"))), count
        unit = "values"
    if have != want:
        raise ModelError(f"initializer {t.name!r} holds {have} {unit} of data where its shape {list(t.dims)} and "
                         f"dtype need {want}; the file is damaged")


def _copy(model: onnx.ModelProto) -> onnx.ModelProto:
    m = onnx.ModelProto()
    m.CopyFrom(model)
    return m


def infer_shapes_in_place(model: onnx.ModelProto) -> None:
    """``infer_shapes`` (strict, with data propagation) run on ``shapes_view(model)``; its value_info and
    output types are written into ``model``."""
    inferred = infer_shapes(shapes_view(model))
    del model.graph.value_info[:]
    model.graph.value_info.extend(inferred.graph.value_info)
    by_name = {vi.name: vi for vi in inferred.graph.output}
    for vi in model.graph.output:
        if vi.name in by_name:
            vi.CopyFrom(by_name[vi.name])


def export_model(graph: Graph, node_protos: list[onnx.NodeProto] | None = None, *,
                 name: str | None = None, value_info: bool = False) -> onnx.ModelProto:
    """An ONNX model of the graph, with ``node_protos`` (default: the graph's nodes) as its node list, in order.

    Node order is kept exactly: the lowered graph's order is the plan's order. With ``value_info`` the
    static shape of every activation of the graph is recorded too.
    """
    m = _copy(graph.model)
    g = m.graph
    del g.node[:]
    g.node.extend(node_protos if node_protos is not None else [n.proto for n in graph.nodes])
    if name:
        g.name = name
    del g.value_info[:]
    for vi in list(g.input) + list(g.output):
        v = graph.values.get(vi.name)
        if v is not None:
            shape = vi.type.tensor_type.shape
            shape.Clear()
            for d in v.shape:
                shape.dim.add().dim_value = d
    if value_info:
        outs = {vi.name for vi in g.output}
        g.value_info.extend(
            onnx.helper.make_tensor_value_info(v.name, onnx.helper.np_dtype_to_tensor_dtype(v.dtype), v.shape)
            for v in graph.activations() if v.name not in outs)
    m.ir_version = min(m.ir_version or MAX_IR_VERSION, MAX_IR_VERSION)
    return m


PROTO_LIMIT = (1 << 31) - (1 << 26)
"""Models whose tensor data exceeds this are written with external data: protobuf cannot serialize a
message of 2 GiB or more (the rest of the graph gets 64 MiB of room)."""
EXTERNAL_MIN_BYTES = 1024
"""With external data, tensors smaller than this stay inside the model file (as onnx.save does)."""


def save_model(model: onnx.ModelProto, path: str | os.PathLike, *, data_dir: str | os.PathLike | None = None
               ) -> None:
    """Write ``model`` so that it loads from any working directory, atomically.

    Tensors stored as external data whose file exists under ``data_dir`` (the folder of the file the
    model was read from: relative locations are relative to it) are read in. When all tensor data fits
    a protobuf message (``PROTO_LIMIT``) the result is one self-contained file; otherwise tensors of at
    least ``EXTERNAL_MIN_BYTES`` go to ``<path>.data`` beside it (location ``<name>.data``, relative to
    the model file, as ONNX Runtime and onnx.load resolve it). External tensors whose data file does not
    exist (shape-only weights, which have no data) are written as they are. Both files are written under
    temporary names in the output folder and renamed into place (the data file first). ModelError when
    the output folder does not exist.
    """
    path = Path(path)
    if not path.parent.is_dir():
        raise ModelError(f"cannot write {path}: folder {path.parent} does not exist")
    m = _copy(model)
    base = Path(data_dir) if data_dir is not None else None
    tensors = _data_tensors(m)
    external = sum(_data_size(t, base) for t in tensors) > PROTO_LIMIT
    data_name = f"{path.name}.data"
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    tmp_data = path.with_name(f".{data_name}.tmp-{os.getpid()}")
    try:
        if external:
            _write_external(tensors, base, tmp_data, data_name)
        else:
            _inline(tensors, base, None)
        tmp.write_bytes(m.SerializeToString())
        if external:
            os.replace(tmp_data, path.parent / data_name)
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
        tmp_data.unlink(missing_ok=True)


def inline_external_data(model: onnx.ModelProto, data_dir: str | os.PathLike, max_bytes: int | None = None
                         ) -> onnx.ModelProto:
    """Read the external data of ``model``'s tensors (of at most ``max_bytes`` each, all when None) from
    their files under ``data_dir`` into the model, in place; tensors whose file does not exist (shape-only
    weights) stay external. Returns ``model``."""
    _inline(_data_tensors(model), Path(data_dir), max_bytes)
    return model


def _inline(tensors: list[onnx.TensorProto], base: Path | None, max_bytes: int | None) -> None:
    for t in tensors:
        if t.data_location != onnx.TensorProto.EXTERNAL:
            continue
        if max_bytes is not None and _data_size(t, base) > max_bytes:
            continue
        data = _external_bytes(t, base)
        if data is not None:
            _set_raw(t, data)


def _data_tensors(model: onnx.ModelProto) -> list[onnx.TensorProto]:
    """The initializers and the tensors of Constant nodes (the tensors that may hold weight data)."""
    out = list(model.graph.initializer)
    for n in model.graph.node:
        out += [a.t for a in n.attribute if a.type == onnx.AttributeProto.TENSOR]
    return out


def _external_info(t: onnx.TensorProto) -> dict[str, str]:
    return {e.key: e.value for e in t.external_data}


def _external_file(t: onnx.TensorProto, base: Path | None) -> Path | None:
    loc = _external_info(t).get("location")
    if base is None or not loc:
        return None
    f = base / loc
    return f if f.is_file() else None


def _data_size(t: onnx.TensorProto, base: Path | None) -> int:
    """Bytes of ``t``'s data as it will be written (0 for external data that does not exist)."""
    if t.data_location == onnx.TensorProto.EXTERNAL:
        if _external_file(t, base) is None:
            return 0
        info = _external_info(t)
        if "length" in info:
            return int(info["length"])
        return int(np.prod(t.dims, dtype=np.int64)) * onnx.helper.tensor_dtype_to_np_dtype(t.data_type).itemsize
    return t.ByteSize()


def _external_bytes(t: onnx.TensorProto, base: Path | None) -> bytes | None:
    """The data of an external tensor read from its file under ``base``; None when that file does not exist."""
    f = _external_file(t, base)
    if f is None:
        return None
    info = _external_info(t)
    offset = int(info.get("offset", 0))
    length = int(info["length"]) if "length" in info else -1
    with open(f, "rb") as fh:
        fh.seek(offset)
        data = fh.read(length)
    if length >= 0 and len(data) != length:
        raise ModelError(f"external data of tensor {t.name!r} in {f} is truncated ({len(data)} of {length} bytes)")
    return data


def _tensor_bytes(t: onnx.TensorProto, base: Path | None) -> bytes | None:
    """The raw little-endian data of ``t`` wherever it is stored; None where there is none (shape-only)."""
    if t.data_location == onnx.TensorProto.EXTERNAL:
        return _external_bytes(t, base)
    if t.data_type == onnx.TensorProto.STRING:
        return None
    if t.HasField("raw_data"):
        return t.raw_data
    return np.ascontiguousarray(numpy_helper.to_array(t)).tobytes()  # little-endian hosts (x86, arm64)


_TYPED_FIELDS = ("float_data", "int32_data", "string_data", "int64_data", "double_data", "uint64_data")


def _set_raw(t: onnx.TensorProto, data: bytes) -> None:
    for f in _TYPED_FIELDS:
        t.ClearField(f)
    del t.external_data[:]
    t.data_location = onnx.TensorProto.DEFAULT
    t.raw_data = data


def _write_external(tensors: list[onnx.TensorProto], base: Path | None, tmp_data: Path, data_name: str) -> None:
    """Move the data of every tensor of at least EXTERNAL_MIN_BYTES into ``tmp_data`` (to be renamed to
    ``data_name`` beside the model), pointing the tensors at it; smaller ones go inside the model."""
    with open(tmp_data, "wb") as fh:
        for t in tensors:
            data = _tensor_bytes(t, base)
            if data is None:
                continue
            if len(data) < EXTERNAL_MIN_BYTES:
                _set_raw(t, data)
                continue
            offset = fh.tell()
            fh.write(data)
            _set_raw(t, b"")
            t.ClearField("raw_data")
            t.data_location = onnx.TensorProto.EXTERNAL
            for key, value in (("location", data_name), ("offset", str(offset)), ("length", str(len(data)))):
                e = t.external_data.add()
                e.key, e.value = key, value


def write_text_atomic(path: str | os.PathLike, text: str) -> None:
    """Write a text file atomically (temporary name, then rename)."""
    path = Path(path)
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    try:
        tmp.write_text(text)
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


Kernelless = Callable[[onnx.ModelProto], "list[str] | set[str]"]
"""Names (``node_keys``) of the nodes a runtime has no kernel for (``remc.backends.runtime.kernelless_nodes``)."""


def inline_function_ops(model: onnx.ModelProto, kernelless: Kernelless, where: str = "the runtime"
                        ) -> onnx.ModelProto:
    """Expand every node ``kernelless`` names into its ONNX function body, in place in the node list,
    so that a runtime that would expand it itself (late, out of the file's order) runs the file as listed. Body nodes are named
    ``<node>/<op_type>_<k>``; other nodes are untouched. UnsupportedOpError when such a node has no
    function body. Uses ``onnx.inliner`` (which also converts the body to the model's opset)."""
    for _ in range(_MAX_INLINE_DEPTH):  # function bodies may call kernel-less ops themselves
        todo = set(kernelless(model))
        if not todo:
            return model
        model = _inline_once(model, todo, where)
    raise ModelError(f"function expansion for {where} does not end after {_MAX_INLINE_DEPTH} levels")


_MAX_INLINE_DEPTH = 8


def _inline_once(model: onnx.ModelProto, todo: set[str], where: str) -> onnx.ModelProto:
    keys = node_keys(model)
    calls = [(k, n) for k, n in zip(keys, model.graph.node) if k in todo]
    opsets = {("" if o.domain == "ai.onnx" else o.domain): o.version for o in model.opset_import}
    for k, n in calls:
        try:
            schema = onnx.defs.get_schema(n.op_type, opsets.get(n.domain, 1), n.domain)
        except onnx.defs.SchemaError:
            schema = None
        if schema is None or not (getattr(schema, "has_function", False)
                                   or getattr(schema, "has_context_dependent_function", False)):
            raise UnsupportedOpError(n.op_type, k, f"kernel in {where} or function body")
    ids = sorted({(n.domain, n.op_type) for _, n in calls})
    inlined = inliner.inline_selected_functions(model, ids, exclude=False, inline_schema_functions=True)
    _name_inlined(model, keys, todo, inlined)
    return inlined


def _name_inlined(model: onnx.ModelProto, keys: list[str], todo: set[str], inlined: onnx.ModelProto) -> None:
    """Name the body nodes of each inlined call after the call (the inliner leaves them unnamed)."""
    new = list(inlined.graph.node)
    j = 0
    for key, node in zip(keys, model.graph.node):
        if key not in todo:
            while new[j].op_type != node.op_type or list(new[j].output) != list(node.output):
                j += 1  # pragma: no cover - the inliner keeps other nodes in place
            new[j].name = node.name
            j += 1
            continue
        pending, k = {o for o in node.output if o}, 0
        while pending:
            pending -= set(new[j].output)
            new[j].name = f"{key}/{new[j].op_type}_{k}"
            j, k = j + 1, k + 1
