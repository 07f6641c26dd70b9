"""An optional native hot path for remc's CPU allocator (``backends.capi``): the layout's walk in machine code.

Inside a run every callback into Python costs 10-50 µs on the shared machine (the interpreter enters cold
between kernels; `tools/capi_alloc_speed.py`), which made small CPU runs about 1.5x slower than on ONNX
Runtime's arena. With numba installed (``pip install -e '.[fast]'``; numba compiles through llvmlite, no C
compiler), the ``OrtAllocator``'s ``Alloc`` and ``Free`` are native functions (``numba.cfunc``) that serve
the planned requests of a run themselves:

- ``Alloc``: the k-th request of the run, rounded to 256 bytes, has the k-th planned size and its range is
  free in an occupancy bitmap (one bit per 256 bytes of remc's buffer): mark the bits, count, return
  ``base + offset``; no Python.
- ``Free``: a pointer at one of the layout's offsets that the native side handed out: clear its bits.

Everything else (session creation, a size or a place the layout does not have, overflow blocks, a trace or a
record being kept, and every request after the session is closed) calls the ``PlacedAllocator``'s Python
callbacks as before, which first take over what the native side did (``NativeTables.pull``) and hand their
result back (``push_alloc``, ``push_free``): the bitmap and the table of live blocks are the one truth, and the
Python allocator's checked interval set is rebuilt from them whenever it is consulted. Without numba, or with
``native=False``, the Python callbacks serve every request (the same addresses, slower).

The tables are shared by every thread that calls the allocator, under one lock (a spin lock, a state word taken
by compare-and-swap): the native ``Alloc`` and ``Free`` hold it while they read and change the tables and let it
go before they call Python; the Python callbacks (and ``pull``, ``begin_run``, ``stop`` from the thread that runs
the session) hold it while they serve a request or take over the tables (``NativeTables.held``, reentrant within
a thread). A thread that waits for it holds nothing else (not the GIL), so it cannot deadlock. ONNX Runtime's CPU
kernels request memory from the thread that calls ``Run`` (measured with 1 and 2 intra-op threads: the
layout's k-th-request order assumes it too); the lock makes a request from another thread safe, not planned
(served by the Python callbacks if it is not the k-th planned one).
"""
from __future__ import annotations

import contextlib
import ctypes
import functools
import threading
from collections.abc import Iterator
from typing import Any

import numpy as np

# state words (int64), after the struct's four fields
MODE, K, N, SIZES, OFFS, SLOTS, BASE, CAP, BITMAP, UNIQ, NUNIQ, LIVE, IN_USE, PEAK, HW, PLANNED, CALLS, \
    PY_ALLOC, PY_FREE, DIRTY, FREES, LOCK = range(22)
NSTATE = 24
HEAD = 4
"""``struct OrtAllocator`` of API version 13: version (padded to 8 bytes), Alloc, Free, Info; the state
words follow it in the same block, so ``this`` (the first argument of every callback) finds them."""
GRANULE = 256


@functools.lru_cache(maxsize=1)
def compiled() -> tuple[int, int, int, int] | None:
    """The addresses of the native ``Alloc``, ``Free`` and the lock's take and release (None: numba is not
    installed or failed to compile them; the Python callbacks serve every request then)."""
    try:
        return _compile()
    except Exception:  # noqa: BLE001 - numba missing, or an llvmlite/numba version that cannot build them
        return None


def _compile() -> tuple[int, int, int, int]:
    from . import _nativejit  # numba compiles (or loads from its cache) the functions on import
    return (int(_nativejit.native_alloc.address), int(_nativejit.native_free.address),
            int(_nativejit.native_lock.address), int(_nativejit.native_unlock.address))


_LOCK_FN = ctypes.CFUNCTYPE(None, ctypes.c_void_p)


class NativeTables:
    """The native side's tables for one ``PlacedAllocator`` (its bitmap, the layout's offsets and the live
    size at each, the run's plan) and the state words of its ``OrtAllocator`` block ``words`` (a view of the
    block's int64s after the four struct fields). ``pa`` keeps its Python structures; ``pull`` rebuilds them
    from these tables before Python serves a request, ``push_alloc``/``push_free`` record what it did."""

    def __init__(self, pa: Any, words: np.ndarray) -> None:
        self.pa = pa
        self.s = words
        fns = compiled()
        assert fns is not None, "NativeTables without the native functions"
        self._this = int(words.ctypes.data) - HEAD * 8  # the OrtAllocator block the state words follow
        self._take, self._release = _LOCK_FN(fns[2]), _LOCK_FN(fns[3])
        self._owner: int | None = None
        self._depth = 0
        cap = int(pa.capacity)
        self.bitmap = np.zeros(-(-cap // GRANULE // 64) + 1, dtype=np.uint64)
        offs = {int(o) for seq in pa.plans.values() for _, o in seq}
        offs |= {int(o) for _, o in (pa.later_run or [])}
        self.uniq = np.array(sorted(offs), dtype=np.int64)
        self.live = np.zeros(len(self.uniq) + 1, dtype=np.int64)
        self.extra: dict[int, int] = {}
        """Live blocks at offsets that are not the layout's (best fit, scratch regions): off -> size."""
        self._plans: dict[bool, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}
        s = self.s
        s[:] = 0
        s[BASE], s[CAP] = int(pa.base), cap
        s[BITMAP], s[UNIQ], s[NUNIQ], s[LIVE] = (self.bitmap.ctypes.data, self.uniq.ctypes.data, len(self.uniq),
                                                   self.live.ctypes.data)

    @contextlib.contextmanager
    def held(self) -> Iterator[None]:
        """Hold the tables' lock (reentrant within one thread): the native side waits meanwhile."""
        me = threading.get_ident()
        if self._owner == me:
            self._depth += 1
            try:
                yield
            finally:
                self._depth -= 1
            return
        self._take(self._this)  # ctypes lets the GIL go while it waits; the holder never needs it
        self._owner, self._depth = me, 1
        try:
            yield
        finally:
            self._owner, self._depth = None, 0
            self._release(self._this)

    # -- what the native side serves
    def begin_run(self) -> None:
        with self.held():
            self._begin_run()

    def _begin_run(self) -> None:
        """``pa.begin_run`` was called: the native walk follows the run's plan from its first request; it
        serves requests only when ``pa`` keeps no trace, record or events (those need every request in Python).
        ``pa`` pulled before it started the run."""
        pa = self.pa
        later = bool(pa._later())
        if later not in self._plans:
            plan = pa._plan()
            sizes = np.array([int(z) for z, _ in plan] + [0], dtype=np.int64)
            offs = np.array([int(o) for _, o in plan] + [0], dtype=np.int64)
            slots = np.searchsorted(self.uniq, offs).astype(np.int64)
            self._plans[later] = (sizes, offs, slots)
        sizes, offs, slots = self._plans[later]
        s = self.s
        s[SIZES], s[OFFS], s[SLOTS] = sizes.ctypes.data, offs.ctypes.data, slots.ctypes.data
        s[N] = len(sizes) - 1
        s[K] = pa.k
        s[MODE] = int(pa.trace is None and pa.record is None and pa.events is None and not pa._closing)

    def stop(self) -> None:
        """Python serves every request from now on (the session is closing)."""
        with self.held():
            self.pull()
            self.s[MODE] = 0

    # -- keeping the Python allocator in step
    def pull(self) -> None:
        """Bring ``pa`` up to date with what the native side served since the last pull."""
        with self.held():
            self._pull()

    def _pull(self) -> None:
        s, pa = self.s, self.pa
        st = pa.stats
        st.calls += int(s[CALLS])
        st.planned += int(s[PLANNED])
        s[CALLS] = s[PLANNED] = 0
        st.peak_in_use = max(st.peak_in_use, int(s[PEAK]))
        st.high_water = max(st.high_water, int(s[HW]))
        if s[DIRTY]:
            idx = np.flatnonzero(self.live[:len(self.uniq)])
            size_at = dict(zip(self.uniq[idx].tolist(), self.live[idx].tolist()))
            size_at.update(self.extra)
            pa.size_at = size_at
            pa.starts = sorted(size_at)
            pa.in_use = int(s[IN_USE])
            pa.k = int(s[K])
            s[DIRTY] = 0

    def _sync_state(self) -> None:
        s, pa = self.s, self.pa
        s[K], s[IN_USE] = pa.k, pa.in_use
        s[PEAK], s[HW] = pa.stats.peak_in_use, pa.stats.high_water

    def push_alloc(self, ptr: int | None) -> None:
        """``pa`` placed a block at ``ptr`` (None or outside its buffer: nothing to record)."""
        with self.held():
            self._push_alloc(ptr)

    def _push_alloc(self, ptr: int | None) -> None:
        pa = self.pa
        if ptr:
            off = int(ptr) - int(pa.base)
            size = pa.size_at.get(off)
            if size is not None:
                self._mark(off, size, True)
        self._sync_state()

    def push_free(self, ptr: int | None, size: int | None) -> None:
        """``pa`` freed the block of ``size`` bytes at ``ptr``."""
        with self.held():
            self._push_free(ptr, size)

    def _push_free(self, ptr: int | None, size: int | None) -> None:
        if ptr and size:
            self._mark(int(ptr) - int(self.pa.base), int(size), False)
        self._sync_state()

    def _mark(self, off: int, size: int, taken: bool) -> None:
        g0, g1 = off // GRANULE, -(-(off + size) // GRANULE)
        w0, w1 = g0 >> 6, (g1 - 1) >> 6
        for w in range(w0, w1 + 1):
            lo = g0 - (w << 6) if w == w0 else 0
            hi = g1 - (w << 6) if w == w1 else 64
            mask = np.uint64(((1 << (hi - lo)) - 1) << lo)
            self.bitmap[w] = (self.bitmap[w] | mask) if taken else (self.bitmap[w] & ~mask)
        i = int(np.searchsorted(self.uniq, off))
        at_layout = i < len(self.uniq) and int(self.uniq[i]) == off
        if taken:
            if at_layout and self.live[i] == 0:
                self.live[i] = size
            else:
                self.extra[off] = size
        elif off in self.extra:
            del self.extra[off]
        elif at_layout:
            self.live[i] = 0
