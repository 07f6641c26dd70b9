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

Measured costs (``method="profile"``) are a backend: ``remc.backends.profile``.
"""
from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import onnx
from onnx import helper

from ..ir.errors import ModelError
from ..ir.onnx_types import TensorType, node_keys, static_types

__all__ = ["TensorType", "node_keys", "static_types", "flop_costs", "node_costs", "MIN_COST"]

MIN_COST = 1.0
"""Least cost of any node (seconds from profiling are floored at ``backends.profile.MIN_SECONDS``)."""
DEFAULT_FACTOR = 1.0
"""FLOPs per output element of an op the model does not know."""


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


def node_costs(model: onnx.ModelProto, method: str = "flops") -> dict[str, float]:
    """FLOP cost of every node, keyed by node name (``node_keys``), every one > 0 (see the module
    docstring). ``method`` exists so that a caller asking for anything else gets a clear error;
    measured costs are ``remc.backends.profile.profile_costs``."""
    if method == "flops":
        return flop_costs(model)
    raise ValueError(f"unknown cost method {method!r}: passes.costs computes 'flops'; "
                     "'profile' is remc.backends.profile.profile_costs")
