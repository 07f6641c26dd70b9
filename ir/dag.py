"""The scheduling DAG: what every strategy sees of a training graph.

Nodes v_0..v_{n-1} are scheduling units numbered in a topological order (the paper's v_1..v_n, here
0-based). Each unit has a compute cost C_v, the bytes M_v of its scheduled outputs (outputs that are
graph outputs kept to the end are counted apart, in K_v), and a workspace W_v: bytes that exist only while
the unit runs (its internal temporaries and dead outputs). The constant overhead holds the graph inputs and
parameters (the paper's M_input + M_param). K_v: the bytes of the graph outputs unit v produces (parameter
gradients, the loss), held from v's first computation to the end of the schedule, as the device holds them;
the paper counts them in the constant from the start (U_init = M_input + 2 M_param), which on a training
graph over-counts every stage before the gradients exist (``kept_at``).

Units marked ``no_recompute`` (random ops such as Dropout) are computed exactly once: every strategy must
keep their outputs resident from their frontier stage until their last use.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

import numpy as np


def _unique_rows(e: np.ndarray) -> np.ndarray:
    """``np.unique(e, axis=0)`` of an (m, 2) array of non-negative int64 indices: its distinct rows, sorted. (np.unique
    imports numpy.ma on its first call, 0.01-0.03 s of `remc solve`'s start.)"""
    if e.min() < 0:
        return np.unique(e, axis=0)
    width = int(e.max()) + 1
    key = np.sort(e[:, 0] * width + e[:, 1])
    key = key[np.concatenate(([True], key[1:] != key[:-1]))]
    return np.stack([key // width, key % width], axis=1)


@dataclass(frozen=True, eq=False)
class DAG:
    """A scheduling problem instance (G, C, M, W, constant overhead)."""

    names: tuple[str, ...]
    """Unique unit names, in topological order."""
    cost: np.ndarray
    """float64[n]: C_v, compute cost of each unit (FLOPs or seconds)."""
    mem: np.ndarray
    """int64[n]: M_v, bytes of each unit's scheduled outputs."""
    edges: np.ndarray
    """int64[m, 2]: dependency edges (i, j), i < j, no duplicates, sorted."""
    constant: int = 0
    """Bytes always resident: graph inputs, parameters (and graph outputs no unit produces)."""
    workspace: np.ndarray = None  # type: ignore[assignment]  # an array after __post_init__
    """int64[n]: W_v, transient bytes while v runs; zeros when None."""
    backward: np.ndarray = None  # type: ignore[assignment]
    """bool[n]: True for backward units (gradient computation); all False when None."""
    no_recompute: np.ndarray = None  # type: ignore[assignment]
    """bool[n]: units that must be computed exactly once (random ops); all False when None."""
    ops: tuple[str, ...] | None = None
    """Optional human-readable op summary per unit (e.g. 'Conv' or 'Conv+Relu')."""
    members: tuple[tuple[str, ...], ...] | None = None
    """Optional: the ONNX node names each unit stands for, in execution order (one each when fine)."""
    meta: dict = field(default_factory=dict)
    kept: np.ndarray = None  # type: ignore[assignment]
    """int64[n]: K_v, bytes of the graph outputs unit v produces, held from its first computation to the end;
    zeros when None."""
    kept_first: np.ndarray = None  # type: ignore[assignment]
    """int64[n]: the bytes of K_v held at the peak of v's first computation (its outputs produced so far there,
    ``passes.dagbuild.unit_peak``), at most K_v: that computation holds M_v + W_v + kept_first[v]; K_v when
    None (all of it, an upper bound)."""

    def __post_init__(self) -> None:
        n = len(self.names)
        object.__setattr__(self, "cost", np.asarray(self.cost, dtype=np.float64).reshape(n))
        object.__setattr__(self, "mem", np.asarray(self.mem, dtype=np.int64).reshape(n))
        e = np.asarray(self.edges, dtype=np.int64).reshape(-1, 2)
        if len(e):
            if np.any(e[:, 0] >= e[:, 1]):
                bad = e[np.argmax(e[:, 0] >= e[:, 1])]
                raise ValueError(f"edge {tuple(bad)} does not follow the topological numbering")
            e = _unique_rows(e)
        object.__setattr__(self, "edges", e)
        for name, dtype in (("workspace", np.int64), ("backward", bool), ("no_recompute", bool), ("kept", np.int64)):
            v = getattr(self, name)
            v = np.zeros(n, dtype=dtype) if v is None else np.asarray(v, dtype=dtype).reshape(n)
            object.__setattr__(self, name, v)
        kf = self.kept if self.kept_first is None else np.asarray(self.kept_first, dtype=np.int64).reshape(n)
        if np.any(kf > self.kept) or np.any(kf < 0):
            raise ValueError("kept_first must lie between 0 and kept")
        object.__setattr__(self, "kept_first", kf)
        if len(set(self.names)) != n:
            raise ValueError("unit names must be unique")

    @property
    def n(self) -> int:
        return len(self.names)

    @cached_property
    def preds(self) -> tuple[np.ndarray, ...]:
        """preds[k]: sorted parents of k (the paper's DEPS[k])."""
        return _group(self.edges[:, 1], self.edges[:, 0], self.n)

    @cached_property
    def succs(self) -> tuple[np.ndarray, ...]:
        """succs[i]: sorted children of i (the paper's USERS[i])."""
        return _group(self.edges[:, 0], self.edges[:, 1], self.n)

    @cached_property
    def last_use(self) -> np.ndarray:
        """int64[n]: index of the last user of each unit, or the unit itself when it has none."""
        last = np.arange(self.n, dtype=np.int64)
        if len(self.edges):
            np.maximum.at(last, self.edges[:, 0], self.edges[:, 1])
        return last

    def index(self, name: str) -> int:
        return self._index[name]

    @cached_property
    def _index(self) -> dict[str, int]:
        return {nm: i for i, nm in enumerate(self.names)}

    @cached_property
    def kept_before(self) -> np.ndarray:
        """int64[n]: bytes of kept outputs held when stage t starts, sum of K_u for u < t (every schedule first
        computes unit u in stage u: R[t, t] = 1 and R[t, i] = 0 for i > t)."""
        return np.concatenate([[0], np.cumsum(self.kept)[:-1]]).astype(np.int64) if self.n else \
            np.zeros(0, np.int64)

    def fixed_at(self, t: int, k: int) -> int:
        """Bytes held beside the scheduled registers while unit k runs in stage t: the constant and the kept
        outputs of the units computed before (at k = t, what unit t's first computation holds of its own)."""
        return int(self.constant + self.kept_before[t] + (self.kept_first[t] if k == t else 0))

    def kept_from_start(self) -> DAG:
        """The same problem with the kept outputs in the constant, held from the start (the paper's U_init; a
        training loop whose outputs are buffers bound before each step)."""
        import dataclasses
        return dataclasses.replace(self, constant=int(self.constant + self.kept.sum()),
                                   kept=np.zeros(self.n, dtype=np.int64), kept_first=np.zeros(self.n, dtype=np.int64))

    @property
    def total_cost(self) -> float:
        """Cost of computing every unit once (checkpoint all; the ideal no-overhead cost)."""
        return float(self.cost.sum())

    def forward_cost(self) -> float:
        return float(self.cost[~self.backward].sum())

    def scaled(self, batch_factor: float) -> DAG:
        """The same graph with activation memory and workspace scaled (for batch-size searches)."""
        return DAG(self.names, self.cost, np.round(self.mem * batch_factor).astype(np.int64), self.edges,
                   self.constant, np.round(self.workspace * batch_factor).astype(np.int64), self.backward,
                   self.no_recompute, self.ops, self.members, dict(self.meta), self.kept, self.kept_first)


def _group(keys: np.ndarray, vals: np.ndarray, n: int) -> tuple[np.ndarray, ...]:
    order = np.lexsort((vals, keys))
    keys, vals = keys[order], vals[order]
    bounds = np.searchsorted(keys, np.arange(n + 1))
    return tuple(vals[bounds[i]:bounds[i + 1]] for i in range(n))
