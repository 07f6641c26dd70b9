"""Kernel memory measured per op signature: what a node's kernel takes from the arena beyond its outputs.

For each distinct node signature (``profile.signature``: op, attributes, input/output types, which inputs
are constants) a one-node model runs once on the device, in a session with a fresh arena
(``kSameAsRequested`` on CPU and CUDA, so every request gets a chunk of exactly its rounded size) and the
profiler on.
From the node's arena stats:

- ``prepack``: bytes in use before the node ran, i.e. what session creation put in the arena for it
  (pre-packed or transposed constant weights: MLAS' packed B of MatMul/Gemm, ConvTranspose's
  transposed filter on CPU), less the small constant inputs copied into the arena that the kernel does not
  pack (a packed one is released once packed);
- ``persistent``: bytes still in use after the node beyond its outputs (kernels that cache a buffer at
  their first run);
- ``scratch``: ``mem_in_use_peak`` above what is in use after the node: the kernel's temporary buffers
  (MLAS' convolution working buffer, per thread; cuDNN workspaces), freed before the node ends.

Results are cached on disk like profiled costs (``~/.cache/remc/costs/scratch.json``), keyed by
signature, device (CPU model and core count, or GPU name) and onnxruntime version. Thread count
changes MLAS' buffers, so it is part of the device tag.
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import onnx

from ..ir.errors import ModelError, RuntimeFailure
from ..ir.onnx_types import TensorType, node_keys, static_types
from ..passes.arena import ALIAS_OPS, PREPACKING_OPS, initializer_in_arena, rounded
from . import runtime
from .bounded import run_bounded
from .profile import (
    JsonCache,
    Predictor,
    ProfileCosts,
    _cache_key,
    _constant_values,
    _Probe,
    needs_run,
    run_groups,
    signature,
)


@dataclass(frozen=True)
class KernelMemory:
    """Arena bytes one node's kernel takes beyond its outputs (see the module docstring)."""

    scratch: int = 0
    persistent: int = 0
    prepack: int = 0
    raw: tuple[int, int, int] = (0, 0, 0)
    """The one-node run's arena bytes in use before and after the node, and its peak."""


class _Cache(JsonCache):
    """Kernel memory per signature: ``<dir>/scratch.json``."""

    def __init__(self, cache_dir: str | Path | None) -> None:
        super().__init__("scratch", cache_dir)

    def get(self, key: str) -> KernelMemory | None:
        e = self.entry(key)
        return None if e is None else KernelMemory(int(e["scratch"]), int(e["persistent"]), int(e["prepack"]),
                                                   tuple(e.get("raw", (0, 0, 0))))

    def put(self, key: str, km: KernelMemory, op: str) -> None:
        self.new[key] = {"scratch": km.scratch, "persistent": km.persistent, "prepack": km.prepack, "op": op,
                         "raw": list(km.raw)}


NO_KERNEL_MEMORY = frozenset(ALIAS_OPS | {"Shape", "Size", "Constant"})
"""Ops measured as 0 without a run (they allocate nothing beyond their output)."""


def kernel_memory(model: onnx.ModelProto, device: str = "cpu", *, cache_dir: str | Path | None = None,
                  seed: int = 0, settings: runtime.DeviceSettings = runtime.DEFAULT_SETTINGS,
                  deadline: float | None = None) -> dict[str, KernelMemory]:
    """``KernelMemory`` of every node of ``model`` measured on ``device`` (cached), keyed like ``node_keys``;
    ``settings`` (cuDNN's algorithm search) decide the workspaces and are part of the cache key.

    ``deadline`` (a ``time.perf_counter()`` value): signatures are measured smallest tensors first, each when
    its predicted time fits, and those left get no entry (``unmeasured_kernels`` counts them; the arena
    replay then models no kernel memory for them)."""
    return _kernel_memory(model, device, cache_dir=cache_dir, seed=seed, settings=settings, deadline=deadline)[0]


def unmeasured_kernels(model: onnx.ModelProto, device: str = "cpu", *, cache_dir: str | Path | None = None,
                       seed: int = 0, settings: runtime.DeviceSettings = runtime.DEFAULT_SETTINGS,
                       deadline: float | None = None) -> tuple[dict[str, KernelMemory], int, int]:
    """(``kernel_memory``'s table, signatures left unmeasured at ``deadline``, signatures in all)."""
    return _kernel_memory(model, device, cache_dir=cache_dir, seed=seed, settings=settings, deadline=deadline)


def _kernel_memory(model: onnx.ModelProto, device: str, *, cache_dir: str | Path | None, seed: int,
                   settings: runtime.DeviceSettings, deadline: float | None
                   ) -> tuple[dict[str, KernelMemory], int, int]:
    prof = ProfileCosts(device, cache_dir=cache_dir, seed=seed, settings=settings)
    cache = _Cache(cache_dir)
    types = static_types(model)
    consts = _constant_values(model, None)
    keys = node_keys(model)
    node_key: dict[str, str] = {}
    probes: dict[str, _Probe] = {}
    size: dict[str, int] = {}
    for name, node in zip(keys, model.graph.node):
        if node.op_type in NO_KERNEL_MEMORY:
            continue
        k = "mem:" + _cache_key(signature(model, node, types, set(consts)), device, settings)
        node_key[name] = k
        if cache.get(k) is None and k not in probes:
            probes[k] = _Probe(k, node, name)
            size[k] = sum(types[x].nbytes for x in list(node.input) + list(node.output) if x and x in types)
    # with a deadline, smallest tensors first, each started only when its predicted time (``Predictor``: the
    # fixed cost plus its bytes times the largest rate seen) fits: one batch-256 convolution takes 15 s loaded
    order = sorted(probes.values(), key=lambda p: size[p.key] if deadline is not None else -size[p.key])
    left, pred = len(order), Predictor()

    def out_of_time(p: _Probe | None = None) -> bool:
        ahead = 0.0 if p is None else pred(size[p.key])
        return deadline is not None and time.perf_counter() + ahead >= deadline

    start = time.perf_counter()

    def work(emit) -> None:
        for gi, group in enumerate(run_groups(model, order, types, consts)):
            # the second group needs a run of the graph up to its integer inputs (at batch 256 a ResNet50
            # forward to its MaxPool, ~20 s loaded): under a deadline only with the time used so far left
            if out_of_time() or (gi and deadline is not None and needs_run(model, group[0], types, consts)
                                 and 2 * time.perf_counter() - start >= deadline):
                break
            values = prof._original_values(model, group, types, consts)
            for p in group:
                if out_of_time(p):
                    continue
                t0 = time.perf_counter()
                emit((p.key, _measure(prof, model, p, types, consts, values, device), p.node.op_type))
                pred.add(size[p.key], time.perf_counter() - t0)

    def put(item: tuple) -> None:
        nonlocal left
        cache.put(*item)
        left -= 1

    try:
        # under a deadline in a child process that is killed at it: one batch-256 run cannot be stopped
        if order:
            run_bounded(work, put, deadline)
    finally:
        cache.save()
    return {name: cache.get(k) or KernelMemory() for name, k in node_key.items()}, left, len(set(node_key.values()))


def _measure(prof: ProfileCosts, model: onnx.ModelProto, p: _Probe, types: dict[str, TensorType], consts: dict,
             values: dict[str, np.ndarray], device: str) -> KernelMemory:
    rng = np.random.default_rng(prof.seed)
    one, feeds = prof._one_node_model(model, p, types, consts, values, rng)
    try:
        # kSameAsRequested: every request gets a chunk of exactly its rounded size, so the stats are requests
        events = runtime._profile_events(one, device, feeds, mem_limit=1 << 46, arena_extend="kSameAsRequested",
                                         settings=prof.settings)
    except RuntimeFailure as exc:
        raise RuntimeFailure(f"measuring the kernel memory of node {p.name!r} ({p.node.op_type}) on {device}: "
                             f"{exc}") from exc
    stats = [e["args"] for e in events if "mem_in_use_peak" in e.get("args", {})]
    if not stats:
        raise RuntimeFailure(f"onnxruntime on {device} writes no arena stats in its profile: cannot measure "
                             "kernel memory")
    a = stats[0]
    after = int(a["mem_bytes_in_use"])
    before = after - int(a["mem_in_use_delta"])
    outs = sum(rounded(types[o].nbytes) for o in p.node.output if o and types[o].nbytes)
    packed = p.node.input[1] if p.node.op_type in PREPACKING_OPS and len(p.node.input) > 1 else None
    copied = sum(types[i].nbytes for i in dict.fromkeys(p.node.input)
                 if i in consts and i != packed and initializer_in_arena(types[i].nbytes, device))
    cuda = device.startswith("cuda")  # no pre-packing there: 'before' holds the node's initializers
    return KernelMemory(scratch=max(0, int(a["mem_in_use_peak"]) - after),
                        persistent=max(0, after - before - outs), prepack=0 if cuda else max(0, before - copied),
                        raw=(before, after, int(a["mem_in_use_peak"])))


def scratch_table(model: onnx.ModelProto, device: str = "cpu", **kw) -> dict[str, KernelMemory]:
    """Alias of ``kernel_memory`` (the name the driver uses)."""
    return kernel_memory(model, device, **kw)


__all__ = ["KernelMemory", "kernel_memory", "unmeasured_kernels", "scratch_table", "ModelError"]
