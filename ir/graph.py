"""The graph IR: SSA values, nodes and a graph in a topological order.

Values compare by identity; the graph owns the use lists (``value.uses`` holds ``Use(node, index)``).
Every value has a static shape and a dtype, so every value has a byte size. Names are the ONNX names;
they are unique within a graph.
"""
from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
import onnx


class Use(NamedTuple):
    """The ``index``-th input of ``node``."""

    node: Node
    index: int  # type: ignore[assignment]  # shadows tuple.index, on purpose: Use(node, index)


class Value:
    """An SSA value: a graph input, a parameter (initializer) or a node output."""

    __slots__ = ("name", "shape", "dtype", "producer", "uses", "kind")

    def __init__(self, name: str, shape: tuple[int, ...], dtype: np.dtype, kind: str,
                 producer: Node | None = None) -> None:
        self.name = name
        self.shape = tuple(int(d) for d in shape)
        self.dtype = np.dtype(dtype)
        self.kind = kind
        """'input' (graph input), 'param' (initializer) or 'activation' (a node output)."""
        self.producer = producer
        self.uses: list[Use] = []

    @property
    def nbytes(self) -> int:
        return math.prod(self.shape) * self.dtype.itemsize  # (np.prod: 60 us a call; 157k calls grouping swin_t)

    def __repr__(self) -> str:
        return f"Value({self.name!r}, {self.shape}, {self.dtype})"


class Node:
    """One ONNX operator application."""

    __slots__ = ("name", "op_type", "domain", "attributes", "inputs", "outputs", "proto")

    def __init__(self, name: str, op_type: str, domain: str, inputs: list[Value | None],
                 outputs: list[Value], proto: onnx.NodeProto) -> None:
        self.name = name
        self.op_type = op_type
        self.domain = domain
        self.inputs = inputs
        self.outputs = outputs
        self.proto = proto
        """The source NodeProto (attributes, output/input names including empty optional slots)."""
        self.attributes = {a.name: onnx.helper.get_attribute_value(a) for a in proto.attribute}

    def __repr__(self) -> str:
        return f"Node({self.name!r}, {self.op_type})"


@dataclass(eq=False)
class Graph:
    """A static-shaped ONNX graph in the IR; ``nodes`` is a topological order."""

    name: str
    nodes: list[Node]
    inputs: list[Value]
    params: list[Value]
    outputs: list[Value]
    values: dict[str, Value]
    model: onnx.ModelProto
    """The source model, without nodes (opsets, ir_version, initializers, metadata) for export."""

    def value(self, name: str) -> Value:
        return self.values[name]

    def activations(self) -> Iterator[Value]:
        for node in self.nodes:
            yield from node.outputs

    @property
    def kept(self) -> set[Value]:
        """Values kept to the end: the graph outputs (loss, parameter gradients, updated statistics)."""
        return set(self.outputs)

    def constant_bytes(self) -> int:
        """The paper's constant overhead: graph inputs, parameters and kept outputs, counted once each."""
        const = {v for v in self.inputs + self.params} | self.kept
        return sum(v.nbytes for v in const)

    def check_uses(self) -> None:
        """Assert the use lists match the node inputs (an IR invariant)."""
        for node in self.nodes:
            for i, v in enumerate(node.inputs):
                if v is not None:
                    assert Use(node, i) in v.uses, (node.name, i)
