"""remc's device allocator: ONNX Runtime's CUDA tensors at the addresses of a static layout.

The CUDA execution provider takes an external allocator as provider options ``gpu_external_alloc`` and
``gpu_external_free`` (and ``gpu_external_empty_cache``), each the address of a C function as a decimal
string (``void* alloc(size_t)``, ``void free(void*)``, ``void empty_cache()``). With both set,
``CUDAExecutionProvider::CreateCudaAllocator`` makes a ``CUDAExternalAllocator`` with no BFC arena: every
allocation of the session's default CUDA allocator calls ``alloc`` with the exact bytes requested —
initializers at session creation (``Reserve``, which calls ``Alloc``), node outputs, and kernel scratch
(cuDNN workspaces through ``GetScratchBuffer``) — and ``free`` when the tensor dies. A NULL from ``alloc``
fails ``ORT_ENFORCE(p != nullptr)``, so the node fails and the run returns an error. ``run_with_iobinding``
releases the GIL while it runs; a ``ctypes`` callback takes it back. Fed inputs (OrtValues made by
``Runner``) come from the Python binding's own allocator, outside this buffer. The Python binding has no
such hook for the CPU provider; ``backends.capi`` registers the same allocator through ONNX Runtime's C API.

``PlacedAllocator`` owns one buffer (``DeviceBuffer``: ``cudaMalloc`` of exactly the cap, on the CUDA runtime
ONNX Runtime loaded) and hands out addresses in it: the k-th request of a phase (session creation, or a run:
``begin_run``) gets the layout's k-th offset (``passes.placement.Layout.sequence``) when the size matches
and that range is free; a request the layout does not have (or whose place is taken) falls back to the
best-fitting free gap. A checked interval set guarantees that no two live allocations overlap whatever
the layout says; when nothing fits, ``alloc`` returns NULL and records the failure. It records the
high-water mark (highest end offset: the bytes of the buffer the run really needed) and how many requests
followed the layout.
"""
from __future__ import annotations

import bisect
import ctypes
import dataclasses
import os
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

ALIGN = 256
LOOKAHEAD = 16
LOOKBACK = 8
"""How far back a request the layout lacks may look for the scratch region of its kernel."""
"""How many planned requests a request may skip to find its own (size-matched), so that one request the
layout lacks (or one ONNX Runtime does not make) does not throw the rest of the run off the plan."""

ALLOC_FN = ctypes.CFUNCTYPE(ctypes.c_void_p, ctypes.c_size_t)
FREE_FN = ctypes.CFUNCTYPE(None, ctypes.c_void_p)
EMPTY_FN = ctypes.CFUNCTYPE(None)

_ALIVE: list = []
"""Every allocator whose callbacks were handed to ONNX Runtime: they must outlive every session that holds
their addresses (ONNX Runtime frees initializers when a session is destroyed, whenever Python does that)."""


def _round(n: int) -> int:
    return -(-int(n) // ALIGN) * ALIGN


@dataclass
class AllocStats:
    """What a ``PlacedAllocator`` saw."""

    high_water: int = 0
    """Highest end offset of any allocation: the bytes of the buffer in use at its fullest."""
    peak_in_use: int = 0
    """Largest sum of live (256-rounded) allocations."""
    planned: int = 0
    fallback: int = 0
    rejected: int = 0
    """Planned offsets refused because that range was in use (a wrong layout), served by fallback."""
    in_scratch: int = 0
    """Requests the layout lacks placed inside a nearby kernel's scratch region."""
    failures: list[tuple[int, int]] = field(default_factory=list)
    """(requested bytes, largest free gap) of each request that got NULL."""
    calls: int = 0


class PlacedAllocator:
    """Addresses in ``[base, base + capacity)`` per a layout (module docstring). ``base`` is the buffer's
    address (a device pointer, or a host buffer's address in tests)."""

    def __init__(self, base: int, capacity: int, sequences: dict[str, Sequence[tuple[int, int]]] | None = None,
                 later_run: Sequence[tuple[int, int]] | None = None,
                 scratch: dict[str, Sequence[bool]] | None = None,
                 fenced: Sequence[tuple[int, int]] = ()) -> None:
        self.base, self.capacity = int(base), int(capacity)
        self.fenced = sorted((int(o), int(o) + int(n)) for o, n in fenced)
        """[start, end) ranges a request off the layout never gets (best fit, scratch regions): graph outputs the
        caller bound at their planned offsets (``passes.placement.bind_outputs``), which the allocator never sees
        requested. Planned requests may use them: the layout puts them there only while no bound output lives."""
        self.plans = {k: list(v) for k, v in (sequences or {}).items()}
        self.pool: dict[int, list[int]] = {}
        """Session creation's planned offsets by size: initializers are matched by size, in any order (ONNX
        Runtime copies them in the order of its own maps, not the model's)."""
        for size, off in self.plans.get("create", []):
            self.pool.setdefault(size, []).append(off)
        self.later_run = list(later_run) if later_run is not None else None
        self.scratch = {k: list(v) for k, v in (scratch or {}).items()}
        """Per phase ('run', 'later'): which planned entries are kernel scratch regions."""
        self.starts: list[int] = []  # sorted offsets of live allocations
        self.size_at: dict[int, int] = {}  # offset -> rounded size
        self.in_use = 0
        self.stats = AllocStats()
        self.phase = "create"
        self.k = 0
        self.runs = 0
        self._callbacks: tuple | None = None
        self.buffer: DeviceBuffer | None = None
        self._closing = False
        self.events: list[tuple[str, int, int]] | None = None
        """When a list: ('a', offset, rounded bytes) per allocation and ('f', offset, bytes) per free, in order."""
        self.trace: list[tuple[str, int, int, int | None, str]] | None = None
        """When a list: (phase, request index, bytes, offset or None, 'planned'/'fallback'/'null') per request."""
        self.record: list[tuple[int, str, int, int]] | None = None
        """When a list: every allocation and free as (run number (0: session creation), 'a' or 'f', offset,
        requested bytes (of the allocation freed, for 'f')): what ``backends.scratch`` reads a kernel's
        requests from."""
        self.requested: dict[int, int] = {}  # offset -> bytes requested (with ``record``)
        self._sizes: list[int] = []
        self._offs: list[int] = []
        """The current run's planned sizes and offsets by request index (``begin_run``): ``alloc``'s hot path."""
        self.native = None
        """``backends.nativealloc.NativeTables`` when native callbacks serve this allocator's planned requests."""

    # -- phases
    def begin_run(self) -> None:
        """The next requests are a run's: its k-th request gets the run's k-th planned offset."""
        if self.native is not None:
            self.native.pull()
        self.phase, self.k = "run", 0
        self.runs += 1
        plan = self._plan()
        self._sizes = [size for size, _ in plan]
        self._offs = [off for _, off in plan]
        if self.native is not None:
            self.native.begin_run()

    def _later(self) -> bool:
        return self.phase == "run" and self.runs > 1 and self.later_run is not None

    def _plan(self) -> list[tuple[int, int]]:
        if self._later():
            return self.later_run  # type: ignore[return-value]
        return self.plans.get(self.phase, [])

    def _in_scratch(self, size: int, plan: list[tuple[int, int]]) -> int | None:
        """A place for a request the layout lacks inside a nearby kernel scratch region (a kernel's several
        temporaries share the one region its measured peak reserved), best fit there."""
        flags = self.scratch.get("later" if self._later() else self.phase, [])
        for j in range(max(0, self.k - LOOKBACK), min(self.k + LOOKAHEAD, len(plan), len(flags))):
            if not flags[j] or plan[j][0] < size:
                continue
            lo, hi = plan[j][1], plan[j][1] + plan[j][0]
            i = max(bisect.bisect_right(self.starts, lo) - 1, 0)
            prev, best = lo, None
            while i < len(self.starts) and self.starts[i] < hi:
                s = self.starts[i]
                e = s + self.size_at[s]
                if e > prev:
                    if s - prev >= size and (best is None or s - prev < best[0]):
                        best = (s - prev, prev)
                    prev = max(prev, e)
                i += 1
            if hi - prev >= size and (best is None or hi - prev < best[0]):
                best = (hi - prev, prev)
            if best is not None:
                return best[1]
        return None

    # -- the interval set
    def is_free(self, off: int, size: int) -> bool:
        """Whether [off, off + size) lies in the buffer and overlaps no live allocation."""
        if off < 0 or off + size > self.capacity:
            return False
        i = bisect.bisect_right(self.starts, off)
        if i > 0 and self.starts[i - 1] + self.size_at[self.starts[i - 1]] > off:
            return False
        return not (i < len(self.starts) and self.starts[i] < off + size)

    def _taken(self) -> list[tuple[int, int]]:
        """[start, end) of every live allocation and fenced range, by start."""
        live = [(s, s + self.size_at[s]) for s in self.starts]
        return sorted(live + self.fenced) if self.fenced else live

    def _fenced_off(self, off: int, size: int) -> bool:
        """Whether [off, off + size) overlaps a fenced range."""
        return any(a < off + size and off < b for a, b in self.fenced)

    def largest_gap(self) -> int:
        prev, best = 0, 0
        for s, e in self._taken():
            best = max(best, s - prev)
            prev = max(prev, e)
        return max(best, self.capacity - prev)

    def _best_fit(self, size: int) -> int | None:
        prev, best = 0, None
        for s, e in self._taken():
            gap = s - prev
            if gap >= size and (best is None or gap < best[0]):
                best = (gap, prev)
            prev = max(prev, e)
        gap = self.capacity - prev
        if gap >= size and (best is None or gap < best[0]):
            best = (gap, prev)
        return None if best is None else best[1]

    def _take(self, off: int, size: int, nbytes: int | None = None) -> int:
        if self.record is not None:
            self.record.append((self.runs if self.phase == "run" else 0, "a", off, int(nbytes or size)))
            self.requested[off] = int(nbytes or size)
        bisect.insort(self.starts, off)
        self.size_at[off] = size
        self.in_use += size
        st = self.stats
        st.peak_in_use = max(st.peak_in_use, self.in_use)
        st.high_water = max(st.high_water, off + size)
        if self.events is not None:
            self.events.append(("a", off, size))
        return self.base + off

    # -- the two operations
    def alloc(self, nbytes: int) -> int | None:
        """An address for ``nbytes`` (None: nothing fits).

        The hot path (every request of a run that follows the layout): the k-th request has the k-th planned
        size and that range is free, checked by one bisection of the live starts; no call, no allocation but
        the list insert. Anything else (session creation, a size the plan does not have here, a taken range,
        a trace or record being kept) takes ``_alloc`` (lookahead, scratch regions, best fit)."""
        st = self.stats
        st.calls += 1
        k = self.k
        sizes = self._sizes
        if k < len(sizes) and nbytes > 0 and sizes[k] == -(-nbytes // ALIGN) * ALIGN \
                and self.trace is None and self.record is None and self.events is None:
            size = sizes[k]
            off = self._offs[k]
            end = off + size
            starts = self.starts
            i = bisect.bisect_right(starts, off)
            if end <= self.capacity and (i == 0 or starts[i - 1] + self.size_at[starts[i - 1]] <= off) \
                    and (i == len(starts) or starts[i] >= end):
                self.k = k + 1
                st.planned += 1
                starts.insert(i, off)
                self.size_at[off] = size
                in_use = self.in_use + size
                self.in_use = in_use
                if in_use > st.peak_in_use:
                    st.peak_in_use = in_use
                if end > st.high_water:
                    st.high_water = end
                return self.base + off
        return self._alloc(nbytes)

    def _alloc(self, nbytes: int) -> int | None:
        """``alloc`` off its hot path."""
        st = self.stats
        if nbytes <= 0:
            return None
        size = _round(nbytes)
        idx = self.k
        if self.phase == "create":
            offs = self.pool.get(size, [])
            for i, off in enumerate(offs):
                if self.is_free(off, size):
                    del offs[i]
                    self.k += 1
                    st.planned += 1
                    self._note(idx, nbytes, off, "planned")
                    return self._take(off, size, nbytes)
        plan = [] if self.phase == "create" else self._plan()
        for j in range(self.k, min(self.k + LOOKAHEAD, len(plan))):
            psize, poff = plan[j]
            if psize != size:
                continue
            self.k = j + 1
            if self.is_free(poff, size):
                st.planned += 1
                self._note(idx, nbytes, poff, "planned")
                return self._take(poff, size, nbytes)
            st.rejected += 1
            break
        off = self._in_scratch(size, plan) if plan else None
        if off is not None and self.is_free(off, size) and not self._fenced_off(off, size):
            st.in_scratch += 1
            self._note(idx, nbytes, off, "scratch")
            return self._take(off, size, nbytes)
        off = self._best_fit(size)
        if off is None:
            st.failures.append((int(nbytes), self.largest_gap()))
            self._note(idx, nbytes, None, "null")
            return None
        st.fallback += 1
        self._note(idx, nbytes, off, "fallback")
        return self._take(off, size, nbytes)

    def _note(self, idx: int, nbytes: int, off: int | None, how: str) -> None:
        if self.trace is not None:
            self.trace.append((self.phase, idx, int(nbytes), off, how))

    def free(self, ptr: int | None) -> bool:
        """Free the allocation at ``ptr``; False when it is not one of this allocator's (nothing is done: a
        double free is ignored, not fatal)."""
        if not ptr:
            return False
        off = ptr - self.base
        size = self.size_at.pop(off, None)
        if size is None:
            return False
        starts = self.starts
        del starts[bisect.bisect_left(starts, off)]
        self.in_use -= size
        if self.record is not None:
            self.record.append((self.runs if self.phase == "run" else 0, "f", off, self.requested.pop(off, size)))
        if self.events is not None:
            self.events.append(("f", off, size))
        if self._closing and not starts:
            self._release()
        return True

    def close(self) -> None:
        """The session is gone: release the buffer once its last allocation is freed (now, if none is live)."""
        self._closing = True
        if self.native is not None:
            self.native.stop()
        if not self.starts:
            self._release()

    def _release(self) -> None:
        if self.buffer is not None:
            self.buffer.release()
            self.buffer = None

    # -- C callbacks
    def provider_options(self) -> dict[str, str]:
        """The CUDA provider options that make a session allocate through this allocator."""
        if self._callbacks is None:
            def _alloc(n: int) -> int | None:
                try:
                    return self.alloc(n)
                except Exception:  # noqa: BLE001 - an exception must not cross into C: NULL is out of memory
                    self.stats.failures.append((int(n), -1))
                    return None

            def _free(p: int | None) -> None:
                try:
                    self.free(p)
                except Exception:  # noqa: BLE001
                    pass

            self._callbacks = (ALLOC_FN(_alloc), FREE_FN(_free), EMPTY_FN(lambda: None))
            _ALIVE.append(self)
        a, f, e = self._callbacks
        return {"gpu_external_alloc": str(ctypes.cast(a, ctypes.c_void_p).value),
                "gpu_external_free": str(ctypes.cast(f, ctypes.c_void_p).value),
                "gpu_external_empty_cache": str(ctypes.cast(e, ctypes.c_void_p).value)}


def from_layout(base: int, capacity: int, lay, fenced: Sequence[tuple[int, int]] = ()) -> PlacedAllocator:
    """A ``PlacedAllocator`` following ``lay`` (a ``passes.placement.Layout``; None: best fit only); ``fenced``:
    (offset, bytes) ranges of outputs bound inside the buffer (``PlacedAllocator.fenced``)."""
    if lay is None:
        return PlacedAllocator(base, capacity, fenced=fenced)
    return PlacedAllocator(base, capacity, {"create": lay.sequence("create"), "run": lay.sequence("run")},
                           lay.sequence("run", first_run=False),
                           {"run": lay.scratch_flags("run"), "later": lay.scratch_flags("run", first_run=False)},
                           fenced)


def on_device(capacity: int, lay, device_id: int = 0, fenced: Sequence[tuple[int, int]] = ()) -> PlacedAllocator:
    """A ``PlacedAllocator`` over a fresh ``DeviceBuffer`` of ``capacity`` bytes (MemoryError if the device
    cannot give that much)."""
    buf = DeviceBuffer(capacity, device_id)
    a = from_layout(buf.ptr, capacity, lay, fenced)
    a.buffer = buf
    return a


# ---------------------------------------------------------------------------------------------------
# The device buffer
# ---------------------------------------------------------------------------------------------------

def _cudart() -> ctypes.CDLL:
    """The CUDA runtime ONNX Runtime loaded (``onnxruntime.preload_dlls`` or the system's), found in this
    process' memory map."""
    path = None
    try:
        with open("/proc/self/maps") as f:
            for line in f:
                p = line.split()[-1] if line.strip() else ""
                if os.path.basename(p).startswith("libcudart.so"):
                    path = p
                    break
    except OSError:
        pass
    for cand in ([path] if path else []) + ["libcudart.so.13", "libcudart.so.12", "libcudart.so"]:
        try:
            return ctypes.CDLL(cand)
        except OSError:
            continue
    raise OSError("no CUDA runtime (libcudart) is loaded or loadable: cannot allocate remc's device buffer")


def device_free_bytes(device_id: int = 0) -> int:
    """Free bytes on the device (``cudaMemGetInfo``)."""
    lib = _cudart()
    if lib.cudaSetDevice(ctypes.c_int(device_id)) != 0:
        raise MemoryError(f"cudaSetDevice({device_id}) failed")
    free, total = ctypes.c_size_t(), ctypes.c_size_t()
    if lib.cudaMemGetInfo(ctypes.byref(free), ctypes.byref(total)) != 0:
        lib.cudaGetLastError()
        raise MemoryError("cudaMemGetInfo failed")
    return int(free.value)


class DeviceBuffer:
    """``nbytes`` of device memory from ``cudaMalloc`` (exactly that: no arena rounds it up)."""

    def __init__(self, nbytes: int, device_id: int = 0) -> None:
        self.lib = _cudart()
        self.nbytes = int(nbytes)
        if self.lib.cudaSetDevice(ctypes.c_int(device_id)) != 0:
            raise MemoryError(f"cudaSetDevice({device_id}) failed")
        ptr = ctypes.c_void_p()
        rc = self.lib.cudaMalloc(ctypes.byref(ptr), ctypes.c_size_t(max(self.nbytes, ALIGN)))
        if rc != 0 or not ptr.value:
            self.lib.cudaGetLastError()
            raise MemoryError(f"cudaMalloc of {self.nbytes} bytes failed (error {rc})")
        self.ptr = int(ptr.value)

    def release(self) -> None:
        if self.ptr:
            self.lib.cudaFree(ctypes.c_void_p(self.ptr))
            self.ptr = 0


# ---------------------------------------------------------------------------------------------------
# The layout of a model
# ---------------------------------------------------------------------------------------------------

EXACT_GAP = 0.02
"""A greedy layout more than this fraction above the live lower bound is improved by CP-SAT (``best_layout``)."""
EXACT_BLOCKS = 400
EXACT_MIN_BYTES = (16 << 20, 4 << 20)
"""CP-SAT places the largest blocks (at most EXACT_BLOCKS, each at least one of these sizes: one model per
size), the greedy the rest around them."""
EXACT_TIME_FACTOR = 20.0
"""``best_layout`` tries CP-SAT only with at least this many times the greedy layout's seconds left."""
EXACT_DETERMINISTIC_TIME = 1.0
"""CP-SAT's limit in its deterministic time units, on one worker: the same layout in every process (a plan's
prediction at compile time and its run must agree to the byte)."""


def best_layout(events, time_left: float | None = None):  # noqa: ANN001, ANN201 - GraphEvents or blocks -> Layout
    """``passes.placement.layout`` of ``events``; when its height is more than ``EXACT_GAP`` above the live
    lower bound, the largest blocks are placed again by CP-SAT
    (a rectangle per block: its lifetime by its bytes, ``AddNoOverlap2D``, the least height, started from the
    greedy offsets) and the rest by the greedy around them; the lower of the two. Deterministic. With large
    kernel temporaries the greedy orders leave gaps (U-Net b4 416x608 at 0.5: 15.6% above the bound; CP-SAT's
    layout of the same blocks reaches the bound). OR-Tools is a dependency of remc, so compile and run compute
    the same layout (the run's allocator recomputes it; without OR-Tools it would be the greedy one). CP-SAT's
    limit is deterministic, not wall time (ResNet50 b32 224² on the H200: 15 s for one solve, against about 1 s
    for the greedy), so with ``time_left`` (seconds; a compile's check) below ``EXACT_TIME_FACTOR`` times the
    greedy's own time the greedy layout is returned, marked ``upper_bound_only``: the run's layout (always
    with CP-SAT) is at most as tall."""
    from ..passes.placement import layout
    t0 = time.perf_counter()
    lay = layout(events)
    if lay.height <= lay.lower_bound * (1 + EXACT_GAP):
        return lay
    if time_left is not None and time_left < EXACT_TIME_FACTOR * (time.perf_counter() - t0):
        return dataclasses.replace(lay, upper_bound_only=True)
    # with a time left, CP-SAT also stops at EXACT_WALL_SHARE of it in wall time; a solve stopped so, before its
    # deterministic limit, is not the layout a run derives by itself, but it is valid and no taller than the
    # greedy (it starts from it) and than what the run derives (the same single-worker search, stopped
    # earlier): the best of it and the greedy is kept as the bound, and exact for a run that uses the layout
    # stored in the model (remc compile stores it). It was thrown away before: 15 s of a 60 s ResNet50 b32
    # compile on the H200 spent for the greedy layout.
    wall_end = None if time_left is None else time.perf_counter() + EXACT_WALL_SHARE * time_left
    best = lay
    for least in EXACT_MIN_BYTES:
        try:
            better = _cpsat_layout(lay, least, None if wall_end is None else wall_end - time.perf_counter())
        except ImportError:
            return lay
        except _WallTimeUp as stop:
            got = stop.layout if stop.layout is not None and stop.layout.height < best.height else best
            return dataclasses.replace(got, upper_bound_only=True)
        if better is not None and better.height < best.height:
            best = better
        if best.height <= best.lower_bound * (1 + EXACT_GAP):
            break
    return best


EXACT_WALL_SHARE = 0.5
"""With a time left (a compile's check), CP-SAT's layout solves stop at this share of it in wall time
(``best_layout``: ResNet50 b32 on the H200 spent 15 s in them and overran a 60 s compile by 9 s)."""


class _WallTimeUp(Exception):
    """A CP-SAT layout solve reached its wall-time limit before its deterministic one; ``layout``: the valid
    layout of its best solution by then (None: none)."""

    def __init__(self, layout=None) -> None:  # noqa: ANN001
        super().__init__("the CP-SAT layout solve reached its wall-time limit")
        self.layout = layout


def _cpsat_layout(lay, least: int, wall: float | None = None):  # noqa: ANN001, ANN202
    """The blocks of ``lay`` of at least ``least`` bytes (the EXACT_BLOCKS largest) placed by CP-SAT, the rest
    by the greedy around them (None: no block that large, no solution, or an invalid layout). ``wall``: seconds of
    wall time it may take; _WallTimeUp when it stops by that before its deterministic limit (its result would
    depend on the machine's speed)."""
    from ..passes.placement import overlaps, place_around
    from .cpsat import load_cp_model
    cp_model = load_cp_model()
    blocks = lay.blocks
    big = sorted((i for i, b in enumerate(blocks) if b.size >= least), key=lambda i: (-blocks[i].size, i))
    big = sorted(big[:EXACT_BLOCKS])
    if not big:
        return None
    top = lay.height // ALIGN
    m = cp_model.CpModel()
    height = m.NewIntVar(0, top, "height")
    xs, ys, offs = [], [], []
    for i in big:
        b = blocks[i]
        sz = b.size // ALIGN
        o = m.NewIntVar(0, top - sz, f"o{i}")
        m.Add(o + sz <= height)
        m.AddHint(o, lay.offsets[i] // ALIGN)
        offs.append(o)
        ys.append(m.NewIntervalVar(o, sz, o + sz, f"y{i}"))
        xs.append(m.NewFixedSizeIntervalVar(b.start, b.end - b.start, f"x{i}"))
    m.AddNoOverlap2D(xs, ys)
    m.AddCumulative(xs, [blocks[i].size // ALIGN for i in big], height)  # redundant: the live-bytes bound
    m.Minimize(height)
    solver = cp_model.CpSolver()
    solver.parameters.num_workers = 1
    solver.parameters.random_seed = 0
    solver.parameters.max_deterministic_time = EXACT_DETERMINISTIC_TIME
    if wall is not None:
        if wall <= 0:
            raise _WallTimeUp
        solver.parameters.max_time_in_seconds = wall
    status = solver.Solve(m)
    out = None
    if status in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        out = place_around(lay, {i: solver.Value(o) * ALIGN for i, o in zip(big, offs)},
                           f"cp-sat({least >> 20} MiB)+size")
        out = None if overlaps(out) else out
    if (wall is not None and status != cp_model.OPTIMAL and solver.wall_time >= wall
            and solver.deterministic_time < EXACT_DETERMINISTIC_TIME):
        raise _WallTimeUp(out)
    return out


def layout_tag(device: str, settings=None) -> str:  # noqa: ANN001
    """What a layout depends on besides the graph: the device kind, ONNX Runtime's version and the settings
    that change kernel memory (a stored layout is used only under the same tag)."""
    import onnxruntime

    from ..ir.device import parse_device
    from . import runtime
    settings = settings or runtime.DEFAULT_SETTINGS
    kind = parse_device(device)[0]
    tag = f"{kind}/onnxruntime {onnxruntime.__version__}/prepack={int(settings.prepack)}"
    return tag + (f"/cudnn={settings.cudnn_conv_algo_search}" if kind == "cuda" else "")


def plan_layout(model, events, device: str, settings=None, time_left: float | None = None):  # noqa: ANN001, ANN201
    """(the layout a run of ``model`` uses, a note): the layout ``model`` carries (``remc compile`` stores it in
    the metadata entry ``passes.placement.LAYOUT_KEY``) when it is for this device and settings and its
    allocations are exactly ``events``' (``layout_from_text``); else ``best_layout(events)``, with a note
    saying why when a stored one was set aside (empty when none was stored)."""
    from ..passes.placement import LAYOUT_KEY, blocks_of, layout_from_text
    text = next((p.value for p in model.metadata_props if p.key == LAYOUT_KEY), None)
    if text is None:
        return best_layout(events, time_left), ""
    lay, why = layout_from_text(text, blocks_of(events), layout_tag(device, settings))
    if lay is not None:
        return lay, ""
    return best_layout(events, time_left), f"the model's stored layout was not used: {why}; derived again here"


def store_layout(model, lay, device: str, settings=None) -> None:  # noqa: ANN001
    """Write ``lay`` into ``model``'s metadata (``passes.placement.LAYOUT_KEY``), replacing any stored one."""
    from ..passes.placement import LAYOUT_KEY, layout_to_text
    keep = [(p.key, p.value) for p in model.metadata_props if p.key != LAYOUT_KEY]
    del model.metadata_props[:]
    for k, v in keep + [(LAYOUT_KEY, layout_to_text(lay, layout_tag(device, settings)))]:
        e = model.metadata_props.add()
        e.key, e.value = k, v


def model_layout(model, device: str = "cuda", settings=None, *, measure_kernels: bool | None = None,
                 bound_outputs: bool = False):
    """remc's layout (``best_layout``) of ``model``'s allocations on ``device``: the events
    ``passes.arena.graph_events`` predicts, with kernel memory measured per op signature on the device
    (``backends.scratch``; when ``measure_kernels`` is None: where the CUDA provider is available);
    ``bound_outputs``: the graph outputs are written to the caller's buffers (not in the layout). Without
    ``bound_outputs`` the layout ``model`` carries is used when it holds (``plan_layout``)."""
    from ..passes.arena import graph_events
    from . import runtime
    from .scratch import kernel_memory
    settings = settings or runtime.DEFAULT_SETTINGS
    if measure_kernels is None:
        measure_kernels = not device.startswith("cuda") or runtime.cuda_available()
    km = kernel_memory(model, device, settings=settings) if measure_kernels else None
    events = graph_events(model, device, km, bound_outputs=bound_outputs)
    if bound_outputs:
        return best_layout(events)
    return plan_layout(model, events, device, settings)[0]
