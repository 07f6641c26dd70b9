"""Gradient rules of layer ops: Conv, ConvTranspose, Gemm, MatMul, pooling, normalization, Dropout, Resize.

Formulas (checked by finite differences on ONNX Runtime CPU, tests/test_grad.py):

- Conv: dX = ConvTranspose(dY, W) with the forward's strides, pads, dilations and group, and
  output_padding restoring the input size (asymmetric pads: the smaller pad on both sides, then a Slice,
  since onnxruntime's CUDA provider leaves a ConvTranspose with asymmetric pads to the CPU); dW = Conv(X', dY') with strides and dilations swapped, where
  X' puts channels first (per group: [C/g, g*N, ...]) and dY' is dY with N and M swapped, sliced to the
  kernel size and transposed back; dB = ReduceSum(dY).
- ConvTranspose is Conv's adjoint: dX = Conv(dY, W, same geometry); dW is Conv's dW with dY as input.
- MaxPool: dX = ScatterElements(zeros, Indices, dY, reduction="add") on the flattened input.
- AveragePool and Resize are separable linear maps; their adjoints are MatMuls with constant per-axis
  matrices built at build time (integer nearest upsampling: Reshape + ReduceSum instead).
- BatchNormalization, InstanceNormalization (both decomposed in the forward, see forward.py) and
  LayerNormalization:
  dX = invstd * (dX̂ - mean(dX̂) - X̂ mean(dX̂ X̂)), with dX̂ = dY * scale.
"""
from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from .emit import Emitter
from .registry import RuleContext, rule


# ---- geometry -----------------------------------------------------------------------------------
def _ints(ctx: RuleContext, name: str, n: int, default: int) -> list[int]:
    v = ctx.attr(name)
    return [int(a) for a in v] if v else [default] * n


def resolve_pads(ctx: RuleContext, in_sp: Sequence[int], out_sp: Sequence[int], k: Sequence[int],
                 s: Sequence[int], d: Sequence[int]) -> tuple[list[int], list[int]]:
    """Explicit (begin, end) pads of a Conv/pool node, auto_pad resolved with the static shapes."""
    n = len(in_sp)
    auto = ctx.attr("auto_pad", "NOTSET")
    if auto in ("NOTSET", ""):
        pads = _ints(ctx, "pads", 2 * n, 0)
        return pads[:n], pads[n:]
    if auto == "VALID":
        return [0] * n, [0] * n
    begin, end = [], []
    for i in range(n):
        total = max(0, (out_sp[i] - 1) * s[i] + (k[i] - 1) * d[i] + 1 - in_sp[i])
        small, big = total // 2, total - total // 2
        begin.append(small if auto == "SAME_UPPER" else big)
        end.append(big if auto == "SAME_UPPER" else small)
    return begin, end


def conv_weight_grad(em: Emitter, inp: str, gout: str, in_shape: Sequence[int], gout_shape: Sequence[int],
                     k: Sequence[int], s: Sequence[int], d: Sequence[int], pb: Sequence[int],
                     pe: Sequence[int], group: int) -> str:
    """dW of Y = Conv(inp, W) given gout = dY: shape [M, C/group, *k]."""
    n_, c = in_shape[:2]
    sp, osp = list(in_shape[2:]), list(gout_shape[2:])
    n = len(sp)
    rest = list(range(2, 2 + n))
    if group == 1:
        xt = em.transpose(inp, [1, 0] + rest)
    else:
        cg = c // group
        xr = em.reshape(inp, [n_, group, cg] + sp)
        xt = em.transpose(xr, [2, 1, 0] + [a + 1 for a in rest])
        xt = em.reshape(xt, [cg, group * n_] + sp)
    gt = em.transpose(gout, [1, 0] + rest)
    r = em.op("Conv", xt, gt, strides=list(d), dilations=list(s), pads=list(pb) + list(pe), group=group,
              kernel_shape=osp)
    kk = [(sp[i] + pb[i] + pe[i] - ((osp[i] - 1) * s[i] + 1)) // d[i] + 1 for i in range(n)]
    if kk != list(k):
        r = em.slice(r, [0] * n, list(k), rest)
    return em.transpose(r, [1, 0] + rest)


@rule("Conv")
def conv_grad(ctx: RuleContext, dys: list) -> list:
    x, w = ctx.x[:2]
    dy = dys[0]
    xs, ws, ys = ctx.shape(x), ctx.shape(w), ctx.shape(ctx.y[0])
    n = len(xs) - 2
    k = list(ws[2:])
    s, d, g = _ints(ctx, "strides", n, 1), _ints(ctx, "dilations", n, 1), int(ctx.attr("group", 1))
    pb, pe = resolve_pads(ctx, xs[2:], ys[2:], k, s, d)
    out: list[str | None] = [None] * len(ctx.x)
    if ctx.need(0):
        opad = [xs[2 + i] - ((ys[2 + i] - 1) * s[i] + (k[i] - 1) * d[i] + 1 - pb[i] - pe[i]) for i in range(n)]
        # Symmetric pads, then a Slice for the rest: onnxruntime's CUDA provider does not take a
        # ConvTranspose with asymmetric pads (it would leave the node to the CPU).
        m = [min(a, b) for a, b in zip(pb, pe)]
        dx = ctx.op("ConvTranspose", dy, w, strides=s, dilations=d, pads=m + m, group=g, kernel_shape=k,
                    output_padding=opad if any(opad) else None)
        if m != list(pb) or m != list(pe):
            lo = [a - b for a, b in zip(pb, m)]
            dx = ctx.em.slice(dx, lo, [lo[i] + xs[2 + i] for i in range(n)], list(range(2, 2 + n)))
        out[0] = dx
    if ctx.need(1):
        out[1] = conv_weight_grad(ctx.em, x, dy, xs, ys, k, s, d, pb, pe, g)
    if len(ctx.x) > 2 and ctx.need(2):
        out[2] = ctx.em.reduce_sum(dy, [0] + list(range(2, 2 + n)), keepdims=False)
    return out


def _conv_transpose_pads(ctx: RuleContext, xs, ys, k, s, d) -> tuple[list[int], list[int], list[int]]:
    """Explicit (begin, end, output_padding) of a ConvTranspose node."""
    n = len(xs) - 2
    opad = _ints(ctx, "output_padding", n, 0)
    auto = ctx.attr("auto_pad", "NOTSET")
    if auto in ("NOTSET", "") and not ctx.attr("output_shape"):
        pads = _ints(ctx, "pads", 2 * n, 0)
        return pads[:n], pads[n:], opad
    if auto == "VALID":
        return [0] * n, [0] * n, opad
    begin, end = [], []
    for i in range(n):
        total = s[i] * (xs[2 + i] - 1) + opad[i] + (k[i] - 1) * d[i] + 1 - ys[2 + i]
        small, big = total // 2, total - total // 2
        begin.append(small if auto == "SAME_UPPER" else big)  # the spec's split; output_shape: like SAME_LOWER
        end.append(big if auto == "SAME_UPPER" else small)
    return begin, end, opad


@rule("ConvTranspose")
def conv_transpose_grad(ctx: RuleContext, dys: list) -> list:
    x, w = ctx.x[:2]
    dy = dys[0]
    xs, ws, ys = ctx.shape(x), ctx.shape(w), ctx.shape(ctx.y[0])
    n = len(xs) - 2
    k = list(ws[2:])
    s, d, g = _ints(ctx, "strides", n, 1), _ints(ctx, "dilations", n, 1), int(ctx.attr("group", 1))
    pb, pe, _ = _conv_transpose_pads(ctx, xs, ys, k, s, d)
    if min(pb + pe) < 0:
        raise ctx.unsupported("negative pads")
    out: list[str | None] = [None] * len(ctx.x)
    if ctx.need(0):
        out[0] = ctx.op("Conv", dy, w, strides=s, dilations=d, pads=pb + pe, group=g, kernel_shape=k)
    if ctx.need(1):
        out[1] = conv_weight_grad(ctx.em, dy, x, ys, xs, k, s, d, pb, pe, g)
    if len(ctx.x) > 2 and ctx.need(2):
        out[2] = ctx.em.reduce_sum(dy, [0] + list(range(2, 2 + n)), keepdims=False)
    return out


# ---- dense --------------------------------------------------------------------------------------
@rule("Gemm")
def gemm_grad(ctx: RuleContext, dys: list) -> list:
    """Y = alpha A' B' + beta C with A' = A or Aᵀ, B' = B or Bᵀ."""
    a, b = ctx.x[:2]
    dy = dys[0]
    alpha, beta = float(ctx.attr("alpha", 1.0)), float(ctx.attr("beta", 1.0))
    ta, tb = int(ctx.attr("transA", 0)), int(ctx.attr("transB", 0))
    al = None if alpha == 1.0 else alpha
    out: list[str | None] = [None] * len(ctx.x)
    if ctx.need(0):  # dA' = alpha dY B'ᵀ; dA = dA'ᵀ when transA
        out[0] = (ctx.op("Gemm", b, dy, alpha=al, transA=tb or None, transB=1) if ta
                  else ctx.op("Gemm", dy, b, alpha=al, transB=None if tb else 1))
    if ctx.need(1):  # dB' = alpha A'ᵀ dY; dB = dB'ᵀ when transB
        out[1] = (ctx.op("Gemm", dy, a, alpha=al, transA=1, transB=ta or None) if tb
                  else ctx.op("Gemm", a, dy, alpha=al, transA=None if ta else 1))
    if len(ctx.x) > 2 and ctx.x[2] and ctx.need(2):
        g = dy if beta == 1.0 else ctx.op("Mul", dy, ctx.scalar(beta, ctx.y[0]))
        out[2] = ctx.unbroadcast(g, ctx.shape(ctx.y[0]), ctx.shape(ctx.x[2]))
    return out


def _swap_last(em: Emitter, v: str, rank: int) -> str:
    return em.transpose(v, list(range(rank - 2)) + [rank - 1, rank - 2])


@rule("MatMul")
def matmul_grad(ctx: RuleContext, dys: list) -> list:
    """Batched, broadcasting MatMul; 1-D operands are promoted as numpy.matmul does."""
    a, b = ctx.x
    dy = dys[0]
    as_, bs = ctx.shape(a), ctx.shape(b)
    a2 = as_ if len(as_) > 1 else (1, as_[0])
    b2 = bs if len(bs) > 1 else (bs[0], 1)
    batch = tuple(np.broadcast_shapes(a2[:-2], b2[:-2]))
    y2 = batch + (a2[-2], b2[-1])
    if ctx.shape(ctx.y[0]) != y2:
        dy = ctx.em.reshape(dy, y2)
    out: list = [None, None]
    if ctx.need(0):
        bt = _swap_last(ctx.em, b, len(bs)) if len(bs) > 1 else ctx.em.reshape(b, [1, bs[0]])
        da = ctx.unbroadcast(ctx.op("MatMul", dy, bt), batch + (a2[-2], a2[-1]), a2)
        out[0] = da if a2 == as_ else ctx.em.reshape(da, as_)
    if ctx.need(1) and len(b2) == 2 and batch:
        # B is shared by every batch entry (a weight): fold the batch dims into the contraction,
        # dB = A^T dY over (prod(batch) * M) rows, instead of one (K, N) product per entry summed after
        rows = int(np.prod(batch)) * a2[-2]
        a_rows = ctx.em.reshape(a, [rows, a2[-1]])
        db = ctx.op("MatMul", ctx.em.transpose(a_rows, [1, 0]), ctx.em.reshape(dy, [rows, b2[-1]]))
        out[1] = db if b2 == bs else ctx.em.reshape(db, bs)
    elif ctx.need(1):
        at = _swap_last(ctx.em, a, len(as_)) if len(as_) > 1 else ctx.em.reshape(a, [as_[0], 1])
        db = ctx.unbroadcast(ctx.op("MatMul", at, dy), batch + (b2[-2], b2[-1]), b2)
        out[1] = db if b2 == bs else ctx.em.reshape(db, bs)
    return out


# ---- pooling ------------------------------------------------------------------------------------
@rule("MaxPool", inputs=(0,), outputs=(0,))
def max_pool_grad(ctx: RuleContext, dys: list) -> list:
    """Scatter-add dY at the argmax positions the forward's Indices output recorded."""
    x, ind = ctx.x[0], ctx.y[1]
    xs = list(ctx.shape(x))
    flat_y = ctx.em.reshape(dys[0], [-1])
    flat_i = ctx.em.reshape(ind, [-1])
    zeros = ctx.em.zeros([int(np.prod(xs))], ctx.dtype(x))
    acc = ctx.op("ScatterElements", zeros, flat_i, flat_y, axis=0, reduction="add")
    if int(ctx.attr("storage_order", 0)) == 0:
        return [ctx.em.reshape(acc, xs)]
    if len(xs) != 4:
        raise ctx.unsupported("storage_order=1 with other than 2 spatial axes")
    acc = ctx.em.reshape(acc, xs[:2] + [xs[3], xs[2]])
    return [ctx.em.transpose(acc, [0, 1, 3, 2])]


def avg_pool_matrix(length: int, out: int, k: int, s: int, d: int, pb: int, pe: int,
                    include_pad: bool) -> np.ndarray:
    """[out, length] averaging weights of one axis (ONNX Runtime's divisor: the window clipped to the
    padded extent with count_include_pad, the in-bounds taps without)."""
    a = np.zeros((out, length))
    for o in range(out):
        start = o * s - pb
        end = min(start + (k - 1) * d + 1, length + pe)
        taps = [start + j * d for j in range(k) if start + j * d < end]
        inside = [t for t in taps if 0 <= t < length]
        div = len(taps) if include_pad else len(inside)
        for t in inside:
            a[o, t] += 1.0 / div
    return a


def apply_adjoint(ctx: RuleContext, g: str, gshape: Sequence[int], mats: dict[int, np.ndarray],
                  like: str) -> str:
    """dX from dY for Y = X with matrix A[out, in] applied along each axis: dX = Aᵀ along each axis."""
    r = len(gshape)
    for a, m in sorted(mats.items()):
        if a == r - 1:
            g = ctx.op("MatMul", g, ctx.const_like(m, like))
        elif a == r - 2:
            g = ctx.op("MatMul", ctx.const_like(m.T, like), g)
        else:
            perm = [i for i in range(r) if i != a] + [a]
            g = ctx.op("MatMul", ctx.em.transpose(g, perm), ctx.const_like(m, like))
            g = ctx.em.transpose(g, list(np.argsort(perm)))
    return g


@rule("AveragePool")
def average_pool_grad(ctx: RuleContext, dys: list) -> list:
    x = ctx.x[0]
    xs, ys = ctx.shape(x), ctx.shape(ctx.y[0])
    n = len(xs) - 2
    k = _ints(ctx, "kernel_shape", n, 1)
    s, d = _ints(ctx, "strides", n, 1), _ints(ctx, "dilations", n, 1)
    pb, pe = resolve_pads(ctx, xs[2:], ys[2:], k, s, d)
    inc = bool(ctx.attr("count_include_pad", 0))
    mats = {2 + i: avg_pool_matrix(xs[2 + i], ys[2 + i], k[i], s[i], d[i], pb[i], pe[i], inc) for i in range(n)}
    return [apply_adjoint(ctx, dys[0], ys, mats, x)]


@rule("GlobalAveragePool")
def global_average_pool_grad(ctx: RuleContext, dys: list) -> list:
    xs = ctx.shape(ctx.x[0])
    g = ctx.op("Mul", dys[0], ctx.scalar(1.0 / int(np.prod(xs[2:])), ctx.x[0]))
    return [ctx.op("Expand", g, ctx.em.ints(xs))]


# ---- normalization ------------------------------------------------------------------------------
@rule("BatchNormalization", inputs=(0, 1, 2))
def batch_norm_grad(ctx: RuleContext, dys: list) -> list:
    """Training-mode BN (batch statistics), from the decomposition's saved x̂, 1/σ and reshaped scale."""
    if any(dy is not None for dy in dys[1:]):
        raise ctx.unsupported("gradient through the running statistics outputs")
    r = len(ctx.shape(ctx.x[0]))
    return _decomposed_norm_grad(ctx, dys[0], [0] + list(range(2, r)))


@rule("InstanceNormalization", inputs=(0, 1, 2))
def instance_norm_grad(ctx: RuleContext, dys: list) -> list:
    """Like BN's, with statistics per sample (over the spatial axes only)."""
    return _decomposed_norm_grad(ctx, dys[0], list(range(2, len(ctx.shape(ctx.x[0])))))


def _decomposed_norm_grad(ctx: RuleContext, dy: str, axes: list[int]) -> list:
    """dX = scale·invstd·(dY − mean(dY) − x̂·mean(dY·x̂)), the means over the statistics' ``axes``; dScale and
    dBias sum over every axis but the channel (1), from the decomposition's saved x̂, 1/σ and reshaped scale."""
    x = ctx.x[0]
    xs = ctx.shape(x)
    c = xs[1]
    count = int(np.prod([xs[a] for a in axes]))
    rest = [0] + list(range(2, len(xs)))  # every axis but the channel
    xhat, invstd, scale_r = ctx.saved["xhat"], ctx.saved["invstd"], ctx.saved["scale"]
    out: list = [None] * len(ctx.x)
    sum_dy = ctx.em.reduce_sum(dy, axes, keepdims=True) if ctx.need(0) or ctx.need(2) else None
    dyx = ctx.op("Mul", dy, xhat) if ctx.need(0) or ctx.need(1) else None
    sum_dyx = ctx.em.reduce_sum(dyx, axes, keepdims=True) if dyx is not None else None
    if ctx.need(1):
        assert sum_dyx is not None and dyx is not None
        out[1] = ctx.em.reshape(sum_dyx if axes == rest else ctx.em.reduce_sum(dyx, rest, keepdims=True), [c])
    if ctx.need(2):
        assert sum_dy is not None
        out[2] = ctx.em.reshape(sum_dy if axes == rest else ctx.em.reduce_sum(dy, rest, keepdims=True), [c])
    if ctx.need(0):
        assert sum_dy is not None and sum_dyx is not None
        inv_m = ctx.scalar(1.0 / count, x)
        t = ctx.op("Sub", dy, ctx.op("Mul", sum_dy, inv_m))
        t = ctx.op("Sub", t, ctx.op("Mul", xhat, ctx.op("Mul", sum_dyx, inv_m)))
        out[0] = ctx.op("Mul", t, ctx.op("Mul", scale_r, invstd))
    return out


@rule("LayerNormalization")
def layer_norm_grad(ctx: RuleContext, dys: list) -> list:
    """From the forward's Mean and InvStdDev outputs (the forward lowering makes sure they exist)."""
    if any(dy is not None for dy in dys[1:]):
        raise ctx.unsupported("gradient through the Mean/InvStdDev outputs")
    x, scale = ctx.x[:2]
    dy = dys[0]
    xs = ctx.shape(x)
    r = len(xs)
    axes = list(range(int(ctx.attr("axis", -1)) % r, r))
    mean, invstd = ctx.y[1], ctx.y[2]
    if ctx.dtype(mean) != ctx.dtype(x):
        mean, invstd = (ctx.op("Cast", v, to=ctx.dtype(x)) for v in (mean, invstd))
    xhat = ctx.op("Mul", ctx.op("Sub", x, mean), invstd)
    out: list = [None] * len(ctx.x)
    if ctx.need(1):
        out[1] = ctx.unbroadcast(ctx.op("Mul", dy, xhat), xs, ctx.shape(scale))
    if len(ctx.x) > 2 and ctx.x[2] and ctx.need(2):
        out[2] = ctx.unbroadcast(dy, xs, ctx.shape(ctx.x[2]))
    if ctx.need(0):
        dxhat = ctx.op("Mul", dy, scale)
        m1 = ctx.em.reduce_mean(dxhat, axes, keepdims=True)
        m2 = ctx.em.reduce_mean(ctx.op("Mul", dxhat, xhat), axes, keepdims=True)
        t = ctx.op("Sub", ctx.op("Sub", dxhat, m1), ctx.op("Mul", xhat, m2))
        out[0] = ctx.op("Mul", t, invstd)
    return out


# ---- dropout ------------------------------------------------------------------------------------
@rule("Dropout", inputs=(0,), outputs=(0,))
def dropout_grad(ctx: RuleContext, dys: list) -> list:
    """dX = dY * mask / (1 - ratio), with the mask the forward drew (never a new draw)."""
    ratio = float(np.asarray(ctx.value_or(1, 0.5, "ratio")).reshape(()))
    mask = ctx.y[1]
    scaled = ctx.op("Mul", dys[0], ctx.scalar(1.0 / (1.0 - ratio), ctx.x[0])) if ratio else dys[0]
    return [ctx.op("Where", mask, scaled, ctx.scalar(0.0, ctx.x[0]))] + [None] * (len(ctx.x) - 1)


# ---- resize -------------------------------------------------------------------------------------
def _source_coordinate(mode: str, x: np.ndarray, scale: float, length: int, out: int) -> np.ndarray:
    """ONNX Resize's coordinate_transformation_mode: output coordinate -> input coordinate."""
    if mode == "half_pixel":
        return (x + 0.5) / scale - 0.5
    if mode == "half_pixel_symmetric":
        adjustment = out / (scale * length)
        center = length / 2
        return center * (1 - adjustment) + (x + 0.5) / scale - 0.5
    if mode == "pytorch_half_pixel":
        return (x + 0.5) / scale - 0.5 if out > 1 else np.zeros_like(x)
    if mode == "align_corners":
        return x * (length - 1) / (out - 1) if out > 1 else np.zeros_like(x)
    if mode == "asymmetric":
        return x / scale
    raise ValueError(mode)


def _nearest(mode: str, c: np.ndarray) -> np.ndarray:
    if mode == "round_prefer_floor":
        return np.ceil(c - 0.5)
    if mode == "round_prefer_ceil":
        return np.floor(c + 0.5)
    if mode == "floor":
        return np.floor(c)
    if mode == "ceil":
        return np.ceil(c)
    raise ValueError(mode)


def _cubic_weights(t: float, a: float) -> np.ndarray:
    """Keys cubic weights of the 4 taps at offsets -1, 0, 1, 2 for fractional position t."""
    def w(u: float) -> float:
        u = abs(u)
        if u <= 1:
            return ((a + 2) * u - (a + 3)) * u * u + 1
        if u < 2:
            return ((a * u - 5 * a) * u + 8 * a) * u - 4 * a
        return 0.0
    return np.array([w(t + 1), w(t), w(1 - t), w(2 - t)])


def resize_matrix(length: int, out: int, scale: float, mode: str, ctm: str, nearest_mode: str,
                  cubic_a: float, exclude_outside: bool) -> np.ndarray:
    """[out, length] interpolation weights of one axis of ONNX Resize."""
    a = np.zeros((out, length))
    coords = _source_coordinate(ctm, np.arange(out, dtype=np.float64), scale, length, out)
    for o, c in enumerate(coords):
        if mode == "nearest":
            a[o, int(np.clip(_nearest(nearest_mode, np.asarray(c)), 0, length - 1))] = 1.0
        elif mode == "linear":
            c = float(np.clip(c, 0, length - 1))
            lo = int(math.floor(c))
            hi, t = min(lo + 1, length - 1), c - lo
            a[o, lo] += 1 - t
            a[o, hi] += t
        else:  # cubic
            lo = int(math.floor(c))
            w = _cubic_weights(c - lo, cubic_a)
            taps = np.arange(lo - 1, lo + 3)
            if exclude_outside:
                w = np.where((taps >= 0) & (taps < length), w, 0.0)
                w = w / w.sum()
            for t_, w_ in zip(np.clip(taps, 0, length - 1), w):
                a[o, t_] += w_
    return a


def _resize_scales(ctx: RuleContext, xs: Sequence[int], ys: Sequence[int]) -> list[float]:
    """Per-axis scale factors as Resize uses them in its coordinate transform."""
    r = len(xs)
    axes = [int(a) % r for a in (ctx.attr("axes") or range(r))]
    scales = ctx.value_or(2, None, "scales")
    full = [ys[i] / xs[i] for i in range(r)]
    if scales is not None and np.asarray(scales).size:
        for a, v in zip(axes, np.asarray(scales, dtype=np.float64).reshape(-1)):
            full[a] = float(v)
    return full


@rule("Resize", inputs=(0,))
def resize_grad(ctx: RuleContext, dys: list) -> list:
    """Nearest, linear and cubic Resize are separable linear maps; apply their transposes."""
    x = ctx.x[0]
    xs, ys = ctx.shape(x), ctx.shape(ctx.y[0])
    mode = ctx.attr("mode", "nearest")
    ctm = ctx.attr("coordinate_transformation_mode", "half_pixel")
    if ctm == "tf_crop_and_resize":
        raise ctx.unsupported("coordinate_transformation_mode=tf_crop_and_resize")
    if ctx.attr("keep_aspect_ratio_policy", "stretch") != "stretch":
        raise ctx.unsupported("keep_aspect_ratio_policy")
    scales = _resize_scales(ctx, xs, ys)
    if ctx.attr("antialias", 0) and any(s < 1 for s in scales) and mode != "nearest":
        raise ctx.unsupported("antialias=1 when downsampling")
    mats = {}
    for a in range(len(xs)):
        if xs[a] == ys[a] and scales[a] == 1.0:
            continue
        mats[a] = resize_matrix(xs[a], ys[a], scales[a], mode, ctm, ctx.attr("nearest_mode", "round_prefer_floor"),
                                float(ctx.attr("cubic_coeff_a", -0.75)), bool(ctx.attr("exclude_outside", 0)))
    rest = [None] * (len(ctx.x) - 1)
    factors = {a: ys[a] // xs[a] for a, m in mats.items()
               if ys[a] % xs[a] == 0 and np.array_equal(m, np.kron(np.eye(xs[a]), np.ones((ys[a] // xs[a], 1))))}
    g = dys[0]
    if factors:  # integer nearest upsampling: sum each block of repeats
        inter, red = [], []
        for a, dim in enumerate(ys):
            if a in factors:
                inter += [xs[a], factors[a]]
                red.append(len(inter) - 1)
            else:
                inter.append(dim)
        g = ctx.em.reduce_sum(ctx.em.reshape(g, inter), red, keepdims=False)
        mats = {a: m for a, m in mats.items() if a not in factors}
    gshape = [xs[a] if a in factors else d for a, d in enumerate(ys)]
    return [apply_adjoint(ctx, g, gshape, mats, x)] + rest


def _einsum_terms(ctx: RuleContext) -> tuple[list[str], str]:
    """Einsum's input terms and output term with '...' spelled out as letters the equation does not use;
    UnsupportedOpError for a repeated index in one term (a diagonal) or a broadcast ellipsis dimension."""
    eq = str(ctx.attr("equation")).replace(" ", "")
    lhs, _, rhs = eq.partition("->")
    terms = lhs.split(",")
    free = [c for c in "ABCDEFGHIJKLMNOPQRSTUVWXYZ" if c not in eq]
    ell_rank = max((ctx.rank(x) - len(t.replace("...", "")) for x, t in zip(ctx.x, terms) if "..." in t),
                   default=0)
    ell = "".join(free[:ell_rank])
    terms = [t.replace("...", ell[ell_rank - (ctx.rank(x) - len(t.replace("...", ""))):])
             for x, t in zip(ctx.x, terms)]
    if "->" not in eq:  # implicit output: the letters that occur once, sorted, after the ellipsis
        once = sorted(c for c in set("".join(terms)) if "".join(terms).count(c) == 1 and c not in ell)
        rhs = ell + "".join(once)
    rhs = rhs.replace("...", ell)
    sizes: dict[str, int] = {}
    for x, t in zip(ctx.x, terms):
        if len(set(t)) != len(t):
            raise ctx.unsupported(f"equation={eq!r}: a repeated index in one operand")
        for c, d in zip(t, ctx.shape(x)):
            if sizes.setdefault(c, d) != d:
                raise ctx.unsupported(f"equation={eq!r}: broadcasting index {c!r}")
    return terms, rhs


@rule("Einsum")
def einsum_grad(ctx: RuleContext, dys: list) -> list:
    """d operand k = einsum of dY with the other operands onto operand k's indices; an index of operand k
    that appears nowhere else was summed over, so its gradient is broadcast back along it."""
    terms, rhs = _einsum_terms(ctx)
    out: list = [None] * len(ctx.x)
    for k, (x, term) in enumerate(zip(ctx.x, terms)):
        if not ctx.need(k):
            continue
        others = [(ctx.x[j], t) for j, t in enumerate(terms) if j != k]
        seen = set(rhs).union(*[set(t) for _, t in others])
        kept = "".join(c for c in term if c in seen)
        eq = ",".join([rhs] + [t for _, t in others]) + "->" + kept
        g = ctx.op("Einsum", dys[0], *[v for v, _ in others], equation=eq)
        if kept != term:
            shape = ctx.shape(x)
            g = ctx.em.reshape(g, [d if c in seen else 1 for c, d in zip(term, shape)])
            g = ctx.op("Expand", g, ctx.em.ints(shape))
        out[k] = g
    return out
