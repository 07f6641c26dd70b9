"""Gradient rules of data-movement ops: reshapes, Transpose, Concat/Split, Slice, Pad, Gather, reductions."""
from __future__ import annotations

import numpy as np
from onnx import TensorProto

from .registry import RuleContext, rule


def _reshape_back(ctx: RuleContext, dys: list) -> list:
    return [ctx.em.reshape(dys[0], ctx.shape(ctx.x[0]))] + [None] * (len(ctx.x) - 1)


rule("Reshape", inputs=(0,))(_reshape_back)
rule("Flatten", inputs=(0,))(_reshape_back)
rule("Squeeze", inputs=(0,))(_reshape_back)
rule("Unsqueeze", inputs=(0,))(_reshape_back)


@rule("Transpose")
def transpose_grad(ctx: RuleContext, dys: list) -> list:
    r = ctx.rank(ctx.x[0])
    perm = list(ctx.attr("perm", list(range(r))[::-1]))
    return [ctx.em.transpose(dys[0], list(np.argsort(perm)))]


@rule("Expand", inputs=(0,))
def expand_grad(ctx: RuleContext, dys: list) -> list:
    return [ctx.unbroadcast(dys[0], ctx.shape(ctx.y[0]), ctx.shape(ctx.x[0])), None]


@rule("Tile", inputs=(0,))
def tile_grad(ctx: RuleContext, dys: list) -> list:
    """Sum the repeats: dY reshaped to [r0, d0, r1, d1, ...], reduced over the r axes."""
    shape = ctx.shape(ctx.x[0])
    reps = [int(r) for r in ctx.value(ctx.x[1], "repeats")]
    inter = [v for r, d in zip(reps, shape) for v in (r, d)]
    g = ctx.em.reshape(dys[0], inter)
    g = ctx.em.reduce_sum(g, list(range(0, 2 * len(shape), 2)), keepdims=False)
    return [g, None]


@rule("Concat")
def concat_grad(ctx: RuleContext, dys: list) -> list:
    axis = int(ctx.attr("axis")) % ctx.rank(ctx.y[0])
    sizes = [ctx.shape(x)[axis] for x in ctx.x]
    if sum(ctx.needs) == 1:  # one slice, no Split
        k = ctx.needs.index(True)
        start = sum(sizes[:k])
        return [ctx.em.slice(dys[0], [start], [start + sizes[k]], [axis]) if i == k else None
                for i in range(len(sizes))]
    parts = ctx.em.split(dys[0], sizes, axis)
    return [p if ctx.need(k) else None for k, p in enumerate(parts)]


@rule("Split", inputs=(0,))
def split_grad(ctx: RuleContext, dys: list) -> list:
    axis = int(ctx.attr("axis", 0)) % ctx.rank(ctx.x[0])
    parts = []
    for y, dy in zip(ctx.y, dys):
        parts.append(dy if dy is not None else ctx.em.zeros(ctx.shape(y), ctx.dtype(y)))
    g = parts[0] if len(parts) == 1 else ctx.op("Concat", *parts, axis=axis)
    return [g] + [None] * (len(ctx.x) - 1)


def _slice_indices(ctx: RuleContext) -> dict[int, np.ndarray]:
    """For each sliced axis, the input positions the output takes, in output order."""
    shape = ctx.shape(ctx.x[0])
    r = len(shape)
    starts = [int(v) for v in ctx.value(ctx.x[1], "starts")]
    ends = [int(v) for v in ctx.value(ctx.x[2], "ends")]
    axes = [int(v) % r for v in ctx.value_or(3, list(range(len(starts))), "axes")]
    steps = [int(v) for v in ctx.value_or(4, [1] * len(starts), "steps")]
    out = {}
    big = np.iinfo(np.int64).max
    for a, s, e, st in zip(axes, starts, ends, steps):
        e = min(max(e, -big + 1), big)
        out[a] = np.arange(shape[a])[slice(s, e, st)]
        if len(out[a]) != ctx.shape(ctx.y[0])[a]:
            raise ValueError(f"Slice node {ctx.node.name!r}: computed {len(out[a])} positions on axis {a}, "
                             f"shape inference says {ctx.shape(ctx.y[0])[a]}")
    return out


def _scatter_axis(ctx: RuleContext, g: str, gshape: list[int], axis: int, idx: np.ndarray,
                  size: int) -> str:
    """Place ``g`` at positions ``idx`` of a zero tensor whose ``axis`` has ``size`` entries."""
    full = list(gshape)
    full[axis] = size
    ind_shape = [1] * len(gshape)
    ind_shape[axis] = len(idx)
    ind = ctx.em.const(idx.astype(np.int64).reshape(ind_shape))
    ind = ctx.op("Expand", ind, ctx.em.ints(gshape))
    zeros = ctx.em.zeros(full, ctx.dtype(ctx.y[0]))
    return ctx.op("ScatterElements", zeros, ind, g, axis=axis)


@rule("Slice", inputs=(0,))
def slice_grad(ctx: RuleContext, dys: list) -> list:
    """Zero-pad back (contiguous ascending slices) or scatter (strided or reversed ones)."""
    shape = ctx.shape(ctx.x[0])
    gshape = list(ctx.shape(ctx.y[0]))
    pads = [0] * (2 * len(shape))
    g = dys[0]
    for a, idx in sorted(_slice_indices(ctx).items()):
        if len(idx) and np.array_equal(idx, np.arange(idx[0], idx[0] + len(idx))):
            pads[a], pads[len(shape) + a] = int(idx[0]), int(shape[a] - idx[-1] - 1)
        else:
            g = _scatter_axis(ctx, g, gshape, a, idx, shape[a])
            gshape[a] = shape[a]
    if any(pads):
        g = ctx.em.pad(g, pads)
    return [g] + [None] * (len(ctx.x) - 1)


def _pad_source(mode: str, length: int, begin: int, end: int) -> np.ndarray:
    """For each output index of one axis padded by ``begin``/``end`` in ``mode`` (reflect, edge, wrap), the
    input index it copies (ONNX's definitions; reflect mirrors without repeating the edge)."""
    p = np.arange(length + begin + end) - begin
    if mode == "edge":
        return np.clip(p, 0, length - 1)
    if mode == "wrap":
        return np.mod(p, length)
    if length == 1:
        return np.zeros_like(p)
    period = 2 * (length - 1)  # reflect: 0 1 .. n-1 n-2 .. 1 0 1 ..
    q = np.mod(p, period)
    return np.where(q < length, q, period - q)


@rule("Pad", inputs=(0,))
def pad_grad(ctx: RuleContext, dys: list) -> list:
    """Constant padding: slice the padding off (and zero-pad back where the forward cropped). Reflect, edge
    and wrap: each padded axis is a 0/1 matrix copying input indices to output indices, whose adjoint
    (a MatMul per padded axis, like Resize's) adds every copy's gradient back to its source."""
    mode = ctx.attr("mode", "constant")
    if isinstance(mode, bytes):
        mode = mode.decode()
    if mode not in ("constant", "reflect", "edge", "wrap"):
        raise ctx.unsupported(f"mode={mode}")
    shape = ctx.shape(ctx.x[0])
    r = len(shape)
    raw = [int(v) for v in ctx.value(ctx.x[1], "pads")]
    axes = [int(a) % r for a in ctx.value_or(3, list(range(r)), "axes")]
    begin, end = [0] * r, [0] * r
    for i, a in enumerate(axes):
        begin[a], end[a] = raw[i], raw[len(axes) + i]
    if mode != "constant":
        from .rules_nn import apply_adjoint
        mats = {}
        for a in range(r):
            if begin[a] or end[a]:
                src = _pad_source(mode, shape[a], begin[a], end[a])
                m = np.zeros((len(src), shape[a]))
                m[np.arange(len(src)), src] = 1.0
                mats[a] = m
        return [apply_adjoint(ctx, dys[0], ctx.shape(ctx.y[0]), mats, ctx.x[0])] + [None] * (len(ctx.x) - 1)
    starts = [max(b, 0) for b in begin]
    ends = [s + d - max(-b, 0) - max(-e, 0) for s, d, b, e in zip(starts, shape, begin, end)]
    g = dys[0]
    moved = [a for a in range(r) if starts[a] != 0 or ends[a] != ctx.shape(ctx.y[0])[a]]
    if moved:
        g = ctx.em.slice(g, [starts[a] for a in moved], [ends[a] for a in moved], moved)
    back = [max(-b, 0) for b in begin] + [max(-e, 0) for e in end]
    if any(back):
        g = ctx.em.pad(g, back)
    return [g] + [None] * (len(ctx.x) - 1)


def _normalized_indices(ctx: RuleContext, ind: str, size: int) -> str:
    """Indices with negative entries wrapped (constant-folded when the indices are constant)."""
    if ind in ctx.consts:
        v = ctx.consts[ind].astype(np.int64)
        return ctx.em.const(np.where(v < 0, v + size, v))
    ind = ind if ctx.dtype(ind) == TensorProto.INT64 else ctx.op("Cast", ind, to=TensorProto.INT64)
    zero = ctx.em.const(np.asarray(0, dtype=np.int64))
    wrapped = ctx.op("Add", ind, ctx.em.const(np.asarray(size, dtype=np.int64)))
    return ctx.op("Where", ctx.op("Less", ind, zero), wrapped, ind)


@rule("Gather", inputs=(0,))
def gather_grad(ctx: RuleContext, dys: list) -> list:
    """ScatterND with reduction="add" into zeros, after moving the gathered axis to the front."""
    data, ind = ctx.x
    ds, q = list(ctx.shape(data)), ctx.rank(ind)
    r = len(ds)
    a = int(ctx.attr("axis", 0)) % r
    # dY is ds[:a] + ind.shape + ds[a+1:]; bring the index dims first
    perm = list(range(a, a + q)) + list(range(a)) + list(range(a + q, r + q - 1))
    g = ctx.em.transpose(dys[0], perm)
    idx = ctx.em.unsqueeze(_normalized_indices(ctx, ind, ds[a]), [-1]) if q else None
    if idx is None:  # a scalar index: shape [1]
        idx = ctx.em.reshape(_normalized_indices(ctx, ind, ds[a]), [1])
    zeros = ctx.em.zeros([ds[a]] + ds[:a] + ds[a + 1:], ctx.dtype(data))
    acc = ctx.op("ScatterND", zeros, idx, g, reduction="add")
    back = list(range(1, a + 1)) + [0] + list(range(a + 1, r))
    return [ctx.em.transpose(acc, back), None]


@rule("GatherElements", inputs=(0,))
def gather_elements_grad(ctx: RuleContext, dys: list) -> list:
    data, ind = ctx.x
    axis = int(ctx.attr("axis", 0)) % ctx.rank(data)
    size = ctx.shape(data)[axis]
    zeros = ctx.em.zeros(ctx.shape(data), ctx.dtype(data))
    idx = _normalized_indices(ctx, ind, size)
    return [ctx.op("ScatterElements", zeros, idx, dys[0], axis=axis, reduction="add"), None]


# ---- reductions ---------------------------------------------------------------------------------
def _reduce_axes(ctx: RuleContext) -> list[int] | None:
    """The reduced axes (None for the no-op case of empty axes with noop_with_empty_axes)."""
    r = ctx.rank(ctx.x[0])
    axes = ctx.attr("axes")
    if axes is None and len(ctx.x) > 1 and ctx.x[1]:
        axes = [int(v) for v in ctx.value(ctx.x[1], "axes")]
    if not axes:
        return None if ctx.attr("noop_with_empty_axes", 0) else list(range(r))
    return sorted(int(a) % r for a in axes)


def _spread(ctx: RuleContext, dy: str, axes: list[int]) -> str:
    """``dy`` of the reduced shape broadcast back to the input shape."""
    shape = ctx.shape(ctx.x[0])
    kept = [1 if i in axes else d for i, d in enumerate(shape)]
    if list(ctx.shape(ctx.y[0])) != kept:
        dy = ctx.em.reshape(dy, kept)
    return ctx.op("Expand", dy, ctx.em.ints(shape))


@rule("ReduceSum", "ReduceMean", inputs=(0,))
def reduce_grad(ctx: RuleContext, dys: list) -> list:
    axes = _reduce_axes(ctx)
    rest = [None] * (len(ctx.x) - 1)
    if axes is None:
        return [dys[0]] + rest
    dy = dys[0]
    if ctx.node.op_type == "ReduceMean":
        count = int(np.prod([ctx.shape(ctx.x[0])[a] for a in axes]))
        dy = ctx.op("Mul", dy, ctx.scalar(1.0 / count, ctx.y[0]))
    return [_spread(ctx, dy, axes)] + rest


@rule("ReduceSumSquare", inputs=(0,))
def reduce_sum_square_grad(ctx: RuleContext, dys: list) -> list:
    axes = _reduce_axes(ctx)
    x = ctx.x[0]
    rest = [None] * (len(ctx.x) - 1)
    if axes is None:
        raise ctx.unsupported("noop_with_empty_axes=1")
    return [ctx.op("Mul", _spread(ctx, dys[0], axes), ctx.op("Mul", x, ctx.scalar(2.0, x)))] + rest


@rule("ReduceMax", "ReduceMin", inputs=(0,))
def reduce_extreme_grad(ctx: RuleContext, dys: list) -> list:
    """The gradient is shared evenly among the elements equal to the result (``torch.amax``'s rule). Ties
    have measure zero for real inputs but not, e.g., over ReLU outputs; torch's ``max(dim).values`` gives a
    tie's whole gradient to one element instead, and both are subgradients."""
    axes = _reduce_axes(ctx)
    x, y = ctx.x[0], ctx.y[0]
    rest = [None] * (len(ctx.x) - 1)
    if axes is None:
        return [dys[0]] + rest
    hit = ctx.op("Cast", ctx.op("Equal", x, _spread(ctx, y, axes)), to=ctx.dtype(x))
    ties = ctx.em.reduce_sum(hit, axes, keepdims=True)
    kept = [1 if i in axes else d for i, d in enumerate(ctx.shape(x))]
    if list(ctx.shape(y)) != kept:
        ties = ctx.em.reshape(ties, ctx.shape(y))
    return [ctx.op("Mul", _spread(ctx, ctx.op("Div", dys[0], ties), axes), hit)] + rest


@rule("CumSum", inputs=(0,))
def cumsum_grad(ctx: RuleContext, dys: list) -> list:
    """x_j reaches every y_i that sums it: the cumulative sum of dy in the other direction, exclusive as the
    forward is."""
    axis = ctx.em.const(np.asarray(ctx.value(ctx.x[1], "axis"), dtype=np.int64))
    return [ctx.op("CumSum", dys[0], axis, exclusive=int(ctx.attr("exclusive", 0)),
                   reverse=1 - int(ctx.attr("reverse", 0))), None]


@rule("ReduceL2", inputs=(0,))
def reduce_l2_grad(ctx: RuleContext, dys: list) -> list:
    """y = sqrt(sum x^2): dx = dy x / y (torch's F.normalize and .norm(); a zero norm gives 0 there, as torch's
    norm does at 0 by its subgradient convention)."""
    axes = _reduce_axes(ctx)
    x, y = ctx.x[0], ctx.y[0]
    rest = [None] * (len(ctx.x) - 1)
    if axes is None:
        raise ctx.unsupported("noop_with_empty_axes=1")
    zero = ctx.scalar(0.0, y)
    safe = ctx.op("Where", ctx.op("Greater", y, zero), y, ctx.scalar(1.0, y))
    share = ctx.op("Where", ctx.op("Greater", y, zero), ctx.op("Div", dys[0], safe), zero)
    return [ctx.op("Mul", _spread(ctx, share, axes), x)] + rest


@rule("ReduceL1", inputs=(0,))
def reduce_l1_grad(ctx: RuleContext, dys: list) -> list:
    axes = _reduce_axes(ctx)
    x = ctx.x[0]
    rest = [None] * (len(ctx.x) - 1)
    if axes is None:
        raise ctx.unsupported("noop_with_empty_axes=1")
    return [ctx.op("Mul", _spread(ctx, dys[0], axes), ctx.op("Sign", x))] + rest


@rule("ReduceLogSumExp", inputs=(0,))
def reduce_log_sum_exp_grad(ctx: RuleContext, dys: list) -> list:
    """y = log sum e^x: dx = dy softmax(x) = dy e^(x - y) (torch.logsumexp)."""
    axes = _reduce_axes(ctx)
    x, y = ctx.x[0], ctx.y[0]
    rest = [None] * (len(ctx.x) - 1)
    if axes is None:
        return [dys[0]] + rest
    return [ctx.op("Mul", _spread(ctx, dys[0], axes), ctx.op("Exp", ctx.op("Sub", x, _spread(ctx, y, axes))))] + rest


@rule("Trilu", inputs=(0,))
def trilu_grad(ctx: RuleContext, dys: list) -> list:
    """The same triangle of dy (torch.triu / torch.tril)."""
    ins = [dys[0]] + [k for k in ctx.x[1:2] if k]
    return [ctx.op("Trilu", *ins, upper=int(ctx.attr("upper", 1)))] + [None] * (len(ctx.x) - 1)


@rule("TopK", inputs=(0,), outputs=(0,))
def topk_grad(ctx: RuleContext, dys: list) -> list:
    """dy scattered back to the selected positions (torch.topk, torch.sort values)."""
    x = ctx.x[0]
    axis = int(ctx.attr("axis", -1)) % ctx.rank(x)
    zeros = ctx.em.zeros(ctx.shape(x), ctx.dtype(x))
    return [ctx.op("ScatterElements", zeros, ctx.y[1], dys[0], axis=axis, reduction="add"), None]


@rule("ScatterND", "ScatterElements", inputs=(0, 2))
def scatter_grad(ctx: RuleContext, dys: list) -> list:
    """data's gradient is dy where nothing was written (all of dy with reduction='add'); updates' is dy read
    back at the written positions (torchvision's Swin V2 zeroes a slice of its qkv bias this way). Indices
    must not repeat without a reduction (ONNX leaves that case undefined)."""
    data, ind, upd = ctx.x
    reduction = str(ctx.attr("reduction", "none"))
    if reduction not in ("none", "add"):
        raise ctx.unsupported(f"reduction={reduction}")
    nd = ctx.node.op_type == "ScatterND"
    axis = {} if nd else {"axis": int(ctx.attr("axis", 0))}
    out: list = [None, None, None]
    if ctx.need(0):
        out[0] = dys[0] if reduction == "add" else ctx.op(
            ctx.node.op_type, dys[0], ind, ctx.em.zeros(ctx.shape(upd), ctx.dtype(upd)), **axis)
    if ctx.need(2):
        out[2] = ctx.op("GatherND" if nd else "GatherElements", dys[0], ind, **axis)
    return out


@rule("ReduceProd", inputs=(0,))
def reduce_prod_grad(ctx: RuleContext, dys: list) -> list:
    """dy times the product of the slice's other elements (torch.prod), exact with zeros: P = the product of the
    nonzero elements; a slice without zeros gives P / x, one with one zero gives P at that zero and 0 elsewhere,
    one with more zeros gives 0."""
    axes = _reduce_axes(ctx)
    x = ctx.x[0]
    rest = [None] * (len(ctx.x) - 1)
    if axes is None:
        raise ctx.unsupported("noop_with_empty_axes=1")
    one, zero = ctx.scalar(1.0, x), ctx.scalar(0.0, x)
    is_zero = ctx.op("Equal", x, zero)
    nonzero_prod = _spread(ctx, ctx.em.reduce(
        "ReduceProd", ctx.op("Where", is_zero, one, x), axes, keepdims=True), axes)
    zeros = _spread(ctx, ctx.em.reduce_sum(ctx.op("Cast", is_zero, to=ctx.dtype(x)), axes, keepdims=True), axes)
    at_zero = ctx.op("Where", ctx.op("Equal", zeros, one), nonzero_prod, zero)
    elsewhere = ctx.op("Where", ctx.op("Equal", zeros, zero), ctx.op("Div", nonzero_prod, ctx.op("Where", is_zero, one, x)),
                       zero)
    return [ctx.op("Mul", _spread(ctx, dys[0], axes), ctx.op("Where", is_zero, at_zero, elsewhere))] + rest
