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

On CUDA with remc's placement (``DeviceSettings.placed``) the one-node model runs twice on remc's allocator
in record mode instead (``backends.placement.PlacedAllocator.record``, over one device buffer shared by all
probes), and the kernel's requests are kept one by one (``requests``, see ``requests_of_run``): the order of
its outputs, temporaries (with the point each is freed) and kept buffers, and which temporaries only the
first run makes. ``passes.placement`` then lays out each request with its real lifetime instead of one
scratch block of the peak: a kernel that requests 194 MB, frees it and then requests 259 MB (U-Net's
ConvTranspose gradient) gets exactly those two blocks. ``scratch``/``persistent`` are derived from them.
On CPU with remc's placement (``backends.capi``) the same requests come from two runs of a C-API session on
remc's allocator (``_measure_placed``, its ``events``), with the pre-packed weights of session creation.

Results are cached on disk like profiled costs (``~/.cache/remc/costs/scratch.json``), keyed by
signature, device (CPU model and core count, or GPU name) and onnxruntime version. Thread count
changes MLAS' buffers, so it is part of the device tag.
"""
from __future__ import annotations

import time
from collections.abc import Mapping
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
    device_tag,
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
    requests: tuple[tuple, ...] = ()
    """The kernel's requests in order (measured on remc's allocator; empty: only the peaks are known):
    ``("o", i)`` output i allocated, ``("a", bytes, first_only)`` a temporary allocated (the n-th ``"a"`` is
    temporary n; ``first_only``: 1 if later runs do not request it), ``("f", n)`` temporary n freed,
    ``("k", bytes)`` a buffer the kernel keeps from its first run on."""
    later_extra: int = 0
    """Temporaries a later run requested that the first run did not (not representable: 0 when exact)."""


class _Cache(JsonCache):
    """Kernel memory per signature: ``<dir>/scratch.json``."""

    def __init__(self, cache_dir: str | Path | None) -> None:
        super().__init__("scratch", cache_dir)

    def get(self, key: str) -> KernelMemory | None:
        e = self.entry(key)
        return None if e is None else KernelMemory(int(e["scratch"]), int(e["persistent"]), int(e["prepack"]),
                                                   tuple(e.get("raw", (0, 0, 0))),
                                                   tuple(tuple(r) for r in e.get("requests", ())),
                                                   int(e.get("later_extra", 0)))

    def slow(self, key: str) -> tuple[float, int] | None:
        """(seconds, bytes) of a measurement of ``key`` that a deadline cut short after that many seconds
        (a lower bound on its time), for a signature whose tensors are that many bytes; None if none was."""
        e = self.entry(SLOW_PREFIX + key)
        return None if e is None else (float(e["seconds"]), int(e["bytes"]))

    def put_slow(self, key: str, seconds: float, nbytes: int) -> None:
        old = self.slow(key)
        self.new[SLOW_PREFIX + key] = {"seconds": max(seconds, old[0] if old else 0.0), "bytes": int(nbytes)}

    def put(self, key: str, km: KernelMemory, op: str, seconds: float | None = None, nbytes: int | None = None) -> None:
        self.new[key] = {"scratch": km.scratch, "persistent": km.persistent, "prepack": km.prepack, "op": op,
                         "raw": list(km.raw)}
        if seconds is not None and nbytes is not None:  # what the measurement took: a later compile's prediction
            self.new[key].update(seconds=round(float(seconds), 4), bytes=int(nbytes))
        if km.requests or km.later_extra:
            self.new[key]["requests"] = [list(r) for r in km.requests]
            self.new[key]["later_extra"] = km.later_extra


SLOW_PREFIX = "cut:"
"""Cache entries of measurements a deadline cut short: ``cut:<key>`` -> {"seconds", "bytes"}."""
VALUES_PREFIX = "feeds:"
"""The key (after SLOW_PREFIX) of a group's feeds by its first signature's key: the seconds they took, or ran
before a deadline cut them (bytes -1: not a measurement, so no other signature is judged by its size). A probe
starts only where the group's feeds and its own time both fit: the probe's cut time alone left a ResNet50 b256
compile at 30 s starting the same probe after 3.4 s of feeds, every time."""

PER_OP_PREDICTION = True
"""Whether a kernel measurement's time is predicted from measurements of the same op type only (and from the
cached seconds of earlier compiles), and a cut measurement makes only larger signatures of its op type count as
slow (False: one prediction for all op types, as before session 22)."""

NO_KERNEL_MEMORY = frozenset(ALIAS_OPS | {"Shape", "Size", "Constant"})
"""Ops measured as 0 without a run (they allocate nothing beyond their output)."""

OUTPUT_ONLY_ON_CPU = frozenset(
    "Mul Transpose Add ReduceSum Sub Greater ReduceMean Relu Div Sqrt Slice Less Reciprocal HardSigmoid "
    "GlobalAveragePool Expand And ConstantOfShape ScatterElements MaxPool Sigmoid Dropout LessOrEqual "
    "GreaterOrEqual Clip Exp GatherElements".split())
"""Op types whose CPU kernels allocated nothing beyond their outputs in every measurement in the kernel-memory
cache of the development machine after sixteen sessions of zoo and torchvision compiles (at least 16 signatures
each, 4.2k in all; scratch, pre-packed or persistent bytes were seen only for Conv, ConvTranspose, Where, Sum,
Gemm, MatMul and LogSoftmax). Under a deadline on CPU they are measured after every other op, so a time limit
that cuts the measurement short leaves these unmeasured, whose rule (0) is what they measured, and not the
convolutions whose scratch a plan must hold. A torchvision EfficientNet-B0 (b8, 96 px) compiled with a 60 s limit
on a loaded machine measured 254 of 461 signatures smallest first, left most of its convolutions out of the
arena prediction, predicted 102.1 MiB within a 107.2 MiB budget and needed 123.9 MiB under ``remc run``."""


def measure_order(op_type: str, nbytes: int, device: str) -> tuple[int, int]:
    """Sort key of a signature's measurement under a deadline: on CPU the ops that may allocate beyond their
    outputs first (``OUTPUT_ONLY_ON_CPU`` last), then the smallest tensors first."""
    late = device.split(":")[0] == "cpu" and op_type in OUTPUT_ONLY_ON_CPU
    return int(late), nbytes


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
                       deadline: float | None = None, keys: dict[str, str] | None = None
                       ) -> tuple[dict[str, KernelMemory], int, int]:
    """(``kernel_memory``'s table, signatures left unmeasured at ``deadline``, signatures in all). ``keys``:
    ``kernel_keys`` of the same model, device and settings, where the caller has them (not computed again); an empty
    dict is filled with them."""
    return _kernel_memory(model, device, cache_dir=cache_dir, seed=seed, settings=settings, deadline=deadline,
                          keys=keys)


def kernel_keys(model: onnx.ModelProto, device: str = "cpu",
                settings: runtime.DeviceSettings = runtime.DEFAULT_SETTINGS,
                types: dict[str, TensorType] | None = None) -> dict[str, str]:
    """The kernel-memory cache key of each node of ``model`` that may take memory beyond its outputs (``node_keys``
    names; NO_KERNEL_MEMORY ops left out): its signature on ``device``. Shape inference and one hash per node: 0.8-1.9 s
    for ResNet50 b256 fine (2277 nodes) at a load of 7-9, which ``unmeasured_kernels`` spent on every call."""
    types = static_types(model) if types is None else types
    const_names = set(_constant_values(model, None))
    traced = settings.placed(device) and runtime.parse_device(device)[0] == "cuda"
    prefix = "req:" if traced else "mem:remc3:" if _on_remc_allocator(device, settings) else "mem:"
    tag = device_tag(device)
    return {name: prefix + _cache_key(signature(model, node, types, const_names), device, settings, tag)
            for name, node in zip(node_keys(model), model.graph.node) if node.op_type not in NO_KERNEL_MEMORY}


def _kernel_memory(model: onnx.ModelProto, device: str, *, cache_dir: str | Path | None, seed: int,
                   settings: runtime.DeviceSettings, deadline: float | None, keys: dict[str, str] | None = None
                   ) -> tuple[dict[str, KernelMemory], int, int]:
    prof = ProfileCosts(device, cache_dir=cache_dir, seed=seed, settings=settings)
    cache = _Cache(cache_dir)
    got_types: list[dict[str, TensorType]] = []

    def types_() -> dict[str, TensorType]:  # (shape inference: only where a signature is to be measured)
        if not got_types:
            got_types.append(static_types(model))
        return got_types[0]

    node_key = keys
    if not node_key:  # (an empty dict given is filled, for the caller's next call)
        node_key = kernel_keys(model, device, settings, types_())
        if keys is not None:
            keys.update(node_key)
    by_name = dict(zip(node_keys(model), model.graph.node))
    probes: dict[str, _Probe] = {}
    size: dict[str, int] = {}
    # on CUDA each request on remc's allocator, not the arena's peaks (on CPU: _measure_placed, below)
    traced = settings.placed(device) and runtime.parse_device(device)[0] == "cuda"
    for name, k in node_key.items():
        if k not in probes and cache.entry(k) is None:
            node = by_name[name]
            types = types_()
            probes[k] = _Probe(k, node, name)
            size[k] = sum(types[x].nbytes for x in list(node.input) + list(node.output) if x and x in types)
    consts = _constant_values(model, None) if probes else {}
    types = types_() if probes else {}
    # with a deadline, the ops that may allocate beyond their outputs first (``measure_order``), smallest tensors
    # first, each started only when its predicted time (``Predictor``: the
    # fixed cost plus its bytes times the largest rate seen) fits: one batch-256 convolution takes 15 s loaded
    order = sorted(probes.values(), key=lambda p: measure_order(p.node.op_type, size[p.key], device)
                   if deadline is not None else (0, -size[p.key]))
    left = len(order)
    # a measurement's seconds predicted per op type (``Predictor``), from this call's measurements and the cached
    # ones of this model's signatures (``_Cache.put``'s seconds and bytes): one op's rate says nothing of
    # another's. With one Predictor for all, ResNet50 b256's weight-gradient convolution (a 14x14 kernel over the
    # batch: 46 s loaded for 258 MB) predicted every larger signature past any deadline, its 1 GB ReLUs (1 s)
    # included: a 300 s compile's two kernel phases ended 11 and 14 s before their deadlines (PER_OP_PREDICTION)
    preds: dict[str, Predictor] = {}

    def pred_of(op: str) -> Predictor:
        return preds.setdefault(op if PER_OP_PREDICTION else "", Predictor())

    if PER_OP_PREDICTION:
        for k in set(node_key.values()) - set(probes):
            e = cache.entry(k)
            if e is not None and "seconds" in e and "bytes" in e:
                pred_of(str(e.get("op", ""))).add(int(e["bytes"]), float(e["seconds"]))
    # measurements an earlier compile's deadline cut short: a signature of the same op at least as large takes at
    # least as long (else each compile under the same limit would start the same one again, and lose it again:
    # ResNet50 b256 at 30 s measured nothing in 9 s, every time)
    cut = sorted((c[1], c[0], p.node.op_type if PER_OP_PREDICTION else "")
                 for p, c in ((p, cache.slow(p.key)) for p in order) if c is not None and c[1] >= 0)

    def at_least(op: str, nbytes: int) -> float:
        op = op if PER_OP_PREDICTION else ""
        return max((sec for b, sec, o in cut if b <= nbytes and o == op), default=0.0)

    def out_of_time(p: _Probe | None = None, before: float = 0.0) -> bool:
        op = "" if p is None else p.node.op_type
        ahead = before + (0.0 if p is None else max(pred_of(op)(size[p.key]), at_least(op, size[p.key])))
        return deadline is not None and time.perf_counter() + ahead >= deadline

    start = time.perf_counter()
    buf: _ProbeBuffer | None = _ProbeBuffer(device) if traced and order else None

    def work(emit) -> None:
        for gi, group in enumerate(run_groups(model, order, types, consts)):
            # the second group needs a run of the graph up to its integer inputs (at batch 256 a ResNet50
            # forward to its MaxPool, ~20 s loaded): under a deadline only with the time used so far left
            if out_of_time() or (gi and deadline is not None and needs_run(model, group[0], types, consts)
                                 and 2 * time.perf_counter() - start >= deadline):
                break
            feeds_key = VALUES_PREFIX + group[0].key  # the group's feeds (and the run to its integer inputs)
            feeds = cache.slow(feeds_key)  # how long they took (or ran before a deadline cut them) last time
            if deadline is not None and all(out_of_time(p, 0.0 if feeds is None else feeds[0]) for p in group):
                continue  # none of the group fits the time left after its feeds: no values for it (random feeds
                # of a ResNet50 b32 graph took 12.8 s of a 60 s compile on the H200, for probes then skipped)
            emit(("start", feeds_key, -1))
            values = prof._original_values(model, group, types, consts)
            emit(("ready",))
            for p in group:
                if out_of_time(p):
                    continue
                t0 = time.perf_counter()
                emit(("start", p.key, size[p.key]))
                km = (_measure_requests(prof, model, p, types, consts, values, device, buf) if buf is not None
                      else _measure(prof, model, p, types, consts, values, device))
                secs = time.perf_counter() - t0
                emit((p.key, km, p.node.op_type, secs, size[p.key]))
                pred_of(p.node.op_type).add(size[p.key], secs)

    running: list = []  # the measurement in progress: (key, bytes, its start)

    def put(item: tuple) -> None:
        nonlocal left
        if item[0] == "start":
            running[:] = [item[1], item[2], time.perf_counter()]
            return
        if item[0] == "ready":  # the feeds are made: their seconds, for a later compile's estimate
            if running:
                cache.put_slow(running[0], time.perf_counter() - running[2], running[1])
            running.clear()
            return
        running.clear()
        cache.put(*item)
        left -= 1

    try:
        # under a deadline on CPU in a child process that is killed at it: one batch-256 run cannot be stopped.
        # CUDA does not survive fork() once initialized: there the deadline is only checked between nodes.
        if order:
            run_bounded(work, put, None if runtime.parse_device(device)[0] == "cuda" else deadline)
        if running:  # cut short by the deadline: remembered, so a later compile with as little time skips it
            cache.put_slow(running[0], time.perf_counter() - running[2], running[1])
    finally:
        cache.save()
        if buf is not None:
            buf.release()
    table = {k: cache.get(k) or KernelMemory() for k in set(node_key.values())}
    return {name: table[k] for name, k in node_key.items()}, left, len(table)


def _on_remc_allocator(device: str, settings: runtime.DeviceSettings) -> bool:
    """Whether kernel memory on ``device`` is measured on remc's allocator (CPU with remc's placement)."""
    return device.startswith("cpu") and settings.placed(device)


def _measure(prof: ProfileCosts, model: onnx.ModelProto, p: _Probe, types: dict[str, TensorType], consts: Mapping,
             values: dict[str, np.ndarray], device: str) -> KernelMemory:
    rng = np.random.default_rng(prof.seed)
    one, feeds = prof._one_node_model(model, p, types, consts, values, rng)
    if _on_remc_allocator(device, prof.settings):
        return _measure_placed(one, feeds, p, types, consts, device, prepack=prof.settings.prepack)
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
    packed = _packed_input(p.node, prof.settings.prepack)
    copied = sum(types[i].nbytes for i in dict.fromkeys(p.node.input)
                 if i in consts and i != packed and initializer_in_arena(types[i].nbytes, device))
    cuda = device.startswith("cuda")  # no pre-packing there: 'before' holds the node's initializers
    return KernelMemory(scratch=max(0, int(a["mem_in_use_peak"]) - after),
                        persistent=max(0, after - before - outs), prepack=0 if cuda else max(0, before - copied),
                        raw=(before, after, int(a["mem_in_use_peak"])))


class _ProbeBuffer:
    """One device buffer that every traced one-node session of a ``kernel_memory`` call allocates from (made
    when first needed: a quarter of the device's free memory, at most ``PROBE_BUFFER_MAX``)."""

    def __init__(self, device: str) -> None:
        self.device = device
        self.buffer = None

    def get(self):  # noqa: ANN201 - a backends.placement.DeviceBuffer
        if self.buffer is None:
            from .placement import DeviceBuffer, device_free_bytes
            device_id = runtime.parse_device(self.device)[1]
            runtime._binding_cuda_allocator(device_id)  # the feeds' allocator is ONNX Runtime's, not this buffer
            size = min(device_free_bytes(device_id) // 4, PROBE_BUFFER_MAX) // 256 * 256
            self.buffer = DeviceBuffer(size, device_id)
        return self.buffer

    def release(self) -> None:
        if self.buffer is not None:
            import gc
            gc.collect()  # the probe sessions (and the initializers they hold in the buffer) are gone first
            self.buffer.release()
            self.buffer = None


PROBE_BUFFER_MAX = 16 << 30


def _measure_requests(prof: ProfileCosts, model: onnx.ModelProto, p: _Probe, types: dict[str, TensorType],
                      consts: Mapping, values: dict[str, np.ndarray], device: str, buf: _ProbeBuffer) -> KernelMemory:
    """The node's requests, one by one: its one-node model run twice on remc's allocator in record mode."""
    from .placement import PlacedAllocator
    rng = np.random.default_rng(prof.seed)
    one, feeds = prof._one_node_model(model, p, types, consts, values, rng)
    dev = buf.get()
    alloc = PlacedAllocator(dev.ptr, dev.nbytes)
    alloc.record = []
    try:
        sess = runtime.make_session(one, device, settings=prof.settings, allocator=alloc)
        runner = runtime.Runner(sess, feeds, device, allocator=alloc)
        runner()
        first = len(alloc.record)
        runner()
        second = len(alloc.record)
    except RuntimeFailure as exc:
        raise RuntimeFailure(f"measuring the kernel requests of node {p.name!r} ({p.node.op_type}) on {device}: "
                             f"{exc}") from exc
    finally:
        runner = sess = None  # noqa: F841 - the session's tensors go back to the buffer
    rec = alloc.record
    runs = [[(k, o, n) for r, k, o, n in rec[:first] if r == 1],
            [(k, o, n) for r, k, o, n in rec[first:second] if r == 2]]
    outs = [types[o].nbytes if o and o in types else 0 for o in p.node.output]
    return kernel_memory_of(merge_runs(requests_of_run(runs[0], outs), requests_of_run(runs[1], outs)))


def requests_of_run(events: list[tuple[str, int, int]], output_bytes: list[int]) -> tuple[tuple, ...]:
    """A kernel's requests (``KernelMemory.requests``, all ``first_only`` 0) from one run's allocator events
    ``('a' or 'f', offset, bytes)`` in order. What the run frees is a temporary; of what it does not, the
    first allocation of each output's (256-rounded) size in the order of the outputs is that output, and
    the rest is kept by the kernel."""
    alloc_of: list[int] = []  # per event: its allocation's index (-1: a free of something not allocated here)
    sizes: list[int] = []
    freed: set[int] = set()
    at: dict[int, int] = {}
    for kind, off, nbytes in events:
        if kind == "a":
            at[off] = len(sizes)
            alloc_of.append(len(sizes))
            sizes.append(int(nbytes))
        else:
            i = at.pop(off, -1)
            alloc_of.append(i)
            if i >= 0:
                freed.add(i)
    role: dict[int, tuple] = {}
    for j, ob in enumerate(output_bytes):
        if ob <= 0:
            continue
        for i in range(len(sizes)):
            if i not in freed and i not in role and rounded(sizes[i]) == rounded(ob):
                role[i] = ("o", j)
                break
    ordinal: dict[int, int] = {}
    out: list[tuple] = []
    for (kind, _, _), i in zip(events, alloc_of):
        if i < 0:
            continue
        if kind == "f":
            out.append(("f", ordinal[i]))
        elif i in role:
            out.append(role[i])
        elif i in freed:
            ordinal[i] = len(ordinal)
            out.append(("a", rounded(sizes[i]), 0))
        else:
            out.append(("k", rounded(sizes[i])))
    return tuple(out)


def merge_runs(first: tuple[tuple, ...], later: tuple[tuple, ...]) -> tuple[tuple[tuple, ...], int]:
    """The first run's requests with ``first_only`` set on the temporaries a later run does not make (later's
    temporaries matched by size, in order, as a subsequence of the first's), and how many of later's
    temporaries the first run lacks."""
    want = [r[1] for r in later if r[0] == "a"]
    j = 0
    out: list[tuple] = []
    for r in first:
        if r[0] == "a":
            if j < len(want) and want[j] == r[1]:
                j += 1
                out.append(r)
            else:
                out.append(("a", r[1], 1))
        else:
            out.append(r)
    return tuple(out), len(want) - j


def kernel_memory_of(merged: tuple[tuple[tuple, ...], int]) -> KernelMemory:
    """``KernelMemory`` of a kernel's requests (``merge_runs``' result): the peak of its live temporaries
    (first run), and the bytes it keeps."""
    reqs, extra = merged
    live = peak = kept = 0
    temp: list[int] = []
    for r in reqs:
        if r[0] == "a":
            temp.append(r[1])
            live += r[1]
            peak = max(peak, live)
        elif r[0] == "f":
            live -= temp[r[1]]
        elif r[0] == "k":
            kept += r[1]
    return KernelMemory(scratch=peak, persistent=kept, prepack=0, raw=(0, 0, peak), requests=reqs, later_extra=extra)


def _packed_input(node: onnx.NodeProto, prepack: bool) -> str | None:
    """The initializer a pre-packing kernel packs (and ONNX Runtime then does not copy), if any: none with
    ``session.disable_prepacking`` (``DeviceSettings.prepack`` False)."""
    if prepack and node.op_type in PREPACKING_OPS and len(node.input) > 1:
        return node.input[1]
    return None


def _measure_placed(one: onnx.ModelProto, feeds: dict[str, np.ndarray], p: _Probe, types: dict[str, TensorType],
                    consts: Mapping, device: str, *, prepack: bool = True) -> KernelMemory:
    """Kernel memory of a one-node model run twice on remc's allocator (``backends.capi``): every request is
    seen with its exact size. ``prepack``: what session creation allocated beyond the small initializers it
    copies; ``persistent``: what the first run left allocated beyond its outputs; ``scratch``: the first run's
    peak above what it left; ``requests``: the kernel's requests one by one, as on CUDA
    (``requests_of_run``, ``merge_runs``)."""
    from . import capi
    tensors = sum(types[x].nbytes for x in list(p.node.input) + list(p.node.output) if x and x in types)
    cap = 4 * tensors + (256 << 20)
    runs: list[list[tuple[str, int, int]]] = []
    try:
        sess, alloc = capi.placed_session(one, cap, None, prepack=prepack)
        alloc.events = []
        binding = sess.io_binding()
        for inp in sess.get_inputs():
            binding.bind_cpu_input(inp.name, feeds[inp.name])
        before = alloc.in_use
        for _ in range(2):
            start = len(alloc.events)
            alloc.begin_run()
            sess.run_with_iobinding(binding)
            runs.append(list(alloc.events[start:]))
            if len(runs) == 1:
                after = alloc.in_use
    except RuntimeFailure as exc:
        raise RuntimeFailure(f"measuring the kernel memory of node {p.name!r} ({p.node.op_type}) on {device}: "
                             f"{exc}") from exc
    except RuntimeError as exc:
        raise RuntimeFailure(f"measuring the kernel memory of node {p.name!r} ({p.node.op_type}) on {device}: "
                             f"ONNX Runtime failed: {exc}") from exc
    cur = peak = before
    for kind, _, size in runs[0]:
        cur += size if kind == "a" else -size
        peak = max(peak, cur)
    binding.clear_binding_outputs()
    sess.close()
    out_bytes = [types[o].nbytes if o and o in types else 0 for o in p.node.output]
    reqs, extra = merge_runs(requests_of_run(runs[0], out_bytes), requests_of_run(runs[1], out_bytes))
    outs = sum(rounded(b) for b in out_bytes if b)
    packed = _packed_input(p.node, prepack)
    copied = sum(rounded(types[i].nbytes) for i in dict.fromkeys(p.node.input)
                 if i in consts and i != packed and initializer_in_arena(types[i].nbytes, device))
    return KernelMemory(scratch=max(0, peak - after), persistent=max(0, after - before - outs),
                        prepack=max(0, before - copied), raw=(before, after, peak), requests=reqs, later_extra=extra)


def scratch_table(model: onnx.ModelProto, device: str = "cpu", **kw) -> dict[str, KernelMemory]:
    """Alias of ``kernel_memory`` (the name the driver uses)."""
    return kernel_memory(model, device, **kw)


__all__ = ["KernelMemory", "kernel_memory", "kernel_keys", "unmeasured_kernels", "scratch_table", "ModelError"]
