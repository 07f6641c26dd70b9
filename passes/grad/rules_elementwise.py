"""Gradient rules of elementwise ops: arithmetic with broadcasting, activations, Softmax, Where, Cast."""
from __future__ import annotations

import math

import numpy as np

from .registry import RuleContext, rule


def _unb(ctx: RuleContext, g: str, k: int) -> str:
    """``g`` (shaped like output 0) reduced to the shape of input ``k``."""
    return ctx.unbroadcast(g, ctx.shape(ctx.y[0]), ctx.shape(ctx.x[k]))


def _zero(ctx: RuleContext) -> str:
    return ctx.scalar(0.0, ctx.y[0])


# ---- arithmetic ---------------------------------------------------------------------------------
@rule("Add")
def add_grad(ctx: RuleContext, dys: list) -> list:
    dy = dys[0]
    return [_unb(ctx, dy, k) if ctx.need(k) else None for k in range(2)]


@rule("Sub")
def sub_grad(ctx: RuleContext, dys: list) -> list:
    dy = dys[0]
    da = _unb(ctx, dy, 0) if ctx.need(0) else None
    db = ctx.op("Neg", _unb(ctx, dy, 1)) if ctx.need(1) else None
    return [da, db]


@rule("Mul")
def mul_grad(ctx: RuleContext, dys: list) -> list:
    dy, (a, b) = dys[0], ctx.x
    da = _unb(ctx, ctx.op("Mul", dy, b), 0) if ctx.need(0) else None
    db = _unb(ctx, ctx.op("Mul", dy, a), 1) if ctx.need(1) else None
    return [da, db]


@rule("Div")
def div_grad(ctx: RuleContext, dys: list) -> list:
    dy, b, y = dys[0], ctx.x[1], ctx.y[0]
    da = _unb(ctx, ctx.op("Div", dy, b), 0) if ctx.need(0) else None
    db = None
    if ctx.need(1):  # d(a/b)/db = -y/b
        db = _unb(ctx, ctx.op("Neg", ctx.op("Mul", dy, ctx.op("Div", y, b))), 1)
    return [da, db]


@rule("Pow")
def pow_grad(ctx: RuleContext, dys: list) -> list:
    dy, (a, b), y = dys[0], ctx.x, ctx.y[0]
    da = db = None
    if ctx.need(0):
        if b in ctx.consts and ctx.consts[b].size == 1:
            e = float(ctx.consts[b].reshape(()))
            da_local = ctx.op("Mul", ctx.op("Pow", a, ctx.const_like(np.asarray(e - 1.0), b)), ctx.scalar(e, a))
        else:  # b * a^(b-1), in a's dtype
            bm1 = ctx.op("Sub", b, ctx.scalar(1.0, b))
            da_local = ctx.op("Mul", ctx.op("Pow", a, bm1), _cast_to(ctx, b, a))
        da = _unb(ctx, ctx.op("Mul", dy, da_local), 0)
    if ctx.need(1):  # y * ln(a)
        db = _unb(ctx, ctx.op("Mul", dy, ctx.op("Mul", y, ctx.op("Log", a))), 1)
    return [da, db]


def _cast_to(ctx: RuleContext, v: str, like: str) -> str:
    return v if ctx.dtype(v) == ctx.dtype(like) else ctx.op("Cast", v, to=ctx.dtype(like))


@rule("Sum")
def sum_grad(ctx: RuleContext, dys: list) -> list:
    return [_unb(ctx, dys[0], k) if ctx.need(k) else None for k in range(len(ctx.x))]


@rule("Mean")
def mean_grad(ctx: RuleContext, dys: list) -> list:
    g = ctx.op("Mul", dys[0], ctx.scalar(1.0 / len(ctx.x), ctx.y[0]))
    return [_unb(ctx, g, k) if ctx.need(k) else None for k in range(len(ctx.x))]


@rule("Neg")
def neg_grad(ctx: RuleContext, dys: list) -> list:
    return [ctx.op("Neg", dys[0])]


@rule("Identity")
def identity_grad(ctx: RuleContext, dys: list) -> list:
    return [dys[0]]


@rule("Cast", "CastLike", inputs=(0,))
def cast_grad(ctx: RuleContext, dys: list) -> list:
    dy, x, y = dys[0], ctx.x[0], ctx.y[0]  # dy has y's dtype
    g = dy if ctx.dtype(x) == ctx.dtype(y) else ctx.op("Cast", dy, to=ctx.dtype(x))
    return [g] + [None] * (len(ctx.x) - 1)


# ---- unary math -------------------------------------------------------------------------------
@rule("Exp")
def exp_grad(ctx: RuleContext, dys: list) -> list:
    return [ctx.op("Mul", dys[0], ctx.y[0])]


@rule("Log")
def log_grad(ctx: RuleContext, dys: list) -> list:
    return [ctx.op("Div", dys[0], ctx.x[0])]


@rule("Sqrt")
def sqrt_grad(ctx: RuleContext, dys: list) -> list:  # 1 / (2 sqrt(x))
    return [ctx.op("Div", ctx.op("Mul", dys[0], ctx.scalar(0.5, ctx.y[0])), ctx.y[0])]


@rule("Reciprocal")
def reciprocal_grad(ctx: RuleContext, dys: list) -> list:  # -1/x^2 = -y^2
    y = ctx.y[0]
    return [ctx.op("Neg", ctx.op("Mul", dys[0], ctx.op("Mul", y, y)))]


@rule("Abs")
def abs_grad(ctx: RuleContext, dys: list) -> list:
    return [ctx.op("Mul", dys[0], ctx.op("Sign", ctx.x[0]))]


@rule("Erf")
def erf_grad(ctx: RuleContext, dys: list) -> list:  # 2/sqrt(pi) exp(-x^2)
    x = ctx.x[0]
    e = ctx.op("Exp", ctx.op("Neg", ctx.op("Mul", x, x)))
    return [ctx.op("Mul", dys[0], ctx.op("Mul", e, ctx.scalar(2.0 / math.sqrt(math.pi), x)))]


@rule("Sin")
def sin_grad(ctx: RuleContext, dys: list) -> list:
    return [ctx.op("Mul", dys[0], ctx.op("Cos", ctx.x[0]))]


@rule("Cos")
def cos_grad(ctx: RuleContext, dys: list) -> list:
    return [ctx.op("Neg", ctx.op("Mul", dys[0], ctx.op("Sin", ctx.x[0])))]


@rule("Tan")
def tan_grad(ctx: RuleContext, dys: list) -> list:  # 1 + y^2
    y = ctx.y[0]
    return [ctx.op("Mul", dys[0], ctx.op("Add", ctx.scalar(1.0, y), ctx.op("Mul", y, y)))]


@rule("Atan")
def atan_grad(ctx: RuleContext, dys: list) -> list:  # 1 / (1 + x^2)
    x = ctx.x[0]
    return [ctx.op("Div", dys[0], ctx.op("Add", ctx.scalar(1.0, x), ctx.op("Mul", x, x)))]


@rule("Asin", "Acos")
def asin_acos_grad(ctx: RuleContext, dys: list) -> list:  # +-1 / sqrt(1 - x^2)
    x = ctx.x[0]
    g = ctx.op("Div", dys[0], ctx.op("Sqrt", ctx.op("Sub", ctx.scalar(1.0, x), ctx.op("Mul", x, x))))
    return [g if ctx.node.op_type == "Asin" else ctx.op("Neg", g)]


@rule("Sinh")
def sinh_grad(ctx: RuleContext, dys: list) -> list:
    return [ctx.op("Mul", dys[0], ctx.op("Cosh", ctx.x[0]))]


@rule("Cosh")
def cosh_grad(ctx: RuleContext, dys: list) -> list:
    return [ctx.op("Mul", dys[0], ctx.op("Sinh", ctx.x[0]))]


# ---- activations ------------------------------------------------------------------------------
@rule("Relu")
def relu_grad(ctx: RuleContext, dys: list) -> list:  # the output decides: y > 0 iff x > 0
    y = ctx.y[0]
    return [ctx.op("Where", ctx.op("Greater", y, _zero(ctx)), dys[0], _zero(ctx))]


@rule("LeakyRelu")
def leaky_relu_grad(ctx: RuleContext, dys: list) -> list:
    alpha = float(ctx.attr("alpha", 0.01))
    probe = ctx.y[0] if alpha > 0 else ctx.x[0]
    pos = ctx.op("Greater", probe, _zero(ctx))
    return [ctx.op("Where", pos, dys[0], ctx.op("Mul", dys[0], ctx.scalar(alpha, ctx.y[0])))]


@rule("PRelu")
def prelu_grad(ctx: RuleContext, dys: list) -> list:  # y = x (x > 0), slope x (x <= 0)
    (x, slope), dy = ctx.x, dys[0]
    pos = ctx.op("Greater", x, _zero(ctx))
    dx = ctx.op("Where", pos, dy, ctx.op("Mul", dy, slope)) if ctx.need(0) else None
    ds = _unb(ctx, ctx.op("Where", pos, _zero(ctx), ctx.op("Mul", dy, x)), 1) if ctx.need(1) else None
    return [dx, ds]


@rule("Elu")
def elu_grad(ctx: RuleContext, dys: list) -> list:  # x <= 0: y + alpha
    alpha, (x,), y = float(ctx.attr("alpha", 1.0)), ctx.x, ctx.y[0]
    neg = ctx.op("Mul", dys[0], ctx.op("Add", y, ctx.scalar(alpha, y)))
    return [ctx.op("Where", ctx.op("Greater", x, _zero(ctx)), dys[0], neg)]


@rule("Selu")
def selu_grad(ctx: RuleContext, dys: list) -> list:  # x > 0: gamma; else gamma alpha e^x = y + gamma alpha
    alpha = float(ctx.attr("alpha", 1.67326319217681884765625))
    gamma = float(ctx.attr("gamma", 1.05070102214813232421875))
    (x,), y = ctx.x, ctx.y[0]
    neg = ctx.op("Mul", dys[0], ctx.op("Add", y, ctx.scalar(gamma * alpha, y)))
    return [ctx.op("Where", ctx.op("Greater", x, _zero(ctx)), ctx.op("Mul", dys[0], ctx.scalar(gamma, y)), neg)]


@rule("Celu")
def celu_grad(ctx: RuleContext, dys: list) -> list:  # x > 0: 1; else e^(x/alpha) = y / alpha + 1
    alpha, (x,), y = float(ctx.attr("alpha", 1.0)), ctx.x, ctx.y[0]
    neg = ctx.op("Mul", dys[0], ctx.op("Add", ctx.op("Mul", y, ctx.scalar(1.0 / alpha, y)), ctx.scalar(1.0, y)))
    return [ctx.op("Where", ctx.op("Greater", x, _zero(ctx)), dys[0], neg)]


@rule("Sigmoid")
def sigmoid_grad(ctx: RuleContext, dys: list) -> list:  # y (1 - y)
    y = ctx.y[0]
    return [ctx.op("Mul", dys[0], ctx.op("Mul", y, ctx.op("Sub", ctx.scalar(1.0, y), y)))]


@rule("Tanh")
def tanh_grad(ctx: RuleContext, dys: list) -> list:  # 1 - y^2
    y = ctx.y[0]
    return [ctx.op("Mul", dys[0], ctx.op("Sub", ctx.scalar(1.0, y), ctx.op("Mul", y, y)))]


@rule("Softplus")
def softplus_grad(ctx: RuleContext, dys: list) -> list:
    return [ctx.op("Mul", dys[0], ctx.op("Sigmoid", ctx.x[0]))]


@rule("HardSigmoid")
def hard_sigmoid_grad(ctx: RuleContext, dys: list) -> list:  # alpha where 0 < alpha x + beta < 1
    alpha, beta, x = float(ctx.attr("alpha", 0.2)), float(ctx.attr("beta", 0.5)), ctx.x[0]
    t = ctx.op("Add", ctx.op("Mul", x, ctx.scalar(alpha, x)), ctx.scalar(beta, x))
    inside = ctx.op("And", ctx.op("Greater", t, _zero(ctx)), ctx.op("Less", t, ctx.scalar(1.0, x)))
    return [ctx.op("Where", inside, ctx.op("Mul", dys[0], ctx.scalar(alpha, x)), _zero(ctx))]


@rule("HardSwish")
def hard_swish_grad(ctx: RuleContext, dys: list) -> list:  # x<-3: 0, x>3: 1, else (2x+3)/6
    x = ctx.x[0]
    mid = ctx.op("Add", ctx.op("Mul", x, ctx.scalar(1 / 3, x)), ctx.scalar(0.5, x))
    g = ctx.op("Where", ctx.op("Greater", x, ctx.scalar(3.0, x)), ctx.scalar(1.0, x), mid)
    g = ctx.op("Where", ctx.op("Less", x, ctx.scalar(-3.0, x)), _zero(ctx), g)
    return [ctx.op("Mul", dys[0], g)]


@rule("Clip", inputs=(0,))
def clip_grad(ctx: RuleContext, dys: list) -> list:
    """Gradient passes where min <= x <= max (torch's convention at the bounds)."""
    x = ctx.x[0]
    keep = None
    for k, op in ((1, "GreaterOrEqual"), (2, "LessOrEqual")):
        if k < len(ctx.x) and ctx.x[k]:
            cond = ctx.op(op, x, ctx.x[k])
            keep = cond if keep is None else ctx.op("And", keep, cond)
    if keep is None:
        return [dys[0]] + [None] * (len(ctx.x) - 1)
    return [ctx.op("Where", keep, dys[0], _zero(ctx))] + [None] * (len(ctx.x) - 1)


@rule("Gelu")
def gelu_grad(ctx: RuleContext, dys: list) -> list:
    x, dy = ctx.x[0], dys[0]
    c = lambda v: ctx.scalar(v, x)  # noqa: E731
    if ctx.attr("approximate", "none") == "tanh":
        # y = x/2 (1 + t), t = tanh(u), u = k (x + a x^3), k = sqrt(2/pi), a = 0.044715
        # y' = (1 + t)/2 + x/2 (1 - t^2) k (1 + 3 a x^2)
        k, a = math.sqrt(2.0 / math.pi), 0.044715
        x2 = ctx.op("Mul", x, x)
        u = ctx.op("Mul", ctx.op("Mul", x, ctx.op("Add", c(1.0), ctx.op("Mul", x2, c(a)))), c(k))
        t = ctx.op("Tanh", u)
        du = ctx.op("Mul", ctx.op("Add", c(1.0), ctx.op("Mul", x2, c(3 * a))), c(k))
        sech2 = ctx.op("Sub", c(1.0), ctx.op("Mul", t, t))
        g = ctx.op("Add", ctx.op("Mul", ctx.op("Add", c(1.0), t), c(0.5)),
                   ctx.op("Mul", ctx.op("Mul", ctx.op("Mul", x, c(0.5)), sech2), du))
    else:
        # y = x Phi(x): y' = Phi(x) + x phi(x)
        cdf = ctx.op("Mul", ctx.op("Add", c(1.0), ctx.op("Erf", ctx.op("Mul", x, c(1 / math.sqrt(2))))), c(0.5))
        pdf = ctx.op("Mul", ctx.op("Exp", ctx.op("Mul", ctx.op("Mul", x, x), c(-0.5))),
                     c(1 / math.sqrt(2 * math.pi)))
        g = ctx.op("Add", cdf, ctx.op("Mul", x, pdf))
    return [ctx.op("Mul", dy, g)]


# ---- softmax ------------------------------------------------------------------------------------
@rule("Softmax")
def softmax_grad(ctx: RuleContext, dys: list) -> list:  # y (dy - sum(dy y))
    axis, y, dy = int(ctx.attr("axis", -1)), ctx.y[0], dys[0]
    s = ctx.em.reduce_sum(ctx.op("Mul", dy, y), [axis], keepdims=True)
    return [ctx.op("Mul", y, ctx.op("Sub", dy, s))]


@rule("LogSoftmax")
def log_softmax_grad(ctx: RuleContext, dys: list) -> list:  # dy - exp(y) sum(dy)
    axis, y, dy = int(ctx.attr("axis", -1)), ctx.y[0], dys[0]
    s = ctx.em.reduce_sum(dy, [axis], keepdims=True)
    return [ctx.op("Sub", dy, ctx.op("Mul", ctx.op("Exp", y), s))]


# ---- selection ----------------------------------------------------------------------------------
@rule("Where", inputs=(1, 2))
def where_grad(ctx: RuleContext, dys: list) -> list:
    cond, dy = ctx.x[0], dys[0]
    da = _unb(ctx, ctx.op("Where", cond, dy, _zero(ctx)), 1) if ctx.need(1) else None
    db = _unb(ctx, ctx.op("Where", cond, _zero(ctx), dy), 2) if ctx.need(2) else None
    return [None, da, db]


@rule("Max", "Min")
def minmax_grad(ctx: RuleContext, dys: list) -> list:
    """Each input gets the gradient where it equals the result (ties: every tied input, as ONNX Runtime
    training does; exact ties have measure zero for real inputs)."""
    y, dy = ctx.y[0], dys[0]
    out: list[str | None] = []
    for k, x in enumerate(ctx.x):
        if not ctx.need(k):
            out.append(None)
            continue
        g = ctx.op("Where", ctx.op("Equal", x, y), dy, _zero(ctx))
        out.append(_unb(ctx, g, k))
    return out
