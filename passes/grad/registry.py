"""Gradient rules: registration and the context a rule works in.

A rule is a function ``rule(ctx, dys) -> dxs``: ``dys`` holds the gradient of the loss with respect to
each output of the forward node (None where no gradient flows), and the rule returns one entry per
input: the name of the gradient value, or None where the input needs none (``ctx.need(i)`` is False)
or the gradient is zero. Rules emit standard ONNX ops only, through ``ctx`` (an Emitter scoped to
``<forward node>/grad``), and read static shapes, dtypes and known constant values from it.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import onnx
from onnx import helper

from remc.ir.errors import ModelError, UnsupportedOpError

from .emit import Emitter, np_dtype

Rule = Callable[["RuleContext", list], list]


@dataclass(frozen=True)
class RuleSpec:
    """A registered gradient rule and the input/output slots gradients flow through."""

    op_type: str
    fn: Rule
    inputs: tuple[int, ...] | None
    """Differentiable input slots (None: all)."""
    outputs: tuple[int, ...] | None
    """Differentiable output slots (None: all)."""

    def diff_input(self, k: int) -> bool:
        """Whether input slot ``k`` can carry a gradient."""
        return self.inputs is None or k in self.inputs

    def diff_output(self, k: int) -> bool:
        """Whether output slot ``k`` can carry a gradient."""
        return self.outputs is None or k in self.outputs


RULES: dict[str, RuleSpec] = {}

NON_DIFFERENTIABLE = frozenset({
    "Floor", "Ceil", "Round", "Sign", "ConstantOfShape", "EyeLike", "Range", "RandomNormal", "RandomUniform",
    "RandomNormalLike", "RandomUniformLike", "Bernoulli", "Multinomial", "Shape", "Size", "ArgMax", "ArgMin",
    "Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual", "Not", "And", "Or", "Xor", "IsNaN", "IsInf",
    "NonZero", "OneHot",
})
"""Ops whose outputs never carry gradients (zero almost everywhere, or not real-valued)."""


def rule(*op_types: str, inputs: Sequence[int] | None = None,
         outputs: Sequence[int] | None = None) -> Callable[[Rule], Rule]:
    """Register the decorated function as the gradient rule of ``op_types``."""
    def deco(fn: Rule) -> Rule:
        for op in op_types:
            RULES[op] = RuleSpec(op, fn, None if inputs is None else tuple(inputs),
                                 None if outputs is None else tuple(outputs))
        return fn
    return deco


@dataclass
class RuleContext:
    """What a rule sees: the forward node, its saved values, static facts and an emitter."""

    node: onnx.NodeProto
    em: Emitter
    shapes: dict[str, tuple[int, ...]]
    dtypes: dict[str, int]
    consts: dict[str, np.ndarray]
    needs: list[bool]
    saved: dict[str, str] = field(default_factory=dict)

    # ---- the forward node -------------------------------------------------------------------
    @property
    def x(self) -> list[str]:
        """The forward node's inputs ('' for an omitted optional input)."""
        return list(self.node.input)

    @property
    def y(self) -> list[str]:
        """The forward node's outputs."""
        return list(self.node.output)

    def need(self, k: int) -> bool:
        """Whether input ``k`` needs a gradient."""
        return k < len(self.needs) and self.needs[k]

    def attr(self, name: str, default: Any = None) -> Any:
        """Attribute ``name`` of the forward node (bytes decoded to str)."""
        for a in self.node.attribute:
            if a.name == name:
                v = helper.get_attribute_value(a)
                return v.decode() if isinstance(v, bytes) else v
        return default

    def shape(self, v: str) -> tuple[int, ...]:
        """Static shape of value ``v``."""
        return self.shapes[v]

    def rank(self, v: str) -> int:
        """Rank of value ``v``."""
        return len(self.shapes[v])

    def dtype(self, v: str) -> int:
        """ONNX element type of value ``v``."""
        return self.dtypes[v]

    def value(self, v: str, what: str = "input") -> np.ndarray:
        """The known constant value of ``v``; ModelError naming the node when it is computed at run time."""
        if v in self.consts:
            return self.consts[v]
        raise ModelError(f"{self.node.op_type} node {self.node.name!r}: {what} {v!r} must be a constant "
                         f"(computed at run time here); remc needs it to build the gradient")

    def value_or(self, k: int, default: Any, what: str = "input") -> Any:
        """The constant value of input ``k``, or ``default`` when the input is omitted."""
        if k >= len(self.node.input) or not self.node.input[k]:
            return default
        return self.value(self.node.input[k], what)

    def unsupported(self, detail: str) -> UnsupportedOpError:
        """The error for a variant of the op that has no gradient rule (e.g. 'mode=reflect')."""
        return UnsupportedOpError(f"{self.node.op_type}({detail})", self.node.name)

    # ---- emission shortcuts -----------------------------------------------------------------
    def op(self, op_type: str, *inputs: str, **attrs: Any) -> str:
        """Emit a one-output node."""
        return self.em.op(op_type, *inputs, **attrs)

    def scalar(self, value: float, like: str) -> str:
        """A rank-0 constant with the dtype of value ``like``."""
        return self.em.scalar(value, self.dtypes[like])

    def const_like(self, value: np.ndarray, like: str) -> str:
        """A constant with the dtype of value ``like``."""
        return self.em.const(np.asarray(value, dtype=np_dtype(self.dtypes[like])))

    def unbroadcast(self, g: str, gshape: Sequence[int], target: Sequence[int]) -> str:
        """Sum ``g`` (shape ``gshape``) over broadcast axes so that it has shape ``target``."""
        return unbroadcast(self.em, g, gshape, target)


def unbroadcast(em: Emitter, g: str, gshape: Sequence[int], target: Sequence[int]) -> str:
    """Reduce a broadcast gradient back to the ``target`` shape of the input it flows to."""
    gshape, target = tuple(gshape), tuple(target)
    if gshape == target:
        return g
    lead = len(gshape) - len(target)
    if lead < 0:
        raise ValueError(f"cannot unbroadcast {gshape} to {target}")
    axes = list(range(lead)) + [lead + i for i, d in enumerate(target) if d == 1 and gshape[lead + i] != 1]
    if axes:
        g = em.reduce_sum(g, axes, keepdims=True)
    reduced = tuple(1 if i in axes else d for i, d in enumerate(gshape))
    return g if reduced == target else em.reshape(g, target)
