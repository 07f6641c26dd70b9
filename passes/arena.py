"""An exact replay of ONNX Runtime's BFC arena over a lowered graph's allocations and frees.

The memory a graph needs on ONNX Runtime is not the sum of its live tensors: every tensor is a chunk
of its allocator's BFC arena (``onnxruntime/core/framework/bfc_arena.cc``), and the arena's bookkeeping
decides how many bytes it holds. All of it is deterministic given the sequence of allocations and frees,
which a lowered graph's node order fixes, so remc replays it:

- Sizes are rounded up to 256 bytes. Free chunks sit in 21 bins (bin b holds chunks of 256 << b up to
  twice that; the last bin everything larger), each ordered by (size, address). A request takes the first
  chunk that fits, searching from its own bin upwards (best fit within a bin).
- The chosen chunk is split only when it is at least twice the rounded request or the remainder is at
  least ``max_dead_bytes_per_chunk`` (128 MiB); otherwise it is handed out whole, and ``bytes_in_use``
  counts the whole chunk.
- When no free chunk fits, the arena extends by a new region: ``kSameAsRequested`` adds exactly the
  rounded request; ``kNextPowerOfTwo`` adds ``curr_region_allocation_bytes`` (1 MiB at first, doubled
  until the request fits, and doubled again after a region that did not need doubling, up to
  ``max_power_of_two_extend_bytes``), cut to what the limit leaves. A request larger than what the limit
  leaves (``max_mem`` less every region and reserved byte) fails: ``Available memory of N is smaller than
  requested bytes of M``. Regions never coalesce with each other, nor are they given back during a run.
- Freeing a chunk merges it with free neighbours of its own region (on a stream-aware arena, CUDA, only
  those of the same stream: a fresh region's remainder has no stream until it is first handed out).
- ``Reserve`` (initializers on CUDA) takes memory outside the regions that still counts against the limit
  and in ``bytes_in_use``.

Which tensors the arena sees (``graph_events``), from ONNX Runtime's allocation planner
(``allocation_planner.cc``) with ``enable_mem_reuse`` and memory patterns off, as remc's sessions run:

- every node output is allocated when its node runs (a graph output always is), except outputs that alias an input (Reshape,
  Flatten, Squeeze, Unsqueeze, Identity, ...: ``KernelDef::Alias``) and outputs written in place into an
  input (``KernelDef::MayInplace``, ``IN_PLACE`` per device) when that input's buffer has no other use
  left and has the output's element size and shape;
- a buffer is freed right after the node that uses it last; graph outputs stay to the end of the run, and
  so do outputs nothing reads; graph inputs fed by the caller and initializers (and Constant nodes, which
  become initializers) are not arena chunks on CPU (``initializers_reserved`` puts them in as a reserve,
  as CUDA does);
- a kernel's scratch (``scratch(node)``) is allocated after its outputs and freed when the node ends,
  except CPU ``Where``'s two selections, allocated before its output (``NodeEvents.before``).

remc's capped CPU sessions use ``kNextPowerOfTwo`` with an initial chunk of the whole limit
(``ArenaConfig.one_region``): one region, so malloc's addresses never break a tie.

A run is replayed until it adds no region (a later run starts from the regions the earlier ones left,
all chunks free), since the cap applies to every run. The module imports nothing of ONNX Runtime.
"""
from __future__ import annotations

import bisect
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Protocol

import numpy as np
import onnx

from ..ir.onnx_types import TensorType, node_keys, static_types

MIN_ALLOCATION = 256
NUM_BINS = 21
K_SAME_AS_REQUESTED = "kSameAsRequested"
K_NEXT_POWER_OF_TWO = "kNextPowerOfTwo"


@dataclass(frozen=True)
class ArenaConfig:
    """A BFC arena's settings (``OrtArenaCfg`` / CUDA provider options); defaults are ONNX Runtime's."""

    extend: str = K_SAME_AS_REQUESTED
    limit: int | None = None
    """``max_mem`` / ``gpu_mem_limit`` in bytes; None: unlimited."""
    initial_chunk: int = 1 << 20
    max_dead_bytes: int = 128 << 20
    max_power_of_two_extend: int = 1 << 30
    descending_regions: bool = False
    """Each new region lies below the earlier ones (large glibc mallocs are mmaps, placed top-down); only
    the order of addresses matters: it breaks ties between free chunks of equal size."""
    mmap_threshold: int | None = None
    """Regions of at least this many bytes lie above the others, top-down (glibc's mmap), smaller ones below,
    bottom-up (its heap)."""
    stream_aware: bool = False
    """CUDA's arena: chunks carry the stream that last used them; only same-stream neighbours merge."""
    one_region: bool = False
    """The first region is the whole limit, up to ``ONE_REGION_MAX`` (``initial_chunk_size_bytes`` = limit):
    chunks of one region coalesce, so a plan's free bytes are not scattered over regions."""


ONE_REGION_MAX = (1 << 31) - (1 << 20)
"""``OrtArenaCfg.initial_chunk_size_bytes`` is a C int: a first region of at most this many bytes."""


class ArenaOutOfMemory(Exception):
    """An allocation the limit cannot hold; carries the numbers ONNX Runtime prints."""

    def __init__(self, requested: int, available: int, what: str = "") -> None:
        super().__init__(f"Available memory of {available} is smaller than requested bytes of {requested}"
                         + (f" ({what})" if what else ""))
        self.requested, self.available, self.what = requested, available, what


def rounded(n: int) -> int:
    """Bytes the arena reserves for a request of ``n`` (a multiple of 256)."""
    return -(-int(n) // MIN_ALLOCATION) * MIN_ALLOCATION


def bin_for_size(n: int) -> int:
    """The bin a chunk of ``n`` bytes belongs to."""
    v = max(n, MIN_ALLOCATION) >> 8
    return min(NUM_BINS - 1, v.bit_length() - 1)


@dataclass
class _Chunk:
    ptr: int
    size: int
    region: int
    prev: _Chunk | None = None
    next: _Chunk | None = None
    in_use: bool = False
    stream: int = 0  # 0: none (a fresh region), 1: the session's stream


class BFCArena:
    """The arena's state and its two operations; every number as ONNX Runtime's ``AllocatorStats``."""

    def __init__(self, config: ArenaConfig) -> None:
        self.config = config
        self.limit = config.limit if config.limit is not None else (1 << 62)
        first = min(config.limit, ONE_REGION_MAX) // MIN_ALLOCATION * MIN_ALLOCATION \
            if config.one_region and config.limit is not None else config.initial_chunk
        self.curr_region = rounded(min(self.limit, first))
        self.bins: list[list[tuple[int, int]]] = [[] for _ in range(NUM_BINS)]  # sorted (size, ptr)
        self.chunk_at: dict[int, _Chunk] = {}  # ptr -> chunk (free or in use)
        self.regions: list[int] = []  # sizes, in the order they were added
        self.next_ptr = 1 << 40
        self.next_mmap = 1 << 56
        self.total_allocated = 0  # regions + reserved
        self.reserved = 0
        self.in_use = 0
        self.peak_in_use = 0
        self.peak_allocated = 0

    # -- free lists
    def _insert(self, c: _Chunk) -> None:
        bisect.insort(self.bins[bin_for_size(c.size)], (c.size, c.ptr))

    def _remove(self, c: _Chunk) -> None:
        b = self.bins[bin_for_size(c.size)]
        del b[bisect.bisect_left(b, (c.size, c.ptr))]

    # -- operations
    def reserve(self, n: int) -> None:
        """``Reserve``: memory outside the regions (initializers) that counts against the limit."""
        if n <= 0:
            return
        if n > self.limit - self.total_allocated:
            raise ArenaOutOfMemory(n, self.limit - self.total_allocated, "reserve")
        self.reserved += n
        self.total_allocated += n
        self.in_use += n
        self._stats()

    def alloc(self, n: int, what: str = "") -> int | None:
        """Allocate ``n`` bytes; the chunk's address (None for 0 bytes). ArenaOutOfMemory past the limit."""
        if n <= 0:
            return None
        r = rounded(n)
        c = self._find(r)
        if c is None:
            self._extend(r, what)
            c = self._find(r)
            assert c is not None
        return c.ptr

    def free(self, ptr: int | None) -> None:
        if ptr is None:
            return
        c = self.chunk_at[ptr]
        assert c.in_use
        c.in_use = False
        self.in_use -= c.size
        n = c.next
        if n is not None and not n.in_use and n.stream == c.stream:
            self._remove(n)
            self._merge(c, n)
        p = c.prev
        if p is not None and not p.in_use and p.stream == c.stream:
            self._remove(p)
            self._merge(p, c)
            c = p
        self._insert(c)

    def end_run(self) -> None:
        """What a stream-aware arena does when a run ends: chunks forget their stream, free neighbours merge."""
        if not self.config.stream_aware:
            return
        for b in self.bins:
            b.clear()
        chunks = sorted(self.chunk_at.values(), key=lambda c: c.ptr)
        for c in chunks:
            c.stream = 0
        for c in chunks:
            if c.ptr not in self.chunk_at or c.in_use:
                continue
            while c.next is not None and not c.next.in_use:
                self._merge(c, c.next)
        for c in self.chunk_at.values():
            if not c.in_use:
                self._insert(c)

    def layout(self) -> tuple:
        """The arena's state as a value: regions, reserved bytes and every chunk (address, size, in use)."""
        return (tuple(self.regions), self.reserved,
                tuple(sorted((c.ptr, c.size, c.in_use, c.stream) for c in self.chunk_at.values())))

    # -- internals
    def _stats(self) -> None:
        self.peak_in_use = max(self.peak_in_use, self.in_use)
        self.peak_allocated = max(self.peak_allocated, self.total_allocated)

    def _merge(self, a: _Chunk, b: _Chunk) -> None:
        a.size += b.size
        a.next = b.next
        if b.next is not None:
            b.next.prev = a
        del self.chunk_at[b.ptr]

    def _find(self, r: int) -> _Chunk | None:
        for b in range(bin_for_size(r), NUM_BINS):
            chunks = self.bins[b]
            i = bisect.bisect_left(chunks, (r, -1))
            if i < len(chunks):
                size, ptr = chunks[i]
                del chunks[i]
                c = self.chunk_at[ptr]
                if size >= 2 * r or size - r >= self.config.max_dead_bytes:
                    rest = _Chunk(ptr + r, size - r, c.region, c, c.next, False, c.stream)
                    if c.next is not None:
                        c.next.prev = rest
                    c.next = rest
                    c.size = r
                    self.chunk_at[rest.ptr] = rest
                    self._insert(rest)
                c.in_use = True
                if self.config.stream_aware:
                    c.stream = 1
                self.in_use += c.size
                self._stats()
                return c
        return None

    def _extend(self, r: int, what: str) -> None:
        available = (self.limit - self.total_allocated) // MIN_ALLOCATION * MIN_ALLOCATION
        if r > available:
            raise ArenaOutOfMemory(r, available, what)
        if self.config.extend == K_NEXT_POWER_OF_TWO:
            increased = False
            while r > self.curr_region:
                self.curr_region *= 2
                increased = True
            size = min(self.curr_region, available)
            if not increased:
                cap = self.config.max_power_of_two_extend
                self.curr_region = self.curr_region * 2 if self.curr_region < cap // 2 else cap
        else:
            size = r
        if self.config.mmap_threshold is not None:
            if size >= self.config.mmap_threshold:  # glibc: an mmap, placed top-down
                self.next_mmap -= size + (1 << 20)
                ptr = self.next_mmap
            else:  # the heap grows upwards
                ptr = self.next_ptr
                self.next_ptr += size + 4096
        elif self.config.descending_regions:
            self.next_ptr -= size + (1 << 30)
            ptr = self.next_ptr
        else:
            ptr = self.next_ptr
            self.next_ptr += size + (1 << 30)
        c = _Chunk(ptr, size, len(self.regions))
        self.regions.append(size)
        self.chunk_at[ptr] = c
        self.total_allocated += size
        self._insert(c)
        self._stats()


# ---------------------------------------------------------------------------------------------------
# The allocations and frees of a lowered graph
# ---------------------------------------------------------------------------------------------------

ALIAS_OPS = frozenset("Reshape Flatten Squeeze Unsqueeze Identity".split())

CPU_INPUT_PORTS = frozenset({("Reshape", 1), ("Slice", 1), ("Slice", 2), ("Slice", 3), ("Slice", 4),
                             ("ReduceSum", 1), ("ReduceMean", 1), ("ReduceMax", 1), ("ReduceMin", 1),
                             ("ReduceProd", 1), ("ReduceL2", 1), ("ReduceSumSquare", 1), ("ReduceLogSumExp", 1),
                             ("Expand", 1), ("ConstantOfShape", 0), ("Unsqueeze", 1), ("Squeeze", 1),
                             ("Tile", 1), ("Resize", 1), ("Resize", 2), ("Resize", 3), ("Pad", 1), ("Pad", 2),
                             ("Split", 1), ("TopK", 1), ("Range", 0), ("Range", 1), ("Range", 2),
                             ("Clip", 1), ("Clip", 2), ("Dropout", 1), ("Dropout", 2), ("CumSum", 1),
                             ("Trilu", 1), ("OneHot", 1)})
"""(op, input) ports whose CUDA kernels read the input from CPU memory (``InputMemoryType(OrtMemTypeCPUInput)``):
an initializer read only there stays in CPU memory, outside the CUDA arena."""

CPU_OUTPUT_OPS = frozenset({"Shape", "Size"})
"""Ops whose CUDA kernels write their output to CPU memory (``OrtMemTypeCPUOutput``): not in the CUDA arena."""
"""Ops whose output 0 is their input 0's buffer (``KernelDef::Alias(0, 0)``) on CPU and CUDA."""

IN_PLACE: dict[str, frozenset[str]] = {
    # onnxruntime 1.32 CPU, measured by tools/arena_inplace_probe.py (Add, Mul, Sub, Div, Where, Neg, Exp,
    # Sqrt, Reciprocal, Dropout, Gelu, ... allocate a new output)
    "cpu": frozenset("Relu Sigmoid Tanh Softplus LeakyRelu Elu Selu HardSigmoid Clip Cast Softmax LogSoftmax "
                       "ScatterElements".split()),
    # onnxruntime-gpu 1.31.1 on an H100, measured by tools/arena_inplace_probe.py --device cuda
    "cuda": frozenset("Elu Gelu HardSigmoid LeakyRelu Relu ScatterND Selu Sigmoid Softplus Tanh".split()),
}
"""Per device: ops whose output 0 may be written into input 0 at its last use (``MayInplace(0, 0)``),
as measured on onnxruntime by ``tools/arena_inplace_probe.py``."""


@dataclass(frozen=True)
class NodeEvents:
    """What one node does to the arena, in order: allocate ``allocs`` (key, bytes), allocate and free its
    ``scratch`` (bytes each), then free ``frees`` (keys)."""

    node: str
    allocs: tuple[tuple[str, int], ...]
    scratch: tuple[int, ...]
    frees: tuple[str, ...]
    persistent: int = 0
    """Bytes the kernel allocates at its first run and keeps (after its outputs, before its scratch)."""
    before: tuple[int, ...] = ()
    """Temporaries the kernel allocates before its outputs and frees when it ends (CPU Where's two
    selections), in allocation order."""
    requests: tuple[tuple, ...] = ()
    """The kernel's requests one by one, as measured on remc's allocator (empty: not measured; then
    ``allocs``, ``persistent`` and one ``scratch`` block of the peak stand for them): ``("o", key)`` an output
    of ``allocs``, ``("a", bytes, first_only)`` a temporary, ``("f", n)`` the n-th temporary freed,
    ``("k", bytes)`` kept from the first run on. Only ``passes.placement`` reads them."""


@dataclass(frozen=True)
class GraphEvents:
    """A lowered graph's arena traffic: per node in execution order, plus the initializer bytes."""

    nodes: tuple[NodeEvents, ...]
    initializer_bytes: int
    initializer_sizes: tuple[int, ...] = ()
    """Bytes of each initializer the device copies into the arena (``initializer_in_arena``)."""
    input_bytes: int = 0
    """Bytes of the graph inputs the caller feeds (outside the arena)."""
    prepack: int = 0
    """Bytes session creation puts in the arena for the nodes' constant weights (pre-packing)."""
    prepack_sizes: tuple[int, ...] = ()
    """Pre-packed bytes per packing node, in node order (each kernel instance packs its own copy: what
    remc's layout places)."""
    prepack_shared: tuple[bool, ...] = ()
    """Per entry of ``prepack_sizes``: an earlier node packs the same weight with the same op and attributes
    (a recomputed copy). Session creation then packs it and frees it at once, the kernel sharing the first
    copy (measured on remc's CPU allocator: Gemm, MatMul, ConvTranspose): a transient block, not a kept one."""


class KernelBytes(Protocol):
    """What a node's kernel takes from the arena beyond its outputs (``backends.scratch.KernelMemory``)."""

    scratch: int
    persistent: int
    prepack: int


def graph_events(model: onnx.ModelProto, device: str = "cpu", kernel: Mapping[str, KernelBytes] | None = None,
                 in_place: Iterable[str] | None = None, bound_outputs: bool = False) -> GraphEvents:
    """The allocations and frees of running ``model`` (its node list is the execution order; see the
    module docstring). ``kernel`` maps node names (``node_keys``) to the arena bytes their kernels take
    beyond their outputs (measured on the device: ``backends.scratch``; none when omitted); ``in_place``
    the ops that may write output 0 into input 0 (default ``IN_PLACE[device]``). ``bound_outputs``: the
    caller binds every graph output to a buffer of its own (IOBinding with fixed buffers,
    ``backends.trainer``), which the node writes into: no arena chunk."""
    kind = device.split(":")[0]
    inplace = frozenset(IN_PLACE.get(kind, frozenset()) if in_place is None else in_place)
    types = static_types(model)
    g = model.graph
    consts = [n for n in g.node if n.op_type == "Constant" and n.domain in ("", "ai.onnx")]
    nodes = [n for n in g.node if not (n.op_type == "Constant" and n.domain in ("", "ai.onnx"))]
    init_names = [i.name for i in g.initializer] + [o for n in consts for o in n.output]
    preexisting = set(init_names) | {i.name for i in g.input}
    graph_outputs = {o.name for o in g.output}
    uses: dict[str, int] = {}
    for n in nodes:
        for x in n.input:
            if x:
                uses[x] = uses.get(x, 0) + 1
    buffer_of: dict[str, str] = {}  # value -> the value whose allocation holds it
    count: dict[str, int] = {}  # buffer -> remaining uses (graph outputs: never reach 0)
    bytes_of = {k: v.nbytes for k, v in types.items()}
    out: list[NodeEvents] = []
    names = [nm for nm, n in zip(node_keys(model), g.node)
             if not (n.op_type == "Constant" and n.domain in ("", "ai.onnx"))]
    kernel = kernel or {}
    prepack = 0
    prepack_sizes: list[int] = []
    prepack_shared: list[bool] = []
    packs: set[tuple] = set()
    packed: set[str] = set()  # initializers some kernel packs
    for name, n in zip(names, nodes):
        allocs: list[tuple[str, int]] = []
        for i, o in enumerate(n.output):
            if not o:
                continue
            extra = uses.get(o, 0) + (1 if o in graph_outputs else 0)
            x = n.input[0] if n.input else ""
            if i == 0 and x and o not in graph_outputs and (n.op_type in ALIAS_OPS or (
                    n.op_type in inplace and x not in preexisting and count.get(buffer_of.get(x, ""), 0) == 1
                    and list(n.input).count(x) == 1 and _same_size(types.get(x), types.get(o)))):
                root = buffer_of.get(x, x)
                if x in preexisting or root in preexisting:  # an alias of a graph input or initializer (or of
                    # an alias of one: DenseNet121's BatchNorm weights reshaped twice): outside the arena
                    buffer_of[o] = root
                    continue
                b = buffer_of[x]
                buffer_of[o] = b
                count[b] += extra
                continue
            buffer_of[o] = o
            count[o] = extra if extra else (1 << 30)  # read by nobody: kept to the end of the run
            if bound_outputs and o in graph_outputs:
                preexisting.add(o)  # the caller's buffer
                continue
            if kind == "cuda" and n.op_type in CPU_OUTPUT_OPS:
                preexisting.add(o)  # in CPU memory, never an arena chunk
                continue
            allocs.append((o, bytes_of.get(o, 0)))
        frees: list[str] = []
        for x in n.input:
            if not x or x in preexisting or buffer_of.get(x, x) in preexisting:
                continue
            b = buffer_of[x]
            count[b] -= 1
            if count[b] == 0:
                frees.append(b)
        km = kernel.get(name)
        sc = (int(km.scratch),) if km is not None and km.scratch > 0 else ()
        before = _temporaries_before_outputs(n, types, kind)
        if before and km is not None and km.scratch == sum(rounded(b) for b in before):
            sc = ()  # the measured scratch is these temporaries
        else:
            before = ()
        persistent = int(km.persistent) if km is not None else 0
        if km is not None and km.prepack > 0:
            key = (n.op_type, n.input[1] if n.op_type in PREPACKING_OPS and len(n.input) > 1 else name,
                   tuple(a.SerializeToString() for a in n.attribute))
            # every kernel instance packs its own copy (a recomputed Gemm too: seen on remc's CPU allocator,
            # session creation requests one per node) and frees it when an earlier one packed the same key
            prepack_shared.append(key in packs)
            if key not in packs:
                packs.add(key)
                prepack += int(km.prepack)
            prepack_sizes.append(int(km.prepack))
            if key[1] != name:
                packed.add(key[1])
        reqs = _node_requests(n, allocs, getattr(km, "requests", ()) if km is not None else ())
        out.append(NodeEvents(name, tuple(allocs), sc, tuple(frees), persistent, before, reqs))
    unpacked_use = {x for n in nodes for i, x in enumerate(n.input)
                    if x and not (i == 1 and n.op_type in PREPACKING_OPS and x in packed)}
    if kind == "cuda":  # copied to the device at session creation, each in its own 256-byte-rounded chunk
        ports: dict[str, list[tuple[str, int]]] = {}
        for n in nodes:
            for i, x in enumerate(n.input):
                ports.setdefault(x, []).append((n.op_type, i))
        inits = tuple(rounded(types[nm].nbytes) for nm in init_names if nm in types
                      and not all(p in CPU_INPUT_PORTS for p in ports.get(nm, [])))
    else:
        inits = tuple(types[nm].nbytes for nm in init_names if nm in types
                      and initializer_in_arena(types[nm].nbytes, kind) and (nm in unpacked_use or nm not in packed))
    inputs = sum(types[i.name].nbytes for i in g.input if i.name not in set(init_names) and i.name in types)
    return GraphEvents(tuple(out), sum(inits), inits, inputs, prepack, tuple(prepack_sizes), tuple(prepack_shared))


def _node_requests(n: onnx.NodeProto, allocs: list[tuple[str, int]], measured: Iterable[tuple]) -> tuple[tuple, ...]:
    """A node's requests in this graph (``NodeEvents.requests``) from its kernel's measured ones
    (``backends.scratch.KernelMemory.requests``, outputs by index): outputs this graph does not allocate
    (aliased, in place, bound, in CPU memory) are dropped; outputs the measurement lacks come first."""
    measured = tuple(measured)
    if not measured:
        return ()
    keys = {k for k, _ in allocs}
    seen: set[str] = set()
    seq: list[tuple] = []
    for r in measured:
        if r[0] == "o":
            i = int(r[1])
            o = n.output[i] if i < len(n.output) else ""
            if o in keys and o not in seen:
                seen.add(o)
                seq.append(("o", o))
        else:
            seq.append(tuple(r))
    return tuple([("o", k) for k, _ in allocs if k not in seen] + seq)


def _temporaries_before_outputs(n: onnx.NodeProto, types: Mapping[str, TensorType], kind: str) -> tuple[int, ...]:
    """Bytes of the temporaries a CPU kernel allocates before its output: ``Where`` selects X where the
    condition holds and Y where it does not into two tensors of the broadcast shapes (condition with X, with
    Y), then allocates the output and merges them (``where_op.cc``)."""
    if kind != "cpu" or n.op_type != "Where" or len(n.input) != 3:
        return ()
    c, x, y = (types.get(i) for i in n.input)
    if c is None or x is None or y is None:
        return ()
    try:
        shapes = [np.broadcast_shapes(tuple(c.shape), tuple(v.shape)) for v in (x, y)]
    except ValueError:
        return ()
    return tuple(int(np.prod(s, dtype=np.int64)) * (v.nbytes // max(int(np.prod(v.shape, dtype=np.int64)), 1))
                 for s, v in zip(shapes, (x, y)))


PREPACKING_OPS = frozenset({"Gemm", "MatMul", "ConvTranspose"})
"""Ops whose CPU kernels pack a constant input 1 at session creation (``OpKernel::PrePack``): the packed copy
lives in the arena, one per distinct (op, attributes, weight), and a packed small initializer is released."""

SMALL_INITIALIZER = 127
"""ONNX Runtime (``utils::kSmallTensorExternalDataThreshold``) uses a CPU initializer of more bytes in place
from the model's buffer; one of at most this many bytes is copied into an arena ``Reserve``."""


def initializer_in_arena(nbytes: int, device: str) -> bool:
    """Whether ONNX Runtime copies an initializer of ``nbytes`` into the session's arena on ``device`` (a
    ``Reserve``: counted against the limit, outside the regions): always on CUDA; on CPU only small ones."""
    return device.split(":")[0] == "cuda" or nbytes <= SMALL_INITIALIZER


def _same_size(a: TensorType | None, b: TensorType | None) -> bool:
    return a is not None and b is not None and a.shape == b.shape and a.nbytes == b.nbytes


@dataclass(frozen=True)
class ArenaReplay:
    """What replaying a graph's runs on a BFC arena gives."""

    peak_in_use: int
    """Largest ``bytes_in_use`` (chunks handed out, whole, plus reserved bytes): the profiler's ``mem_in_use_peak``."""
    peak_allocated: int
    """Largest sum of regions and reserved bytes: the least limit the runs fit (for ``kSameAsRequested``)."""
    regions: tuple[int, ...]
    runs: int
    node_in_use: tuple[int, ...] = ()
    """``bytes_in_use`` after each node of the first run (before its dead inputs are freed)."""
    peak_node: str = ""
    oom: ArenaOutOfMemory | None = None
    """The failed allocation under ``config.limit``, if any."""
    oom_node: str = ""

    @property
    def fits(self) -> bool:
        return self.oom is None


def replay(events: GraphEvents, config: ArenaConfig, *, runs: int = 4,
           carried: tuple[str, ...] | None = None) -> ArenaReplay:
    """Replay up to ``runs`` runs of ``events`` on a fresh arena (stopping once a run adds no region).

    ``carried``: a training loop (``backends.trainer``): the chunks of these graph outputs (each step's
    ``x.updated``) are the next run's inputs ``x``, so they stay allocated until the end of the next run;
    every other output is released when its run ends. The first run's carried inputs are outside the arena
    (the caller's initial values). Runs continue until the arena at the start of a run is one it was in
    before (the loop is periodic from there on; at most ``runs`` runs)."""
    arena = BFCArena(config)
    node_in_use: list[int] = []
    peak_node, peak_seen = "", -1
    try:
        if config.stream_aware:  # CUDA: each initializer is a chunk of the arena, allocated at session creation
            for s in events.initializer_sizes:
                arena.alloc(s, "initializer")
        else:
            for s in events.initializer_sizes:
                arena.reserve(s)
        arena.reserve(events.prepack)
    except ArenaOutOfMemory as e:
        return ArenaReplay(arena.peak_in_use, arena.peak_allocated, tuple(arena.regions), 0, (), "", e,
                           "session creation")
    done = 0
    state: list[int | None] = []
    seen: set[tuple] = set()
    for run in range(runs):
        before = len(arena.regions)
        if carried is not None and run > 0:  # the first run also allocates what kernels keep: not comparable
            layout = arena.layout()
            if layout in seen:
                break
            seen.add(layout)
        live: dict[str, int | None] = {}
        for ne in events.nodes:
            try:
                pre = [arena.alloc(b, f"temporary of {ne.node}") for b in ne.before]
                for key, size in ne.allocs:
                    live[key] = arena.alloc(size, key)
                if run == 0 and ne.persistent:
                    arena.alloc(ne.persistent, f"kept by {ne.node}")
                for s in ne.scratch:
                    arena.free(arena.alloc(s, f"scratch of {ne.node}"))
                for ptr in reversed(pre):
                    arena.free(ptr)
            except ArenaOutOfMemory as e:
                return ArenaReplay(arena.peak_in_use, arena.peak_allocated, tuple(arena.regions), run + 1,
                                   tuple(node_in_use), peak_node, e, ne.node)
            if arena.peak_in_use > peak_seen:
                peak_seen, peak_node = arena.peak_in_use, ne.node
            if run == 0:
                node_in_use.append(arena.in_use)
            for key in ne.frees:
                arena.free(live.pop(key))
        new_state = [live.pop(k) for k in carried if k in live] if carried is not None else []
        for p in list(live.values()) + state:  # the caller releases outputs and the last step's state
            arena.free(p)
        state = new_state
        arena.end_run()
        done = run + 1
        if carried is None and run > 0 and len(arena.regions) == before:
            break
    return ArenaReplay(arena.peak_in_use, arena.peak_allocated, tuple(arena.regions), done, tuple(node_in_use),
                       peak_node)


def least_limit(events: GraphEvents, config: ArenaConfig, *, runs: int = 4,
                resolution: int = MIN_ALLOCATION, carried: tuple[str, ...] | None = None) -> int:
    """The least ``limit`` under which the replayed runs fit: the peak of regions plus reserved bytes for
    ``kSameAsRequested`` (its regions do not depend on the limit); a bisection for ``kNextPowerOfTwo``,
    whose last region is cut to what the limit leaves (with ``one_region`` the first region is
    the limit: bisected from the ``kSameAsRequested`` need, doubled until it fits). ``carried``: the
    runs of a training loop (``replay``)."""
    if config.one_region:
        from dataclasses import replace
        same = replay(events, replace(config, limit=None, extend=K_SAME_AS_REQUESTED, one_region=False), runs=runs,
                      carried=carried)
        lo, hi = max(same.peak_in_use, 1) - 1, max(same.peak_allocated, MIN_ALLOCATION)
        while not replay(events, _with_limit(config, hi), runs=runs, carried=carried).fits:
            lo, hi = hi, 2 * hi
        return _bisect(events, config, lo, hi, runs, resolution, carried)
    free = replay(events, _with_limit(config, None), runs=runs, carried=carried)
    if config.extend != K_NEXT_POWER_OF_TWO:
        return free.peak_allocated
    return _bisect(events, config, max(free.peak_in_use, 0) - 1, free.peak_allocated, runs, resolution, carried)


def _bisect(events: GraphEvents, config: ArenaConfig, lo: int, hi: int, runs: int, resolution: int,
            carried: tuple[str, ...] | None = None) -> int:
    """The least limit in (lo, hi] (hi fits) the runs fit under, to ``resolution`` bytes."""
    while hi - lo > resolution:
        mid = (lo + hi) // 2 // MIN_ALLOCATION * MIN_ALLOCATION
        if mid <= lo:
            break
        if replay(events, _with_limit(config, mid), runs=runs, carried=carried).fits:
            hi = mid
        else:
            lo = mid
    return hi


def _with_limit(config: ArenaConfig, limit: int | None) -> ArenaConfig:
    from dataclasses import replace
    return replace(config, limit=limit)


def bisect_least(fits: Callable[[int], bool], *, start: int = 1 << 20, resolution: int = MIN_ALLOCATION,
                 max_bytes: int = 1 << 46) -> int | None:
    """The cap a fixed search finds: double from ``start`` until ``fits``, then bisect in multiples of 256
    bytes down to ``resolution``. None when nothing up to ``max_bytes`` fits. Under a one-region arena
    whether a training loop fits is not monotone in the cap (the last free chunk's size changes which chunk
    a request takes, and the carried state drifts through the arena step after step), so this is the
    least cap *on this search path*: the replay (``remc.fit.predict_loop``) and a measurement
    (``backends.trainer.least_cap``) that both use it probe the same caps and agree when every probe does."""
    lo, hi = 0, max(int(start), MIN_ALLOCATION) // MIN_ALLOCATION * MIN_ALLOCATION
    while not fits(hi):
        lo, hi = hi, hi * 2
        if hi > max_bytes:
            return None
    while hi - lo > max(resolution, MIN_ALLOCATION):
        mid = (lo + hi) // 2 // MIN_ALLOCATION * MIN_ALLOCATION
        if mid <= lo:
            break
        lo, hi = (lo, mid) if fits(mid) else (mid, hi)
    return hi
