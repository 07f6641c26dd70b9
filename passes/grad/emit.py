"""Node emission for the gradient builder: naming, constants and opset-aware helpers.

An :class:`Emitter` appends ONNX nodes to one list. Every node gets a unique name from the current
*scope* (``<scope>/<k>``), every output a unique value name, and constants become initializers shared by
value. The helpers (``reduce_sum``, ``unsqueeze``, ``split``, ...) write the form of each op that the
model's opset expects (axes as attribute or as input), so rules never look at the opset themselves.
"""
from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

FLOAT_TYPES = frozenset({TensorProto.FLOAT, TensorProto.DOUBLE, TensorProto.FLOAT16, TensorProto.BFLOAT16})


def np_dtype(elem_type: int) -> np.dtype:
    """The numpy dtype of an ONNX element type (bfloat16 computed in float32)."""
    if elem_type == TensorProto.BFLOAT16:
        return np.dtype(np.float32)
    return np.dtype(helper.tensor_dtype_to_np_dtype(elem_type))


class Names:
    """Unique node and value names for one graph."""

    def __init__(self, node_names: set[str], value_names: set[str]) -> None:
        self.nodes = set(node_names)
        self.values = set(value_names)

    @staticmethod
    def _fresh(base: str, taken: set[str]) -> str:
        name, k = base, 1
        while name in taken:
            name, k = f"{base}~{k}", k + 1
        taken.add(name)
        return name

    def node(self, base: str) -> str:
        """A node name not used yet, ``base`` when free."""
        return self._fresh(base, self.nodes)

    def value(self, base: str) -> str:
        """A value name not used yet, ``base`` when free."""
        return self._fresh(base, self.values)


class Emitter:
    """Appends nodes named ``<scope>/<k>`` and shared constant initializers."""

    def __init__(self, opset: int, names: Names, const_prefix: str = "remc.const") -> None:
        self.opset = opset
        self.names = names
        self.nodes: list[onnx.NodeProto] = []
        self.initializers: list[TensorProto] = []
        self._consts: dict[tuple, str] = {}
        self._const_prefix = const_prefix
        self._scope = "remc"
        self._counter: dict[str, int] = {}

    # ---- naming -----------------------------------------------------------------------------
    @contextmanager
    def scope(self, scope: str) -> Iterator[None]:
        """Name the nodes emitted inside the block ``<scope>/<k>``."""
        old, self._scope = self._scope, scope
        try:
            yield
        finally:
            self._scope = old

    def _next_name(self, hint: str | None) -> str:
        if hint is not None:
            return self.names.node(f"{self._scope}/{hint}")
        k = self._counter.get(self._scope, 0)
        while f"{self._scope}/{k}" in self.names.nodes:
            k += 1
        self._counter[self._scope] = k + 1
        return self.names.node(f"{self._scope}/{k}")

    # ---- nodes ------------------------------------------------------------------------------
    def op(self, op_type: str, *inputs: str, name: str | None = None, out: str | None = None,
           node_name: str | None = None, **attrs: Any) -> str:
        """Emit a one-output node and return its output name (``out`` when given)."""
        return self.op_n(op_type, list(inputs), 1, name=name, outs=None if out is None else [out],
                         node_name=node_name, **attrs)[0]

    def op_n(self, op_type: str, inputs: Sequence[str], n_out: int, *, name: str | None = None,
             outs: Sequence[str] | None = None, node_name: str | None = None, **attrs: Any) -> list[str]:
        """Emit a node with ``n_out`` outputs and return their names. The node is named
        ``<scope>/<name or k>``, or exactly ``node_name`` (which the caller keeps unique)."""
        node_name = node_name if node_name is not None else self._next_name(name)
        if outs is None:
            outs = [self.names.value(node_name if n_out == 1 else f"{node_name}:{j}") for j in range(n_out)]
        else:
            outs = list(outs)
            for o in outs:
                if o:
                    self.names.values.add(o)
        attrs = {k: v for k, v in attrs.items() if v is not None}
        self.nodes.append(helper.make_node(op_type, list(inputs), outs, name=node_name, **attrs))
        return outs

    def add_node(self, node: onnx.NodeProto) -> None:
        """Append an existing node unchanged (its names must already be reserved)."""
        self.nodes.append(node)

    # ---- constants --------------------------------------------------------------------------
    def const(self, value: np.ndarray | float | int | Sequence, dtype: np.dtype | int | None = None) -> str:
        """A constant initializer holding ``value`` (int lists become int64), shared by value."""
        if isinstance(dtype, int):
            dtype = np_dtype(dtype)
        arr = np.asarray(value, dtype=dtype)
        if arr.dtype == np.int32 and dtype is None:
            arr = arr.astype(np.int64)
        key = (arr.dtype.str, arr.shape, arr.tobytes())
        name = self._consts.get(key)
        if name is None:
            name = self.names.value(f"{self._const_prefix}.{len(self._consts)}")
            self._consts[key] = name
            self.initializers.append(numpy_helper.from_array(arr, name))
        return name

    def ints(self, values: Sequence[int]) -> str:
        """A 1-D int64 constant."""
        return self.const(np.asarray(list(values), dtype=np.int64).reshape(-1))

    def scalar(self, value: float, elem_type: int) -> str:
        """A rank-0 constant of ONNX element type ``elem_type``."""
        return self.const(np.asarray(value, dtype=np_dtype(elem_type)))

    # ---- opset-aware helpers ----------------------------------------------------------------
    def reduce(self, op_type: str, x: str, axes: Sequence[int] | None, keepdims: bool) -> str:
        """ReduceSum/ReduceMean/... over ``axes`` (all axes when None)."""
        axes_as_input = op_type == "ReduceSum" and self.opset >= 13 or self.opset >= 18
        if axes is None:
            return self.op(op_type, x, keepdims=int(keepdims))
        if axes_as_input:
            return self.op(op_type, x, self.ints(axes), keepdims=int(keepdims))
        return self.op(op_type, x, axes=list(axes), keepdims=int(keepdims))

    def reduce_sum(self, x: str, axes: Sequence[int] | None, keepdims: bool = True) -> str:
        """ReduceSum over ``axes``."""
        return self.reduce("ReduceSum", x, axes, keepdims)

    def reduce_mean(self, x: str, axes: Sequence[int] | None, keepdims: bool = True) -> str:
        """ReduceMean over ``axes``."""
        return self.reduce("ReduceMean", x, axes, keepdims)

    def reshape(self, x: str, shape: Sequence[int]) -> str:
        """Reshape to a static ``shape``."""
        return self.op("Reshape", x, self.ints(shape))

    def transpose(self, x: str, perm: Sequence[int]) -> str:
        """Transpose with ``perm`` (no node for the identity permutation)."""
        if list(perm) == list(range(len(perm))):
            return x
        return self.op("Transpose", x, perm=list(perm))

    def unsqueeze(self, x: str, axes: Sequence[int]) -> str:
        """Unsqueeze (axes as input, opset >= 13)."""
        return self.op("Unsqueeze", x, self.ints(axes))

    def split(self, x: str, sizes: Sequence[int], axis: int) -> list[str]:
        """Split along ``axis`` into pieces of ``sizes`` (split as input, opset >= 13)."""
        return self.op_n("Split", [x, self.ints(sizes)], len(sizes), axis=axis)

    def slice(self, x: str, starts: Sequence[int], ends: Sequence[int], axes: Sequence[int],
              steps: Sequence[int] | None = None) -> str:
        """Slice with static starts/ends/axes/steps."""
        ins = [x, self.ints(starts), self.ints(ends), self.ints(axes)]
        if steps is not None:
            ins.append(self.ints(steps))
        return self.op("Slice", *ins)

    def pad(self, x: str, pads: Sequence[int]) -> str:
        """Zero padding with ONNX ``pads`` (all begins then all ends)."""
        return self.op("Pad", x, self.ints(pads), mode="constant")

    def zeros(self, shape: Sequence[int], elem_type: int) -> str:
        """A zero tensor made at run time (ConstantOfShape), so no large constant is stored."""
        value = numpy_helper.from_array(np.zeros(1, dtype=np_dtype(elem_type)))
        if elem_type == TensorProto.BFLOAT16:
            value = helper.make_tensor("value", TensorProto.BFLOAT16, [1], [0.0])
        return self.op("ConstantOfShape", self.ints(shape), value=value)

    def sum(self, terms: Sequence[str]) -> str:
        """The sum of ``terms`` (the term itself when there is one)."""
        if len(terms) == 1:
            return terms[0]
        if len(terms) == 2:
            return self.op("Add", *terms)
        return self.op("Sum", *terms)
