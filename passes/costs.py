"""Per-node compute costs of an ONNX graph: a static FLOP model, or times measured on ONNX Runtime.

``node_costs(model, "flops")`` prices every node from its static input/output shapes (never from
initializer data, which may be shape-only external tensors). Per op, with ``|T|`` the number of elements
of tensor T, ``Y`` the first output and ``X`` the first input:

- Conv: ``2 * |Y| * Cin/group * prod(kernel)`` (= 2 N Cout Hout Wout Cin/g kh kw), plus ``|Y|`` with bias.
- ConvTranspose: from the input side, ``2 * |X| * Cout/group * prod(kernel)``, plus ``|Y|`` with bias.
- MatMul (and MatMulInteger): ``2 * |Y| * K`` (= 2 M N K batch, broadcast batch included).
- Gemm: ``2 * M * N * K``, plus ``M * N`` with C.  Einsum: ``2 * prod(size of every index letter)``.
- Elementwise ops: ``|Y| * ELEMENTWISE_FACTOR[op]``: 1 for arithmetic, comparison, logic, Where, Cast,
  Relu; 2 for Clip, LeakyRelu, PRelu, HardSigmoid, HardSwish, ThresholdedRelu; 4 for transcendental
  ops (Exp, Log, Sigmoid, Tanh, Erf, Pow, Sqrt, Softplus, Elu, Selu, ...); 8 for Gelu and Mish.
- Reductions (Reduce*, ArgMax, ArgMin): ``|X|`` (2 for ReduceSumSquare/L2/LogSum, 5 for LogSumExp).
- Pooling: ``|Y| * prod(kernel_shape)``; global pooling: ``|X|``; LpPool counts 2 per window element.
- Softmax, LogSoftmax, Hardmax: ``5 * |X|``.  SoftmaxCrossEntropyLoss: ``5 * |scores|``;
  NegativeLogLikelihoodLoss: ``2 * |labels|``.
- BatchNormalization: ``2 * |Y|`` (precomputed scale and shift), ``6 * |X|`` with training_mode=1;
  LayerNormalization, InstanceNormalization, GroupNormalization, MeanVarianceNormalization: ``6 * |X|``
  (two reductions, subtract, scale, shift).  Decomposed normalizations are priced op by op.
- Data movement (Transpose, Concat, Split, Slice, Gather*, Pad, Expand, Tile, DepthToSpace,
  SpaceToDepth, Compress, ReverseSequence, Trilu, ...): ``|outputs|``, one unit per element moved.
- Aliasing ops (Reshape, Flatten, Squeeze, Unsqueeze, Identity, Shape, Size, Constant): 1; ONNX
  Runtime runs them in place of their input (KernelDef Alias) or they produce a few scalars.
- ScatterElements, ScatterND, Scatter: ``|updates| + |Y|`` (the scatter plus copying data to Y).
- Dropout: ``3 * |X|`` (draw, compare, scale); Random*: ``4 * |Y|``.
- Resize/Upsample: ``|Y|`` for nearest, ``4 * |Y|`` for linear, ``16 * |Y|`` for cubic.
- LRN: ``2 * size * |X|``.  TopK: ``|X| * log2(k + 1)``.  RNN/GRU/LSTM: the gate GEMMs,
  ``2 * seq * batch * dirs * gates * H * (I + H)`` plus ``10 * seq * batch * dirs * H``.
- Anything else: ``DEFAULT_FACTOR * |outputs|`` (DEFAULT_FACTOR = 1), so that no op fails the model.

Every cost is at least 1 (``MIN_COST``): schedulers need positive costs.

``node_costs(model, "profile", device=...)`` instead times each distinct node signature (op type,
domain, attributes, input and output shapes and dtypes, which inputs are constants) alone on the
device through ONNX Runtime and returns seconds (median of ``repeats`` runs after a warm-up, per
signature capped by ``time_cap`` seconds). Results are cached on disk as JSON, keyed by a hash of the
signature, the device (with the host CPU or GPU name) and the onnxruntime version.
"""
from __future__ import annotations

import functools
import hashlib
import json
import math
import os
import platform
import shutil
import subprocess
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

import numpy as np
import onnx
from onnx import helper, numpy_helper

from remc.errors import ModelError, RuntimeFailure, UnsupportedOpError

MIN_COST = 1.0
"""Least cost of any node, for both methods' flops (seconds are floored at MIN_SECONDS)."""
MIN_SECONDS = 1e-9
DEFAULT_FACTOR = 1.0
"""FLOPs per output element of an op the model does not know."""


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
            inferred = onnx.shape_inference.infer_shapes(model, check_type=False, strict_mode=False, data_prop=True)
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


# ---------------------------------------------------------------------------------------------------
# The static FLOP model
# ---------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class NodeInfo:
    """What a FLOP rule sees of a node: static input/output types (None for absent optional ones)."""

    node: onnx.NodeProto
    ins: tuple[TensorType | None, ...]
    outs: tuple[TensorType | None, ...]
    attrs: dict

    def inp(self, i: int) -> TensorType:
        """The i-th input's type; a ModelError when it is absent."""
        if i >= len(self.ins) or self.ins[i] is None:
            raise ModelError(f"node {self.node.name!r} ({self.node.op_type}) lacks a static type for input {i}")
        return self.ins[i]

    @property
    def y(self) -> TensorType:
        """The first output's type."""
        return self.outs[0]

    @property
    def out_elements(self) -> int:
        """Elements over all present outputs."""
        return sum(t.size for t in self.outs if t is not None)


ELEMENTWISE_FACTOR: dict[str, float] = {
    **dict.fromkeys(
        "Add Sub Mul Div Mod Max Min Sum Mean Neg Abs Sign Relu Where Equal Greater Less GreaterOrEqual "
        "LessOrEqual Not And Or Xor BitShift BitwiseAnd BitwiseOr BitwiseXor BitwiseNot Cast CastLike "
        "Floor Ceil Round IsNaN IsInf Reciprocal QuantizeLinear DequantizeLinear".split(), 1.0),
    **dict.fromkeys("Clip LeakyRelu PRelu HardSigmoid HardSwish ThresholdedRelu Shrink Celu".split(), 2.0),
    **dict.fromkeys(
        "Exp Log Sigmoid Tanh Erf Pow Sqrt Softplus Softsign Elu Selu Sin Cos Tan Asin Acos Atan Sinh "
        "Cosh Asinh Acosh Atanh".split(), 4.0),
    **dict.fromkeys("Gelu Mish".split(), 8.0),
}
"""FLOPs per output element of elementwise ops."""

REDUCTION_FACTOR: dict[str, float] = {
    **dict.fromkeys("ReduceSum ReduceMean ReduceMax ReduceMin ReduceProd ReduceL1 ArgMax ArgMin".split(), 1.0),
    **dict.fromkeys("ReduceSumSquare ReduceL2 ReduceLogSum".split(), 2.0),
    "ReduceLogSumExp": 5.0,
}
"""FLOPs per input element of reductions."""

DATA_MOVEMENT = frozenset(
    "Transpose Concat Split Slice Gather GatherElements GatherND Pad Expand Tile DepthToSpace SpaceToDepth "
    "Compress ReverseSequence Trilu ConstantOfShape Range EyeLike OneHot MaxUnpool SplitToSequence "
    "ConcatFromSequence Col2Im CenterCropPad".split())
"""Ops that copy or fill data: one unit per output element."""

ALIASING = frozenset("Reshape Flatten Squeeze Unsqueeze Identity Shape Size Constant Optional "
                     "OptionalGetElement OptionalHasElement".split())
"""Ops that move no data in ONNX Runtime (in-place views) or produce a few scalars: cost 1."""

NORMALIZATION = frozenset("LayerNormalization InstanceNormalization GroupNormalization "
                          "MeanVarianceNormalization".split())


def _conv(ni: NodeInfo) -> float:
    w = ni.inp(1)
    bias = ni.y.size if len(ni.ins) > 2 and ni.ins[2] is not None else 0
    return 2.0 * ni.y.size * math.prod(w.shape[1:]) + bias


def _conv_transpose(ni: NodeInfo) -> float:
    w = ni.inp(1)  # [Cin, Cout/group, k...]: each input element meets Cout/group * prod(k) weights
    bias = ni.y.size if len(ni.ins) > 2 and ni.ins[2] is not None else 0
    return 2.0 * ni.inp(0).size * math.prod(w.shape[1:]) + bias


def _matmul(ni: NodeInfo) -> float:
    a = ni.inp(0)
    return 2.0 * ni.y.size * (a.shape[-1] if a.shape else 1)


def _gemm(ni: NodeInfo) -> float:
    a = ni.inp(0)
    k = a.shape[0] if ni.attrs.get("transA", 0) else a.shape[1]
    c = ni.y.size if len(ni.ins) > 2 and ni.ins[2] is not None else 0
    return 2.0 * ni.y.size * k + c


def _einsum(ni: NodeInfo) -> float:
    eq = ni.attrs.get("equation", b"")
    eq = (eq.decode() if isinstance(eq, bytes) else eq).replace(" ", "")
    terms = eq.split("->")[0].split(",")
    if len(terms) != len(ni.ins) or any("..." in t for t in terms):
        return DEFAULT_FACTOR * ni.out_elements
    dims: dict[str, int] = {}
    for term, t in zip(terms, ni.ins):
        if t is None or len(term) != len(t.shape):
            return DEFAULT_FACTOR * ni.out_elements
        dims.update(zip(term, t.shape))
    return (2.0 if len(terms) > 1 else 1.0) * math.prod(dims.values())


def _pool(ni: NodeInfo) -> float:
    k = math.prod(ni.attrs.get("kernel_shape", [1]))
    return ni.y.size * k * (2.0 if ni.node.op_type == "LpPool" else 1.0)


def _batchnorm(ni: NodeInfo) -> float:
    return (6.0 * ni.inp(0).size) if ni.attrs.get("training_mode", 0) else 2.0 * ni.y.size


def _scatter(ni: NodeInfo) -> float:
    return float(ni.inp(2).size + ni.y.size)


def _resize(ni: NodeInfo) -> float:
    mode = ni.attrs.get("mode", b"nearest")
    mode = mode.decode() if isinstance(mode, bytes) else mode
    return ni.y.size * {"nearest": 1.0, "linear": 4.0, "cubic": 16.0}.get(mode, 4.0)


def _topk(ni: NodeInfo) -> float:
    k = ni.outs[0].shape[ni.attrs.get("axis", -1)] if ni.outs[0] is not None and ni.outs[0].shape else 1
    return ni.inp(0).size * math.log2(k + 1)


def _rnn(ni: NodeInfo) -> float:
    x, w = ni.inp(0), ni.inp(1)  # X [seq, batch, I] (layout 0), W [dirs, gates*H, I]
    dirs, gh, i = w.shape
    seq_batch = x.size // x.shape[-1]
    hidden = ni.attrs.get("hidden_size") or gh // {"LSTM": 4, "GRU": 3}.get(ni.node.op_type, 1)
    return 2.0 * seq_batch * dirs * gh * (i + hidden) + 10.0 * seq_batch * dirs * hidden


FLOP_RULES: dict[str, Callable[[NodeInfo], float]] = {
    "Conv": _conv, "ConvInteger": _conv, "ConvTranspose": _conv_transpose,
    "MatMul": _matmul, "MatMulInteger": _matmul, "Gemm": _gemm, "Einsum": _einsum,
    "MaxPool": _pool, "AveragePool": _pool, "LpPool": _pool,
    "GlobalAveragePool": lambda ni: float(ni.inp(0).size), "GlobalMaxPool": lambda ni: float(ni.inp(0).size),
    "GlobalLpPool": lambda ni: 2.0 * ni.inp(0).size,
    "Softmax": lambda ni: 5.0 * ni.inp(0).size, "LogSoftmax": lambda ni: 5.0 * ni.inp(0).size,
    "Hardmax": lambda ni: 5.0 * ni.inp(0).size,
    "SoftmaxCrossEntropyLoss": lambda ni: 5.0 * ni.inp(0).size,
    "NegativeLogLikelihoodLoss": lambda ni: 2.0 * ni.inp(1).size,
    "BatchNormalization": _batchnorm,
    "ScatterElements": _scatter, "ScatterND": _scatter, "Scatter": _scatter,
    "Dropout": lambda ni: 3.0 * ni.inp(0).size,
    "RandomNormal": lambda ni: 4.0 * ni.y.size, "RandomUniform": lambda ni: 4.0 * ni.y.size,
    "RandomNormalLike": lambda ni: 4.0 * ni.y.size, "RandomUniformLike": lambda ni: 4.0 * ni.y.size,
    "Bernoulli": lambda ni: 4.0 * ni.y.size, "Multinomial": lambda ni: 4.0 * ni.inp(0).size,
    "Resize": _resize, "Upsample": _resize,
    "LRN": lambda ni: 2.0 * ni.attrs.get("size", 1) * ni.inp(0).size,
    "TopK": _topk, "CumSum": lambda ni: float(ni.inp(0).size), "NonZero": lambda ni: float(ni.inp(0).size),
    "Unique": lambda ni: float(ni.inp(0).size),
    "RNN": _rnn, "GRU": _rnn, "LSTM": _rnn,
}
"""FLOP rules for ops that are neither elementwise, reductions, data movement nor aliasing."""


def flops(ni: NodeInfo) -> float:
    """FLOPs of one node by the rules in the module docstring (at least MIN_COST)."""
    op = ni.node.op_type
    if op in FLOP_RULES:
        cost = FLOP_RULES[op](ni)
    elif op in ELEMENTWISE_FACTOR:
        cost = ELEMENTWISE_FACTOR[op] * ni.y.size
    elif op in REDUCTION_FACTOR:
        cost = REDUCTION_FACTOR[op] * ni.inp(0).size
    elif op in NORMALIZATION:
        cost = 6.0 * ni.inp(0).size
    elif op in DATA_MOVEMENT:
        cost = float(ni.out_elements)
    elif op in ALIASING:
        cost = MIN_COST
    else:
        cost = DEFAULT_FACTOR * ni.out_elements
    return max(float(cost), MIN_COST)


def _node_info(node: onnx.NodeProto, types: dict[str, TensorType]) -> NodeInfo:
    outs = tuple(types.get(o) if o else None for o in node.output)
    for o, t in zip(node.output, outs):
        if o and t is None:
            raise ModelError(f"value {o!r} (output of node {node.name!r}, {node.op_type}) has no static shape; "
                             "bind symbolic dimensions (e.g. --batch) before pricing the graph")
    ins = tuple(types.get(i) if i else None for i in node.input)
    return NodeInfo(node, ins, outs, {a.name: helper.get_attribute_value(a) for a in node.attribute})


def flop_costs(model: onnx.ModelProto) -> dict[str, float]:
    """FLOPs of every node, keyed like ``node_keys``."""
    types = static_types(model)
    return {k: flops(_node_info(n, types)) for k, n in zip(node_keys(model), model.graph.node)}


# ---------------------------------------------------------------------------------------------------
# Measured costs: each distinct node signature timed alone on ONNX Runtime
# ---------------------------------------------------------------------------------------------------

SMALL_CONSTANT = 4096
"""Constant inputs with at most this many elements keep their real values in one-node models."""


def _opset(model: onnx.ModelProto, domain: str) -> int:
    domain = "" if domain == "ai.onnx" else domain
    return next((o.version for o in model.opset_import if o.domain == domain), 0)


def _attr_digest(node: onnx.NodeProto) -> str:
    h = hashlib.sha256()
    for a in sorted(node.attribute, key=lambda a: a.name):
        h.update(a.SerializeToString(deterministic=True))
    return h.hexdigest()[:16]


def signature(model: onnx.ModelProto, node: onnx.NodeProto, types: dict[str, TensorType],
              constants: set[str]) -> dict:
    """What determines a node's time: op, domain and opset, attributes, input and output types, and
    which inputs are constants (ORT pre-packs constant weights)."""
    def tt(name: str) -> list | None:
        t = types.get(name) if name else None
        return None if t is None else [list(t.shape), t.elem_type]
    return {
        "op": node.op_type, "domain": node.domain, "opset": _opset(model, node.domain), "attrs": _attr_digest(node),
        "inputs": [None if not i else [tt(i), i in constants] for i in node.input],
        "outputs": [tt(o) for o in node.output],
    }


@functools.lru_cache(maxsize=4)
def device_tag(device: str) -> str:
    """The device a timing belongs to: CPU model and core count, or the GPU's name."""
    from remc.runtime import parse_device
    kind, idx = parse_device(device)
    if kind == "cpu":
        name = platform.processor() or platform.machine()
        try:
            with open("/proc/cpuinfo") as f:
                name = next((ln.split(":", 1)[1].strip() for ln in f if ln.startswith("model name")), name)
        except OSError:
            pass
        return f"cpu/{name}/{os.cpu_count()}"
    smi = shutil.which("nvidia-smi")
    name = "unknown-gpu"
    if smi:
        r = subprocess.run([smi, "--query-gpu=name", "--format=csv,noheader", "-i", str(idx)],
                           capture_output=True, text=True, timeout=30)
        name = r.stdout.strip() or name
    return f"cuda/{name}"


def _cache_key(sig: dict, device: str) -> str:
    import onnxruntime
    blob = json.dumps({"sig": sig, "device": device_tag(device), "ort": onnxruntime.__version__}, sort_keys=True)
    return hashlib.sha256(blob.encode()).hexdigest()


class CostCache:
    """The on-disk table of measured seconds: ``<dir>/profile.json``, {key: {"seconds", "op", "runs"}}."""

    def __init__(self, cache_dir: str | Path | None = None) -> None:
        self.path = Path(cache_dir or Path.home() / ".cache" / "remc" / "costs") / "profile.json"
        self.entries: dict[str, dict] = self._read()
        self.new: dict[str, dict] = {}

    def _read(self) -> dict[str, dict]:
        try:
            with open(self.path) as f:
                return dict(json.load(f).get("entries", {}))
        except FileNotFoundError:
            return {}
        except (OSError, ValueError) as exc:
            raise RuntimeFailure(f"cost cache {str(self.path)!r} is unreadable ({exc}); delete it") from exc

    def get(self, key: str) -> float | None:
        e = self.entries.get(key) or self.new.get(key)
        return None if e is None else float(e["seconds"])

    def put(self, key: str, seconds: float, op: str, runs: int) -> None:
        self.new[key] = {"seconds": seconds, "op": op, "runs": runs}

    def save(self) -> None:
        """Merge new entries into the file (re-read first, so parallel writers do not drop entries)."""
        if not self.new:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        merged = {**self._read(), **self.new}
        fd, tmp = tempfile.mkstemp(dir=self.path.parent, prefix=".profile-", suffix=".json")
        with os.fdopen(fd, "w") as f:
            json.dump({"version": 1, "entries": merged}, f, indent=0, sort_keys=True)
        os.replace(tmp, self.path)
        self.entries, self.new = merged, {}


def _constant_values(model: onnx.ModelProto, base_dir: str | None) -> dict[str, np.ndarray | None]:
    """Initializer and Constant-node values by name; None for data that is not available (shape-only)."""
    out: dict[str, np.ndarray | None] = {}
    for init in model.graph.initializer:
        out[init.name] = _tensor_or_none(init, base_dir)
    for node in model.graph.node:
        if node.op_type == "Constant" and node.domain in ("", "ai.onnx"):
            a = node.attribute[0]
            if a.name == "value":
                out[node.output[0]] = _tensor_or_none(a.t, base_dir)
            else:
                v = helper.get_attribute_value(a)
                out[node.output[0]] = np.array(v, dtype=np.float32 if "float" in a.name else np.int64)
    return out


def _tensor_or_none(t: onnx.TensorProto, base_dir: str | None) -> np.ndarray | None:
    if t.data_location == onnx.TensorProto.EXTERNAL:
        if base_dir is None:
            return None
        try:
            return numpy_helper.to_array(t, base_dir)
        except Exception:  # shape-only external tensor: its file or bytes do not exist
            return None
    try:
        return numpy_helper.to_array(t)
    except Exception:
        return None


def _random_like(t: TensorType, rng: np.random.Generator) -> np.ndarray:
    dtype = np.dtype(helper.tensor_dtype_to_np_dtype(t.elem_type))
    if dtype.kind == "f":  # positive, away from 0: no NaN from Log/Sqrt/Div
        return rng.uniform(0.5, 1.5, size=t.shape).astype(dtype)
    return np.zeros(t.shape, dtype=dtype)  # zeros are valid indices, shapes come from the original


@dataclass
class _Probe:
    """One signature to time: its first node and what is needed to build its one-node model."""

    key: str
    node: onnx.NodeProto
    name: str


class ProfileCosts:
    """Times each distinct node signature alone on ``device`` (see the module docstring)."""

    def __init__(self, device: str = "cpu", *, cache_dir: str | Path | None = None, repeats: int = 10,
                 warmup: int = 2, time_cap: float = 1.0, seed: int = 0, base_dir: str | None = None) -> None:
        self.device, self.repeats, self.warmup, self.time_cap = device, repeats, warmup, time_cap
        self.seed, self.base_dir = seed, base_dir
        self.cache = CostCache(cache_dir)
        self.sessions_built = 0

    def apply(self, model: onnx.ModelProto) -> dict[str, float]:
        """Seconds per node, keyed like ``node_keys``."""
        types = static_types(model)
        keys = node_keys(model)
        consts = _constant_values(model, self.base_dir)
        node_key: dict[str, str] = {}
        probes: dict[str, _Probe] = {}
        for name, node in zip(keys, model.graph.node):
            for o in node.output:
                if o and o not in types:
                    raise ModelError(f"value {o!r} (output of node {name!r}) has no static shape")
            k = _cache_key(signature(model, node, types, set(consts)), self.device)
            node_key[name] = k
            if self.cache.get(k) is None and k not in probes:
                probes[k] = _Probe(k, node, name)
        try:
            if probes:
                values = self._original_values(model, list(probes.values()), types, consts)
                for p in probes.values():
                    secs, runs = self._time(model, p, types, consts, values)
                    self.cache.put(p.key, secs, p.node.op_type, runs)
        finally:
            self.cache.save()
        return {name: max(self.cache.get(k), MIN_SECONDS) for name, k in node_key.items()}

    def _original_values(self, model: onnx.ModelProto, probes: list[_Probe], types: dict[str, TensorType],
                         consts: dict) -> dict[str, np.ndarray]:
        """Graph-input feeds, plus the non-float values the original graph computes for probed nodes.

        Runs only the path to those values (``only_execute_path_to_fetches``) on the profiling device;
        initializers without data (shape-only) get random values first.
        """
        from remc import runtime
        feeds = runtime.random_inputs(model, self.seed)
        graph_inputs = {i.name for i in model.graph.input}
        wanted = sorted({i for p in probes for i in p.node.input
                         if i and i not in consts and i not in graph_inputs and i in types
                         and np.dtype(helper.tensor_dtype_to_np_dtype(types[i].elem_type)).kind != "f"})
        if not wanted:
            return feeds
        probe_model = self._with_data(model, consts)
        have = {o.name for o in probe_model.graph.output}
        probe_model.graph.output.extend(
            helper.make_tensor_value_info(v, types[v].elem_type, types[v].shape) for v in wanted if v not in have)
        import onnxruntime
        opts = onnxruntime.RunOptions()
        opts.only_execute_path_to_fetches = True
        try:
            sess = runtime.make_session(probe_model, self.device)
            self.sessions_built += 1
            got = sess.run(wanted, {i.name: feeds[i.name] for i in sess.get_inputs()}, opts)
        except Exception as exc:
            raise RuntimeFailure(f"profiling needs integer values the original graph computes ({wanted[0]!r}, ...), "
                                 f"but the graph failed to run on {self.device}: {exc}") from exc
        return {**feeds, **dict(zip(wanted, got))}

    def _with_data(self, model: onnx.ModelProto, consts: dict) -> onnx.ModelProto:
        """A copy of ``model`` whose data-less initializers hold random data of their shape."""
        rng = np.random.default_rng(self.seed)
        out = onnx.ModelProto()
        out.CopyFrom(model)
        for i, init in enumerate(out.graph.initializer):
            if consts.get(init.name) is None:
                t = TensorType(tuple(int(d) for d in init.dims), int(init.data_type))
                dtype = np.dtype(helper.tensor_dtype_to_np_dtype(t.elem_type))
                v = (rng.standard_normal(t.shape) * 0.1).astype(dtype) if dtype.kind == "f" else _random_like(t, rng)
                out.graph.initializer[i].CopyFrom(numpy_helper.from_array(v, init.name))
        return out

    def _one_node_model(self, model: onnx.ModelProto, p: _Probe, types: dict[str, TensorType], consts: dict,
                        values: dict[str, np.ndarray], rng: np.random.Generator
                        ) -> tuple[onnx.ModelProto, dict[str, np.ndarray]]:
        node = p.node
        if any(a.type in (onnx.AttributeProto.GRAPH, onnx.AttributeProto.GRAPHS) for a in node.attribute):
            raise UnsupportedOpError(node.op_type, p.name, "cost profile (subgraph attribute)")
        inits, inputs, feeds = [], [], {}
        for name in dict.fromkeys(i for i in node.input if i):
            t = types.get(name)
            if t is None:
                raise ModelError(f"input {name!r} of node {p.name!r} has no static shape")
            if name in consts:
                v = consts[name]
                if v is None or (v.size > SMALL_CONSTANT and v.dtype.kind == "f"):
                    v = _random_like(t, rng)
                inits.append(numpy_helper.from_array(np.asarray(v), name))
                continue
            dtype = np.dtype(helper.tensor_dtype_to_np_dtype(t.elem_type))
            v = values.get(name) if dtype.kind != "f" else None  # floats: positive random data
            if v is None:
                if dtype.kind != "f":
                    raise ModelError(f"no value for integer input {name!r} of node {p.name!r}")
                v = _random_like(t, rng)
            feeds[name] = np.asarray(v, dtype=dtype)
            inputs.append(helper.make_tensor_value_info(name, t.elem_type, t.shape))
        outputs = [helper.make_tensor_value_info(o, types[o].elem_type, None) for o in node.output if o]
        graph = helper.make_graph([node], f"profile_{node.op_type}", inputs, outputs, inits)
        one = helper.make_model(graph, opset_imports=list(model.opset_import), ir_version=model.ir_version)
        one.functions.extend(model.functions)
        return one, feeds

    def _time(self, model: onnx.ModelProto, p: _Probe, types: dict[str, TensorType], consts: dict,
              values: dict[str, np.ndarray]) -> tuple[float, int]:
        from remc import runtime
        rng = np.random.default_rng(self.seed)
        one, feeds = self._one_node_model(model, p, types, consts, values, rng)
        try:
            sess = runtime.make_session(one, self.device)
            self.sessions_built += 1
            run = runtime.Runner(sess, feeds, self.device)
            for _ in range(self.warmup):
                run()
            times: list[float] = []
            stop = time.perf_counter() + self.time_cap
            for _ in range(max(self.repeats, 1)):
                t0 = time.perf_counter()
                run()
                times.append(time.perf_counter() - t0)
                if time.perf_counter() > stop:
                    break
        except RuntimeFailure as exc:
            raise RuntimeFailure(f"profiling node {p.name!r} ({p.node.op_type}) on {self.device}: {exc}") from exc
        return float(np.median(times)), len(times)


def node_costs(model: onnx.ModelProto, method: str = "flops", *, device: str = "cpu",
               cache_dir: str | Path | None = None, repeats: int = 10, time_cap: float = 1.0,
               base_dir: str | None = None) -> dict[str, float]:
    """Cost of every node, keyed by node name (``node_keys``): FLOPs (``method="flops"``) or seconds
    measured alone on ``device`` (``method="profile"``), every one > 0. See the module docstring.

    ``repeats``: timed runs per signature (median), stopped early once ``time_cap`` seconds are spent;
    ``cache_dir``: where the profile table lives (default ``~/.cache/remc/costs``); ``base_dir``: where
    external-data initializers live, for the real values of small constants.
    """
    if method == "flops":
        return flop_costs(model)
    if method == "profile":
        return ProfileCosts(device, cache_dir=cache_dir, repeats=repeats, time_cap=time_cap,
                            base_dir=base_dir).apply(model)
    raise ValueError(f"unknown cost method {method!r}: expected 'flops' or 'profile'")
