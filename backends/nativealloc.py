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
"""
from __future__ import annotations

import functools
from typing import Any

import numpy as np

# state words (int64), after the struct's four fields
MODE, K, N, SIZES, OFFS, SLOTS, BASE, CAP, BITMAP, UNIQ, NUNIQ, LIVE, IN_USE, PEAK, HW, PLANNED, CALLS, \
    PY_ALLOC, PY_FREE, DIRTY, FREES = range(21)
NSTATE = 24
HEAD = 4
"""``struct OrtAllocator`` of API version 13: version (padded to 8 bytes), Alloc, Free, Info; the state
words follow it in the same block, so ``this`` (the first argument of every callback) finds them."""
GRANULE = 256


@functools.lru_cache(maxsize=1)
def compiled() -> tuple[int, int] | None:
    """The addresses of the native ``Alloc`` and ``Free`` (None: numba is not installed or failed to compile
    them; the Python callbacks serve every request then)."""
    try:
        return _compile()
    except Exception:  # noqa: BLE001 - numba missing, or an llvmlite/numba version that cannot build them
        return None


def _compile() -> tuple[int, int]:  # pragma: no cover - exercised through the allocator when numba is there
    import numba
    from llvmlite import ir
    from numba import types
    from numba.extending import intrinsic

    @intrinsic
    def _words(typingctx, addr):  # noqa: ANN001, ANN202 - int64 address -> int64*
        sig = types.CPointer(types.int64)(types.int64)

        def codegen(context, builder, signature, args):  # noqa: ANN001, ANN202
            return builder.inttoptr(args[0], ir.IntType(64).as_pointer())
        return sig, codegen

    @intrinsic
    def _uwords(typingctx, addr):  # noqa: ANN001, ANN202 - int64 address -> uint64*
        sig = types.CPointer(types.uint64)(types.int64)

        def codegen(context, builder, signature, args):  # noqa: ANN001, ANN202
            return builder.inttoptr(args[0], ir.IntType(64).as_pointer())
        return sig, codegen

    @intrinsic
    def _vp(typingctx, addr):  # noqa: ANN001, ANN202 - int64 address -> void*
        sig = types.voidptr(types.int64)

        def codegen(context, builder, signature, args):  # noqa: ANN001, ANN202
            return builder.inttoptr(args[0], ir.IntType(8).as_pointer())
        return sig, codegen

    @intrinsic
    def _addr(typingctx, p):  # noqa: ANN001, ANN202 - void* -> int64
        sig = types.int64(types.voidptr)

        def codegen(context, builder, signature, args):  # noqa: ANN001, ANN202
            return builder.ptrtoint(args[0], ir.IntType(64))
        return sig, codegen

    @intrinsic
    def _call_alloc(typingctx, fn, this, n):  # noqa: ANN001, ANN202 - (*fn)(this, n)
        sig = types.voidptr(types.int64, types.voidptr, types.uint64)

        def codegen(context, builder, signature, args):  # noqa: ANN001, ANN202
            i8p = ir.IntType(8).as_pointer()
            fnty = ir.FunctionType(i8p, [i8p, ir.IntType(64)])
            return builder.call(builder.inttoptr(args[0], fnty.as_pointer()), [args[1], args[2]])
        return sig, codegen

    @intrinsic
    def _call_free(typingctx, fn, this, p):  # noqa: ANN001, ANN202 - (*fn)(this, p)
        sig = types.void(types.int64, types.voidptr, types.voidptr)

        def codegen(context, builder, signature, args):  # noqa: ANN001, ANN202
            i8p = ir.IntType(8).as_pointer()
            fnty = ir.FunctionType(ir.VoidType(), [i8p, i8p])
            builder.call(builder.inttoptr(args[0], fnty.as_pointer()), [args[1], args[2]])
            return context.get_dummy_value()
        return sig, codegen

    @numba.njit(inline="always")
    def _bits(bm, g0: int, g1: int, value: int) -> bool:
        """value -1: whether bits [g0, g1) are all clear; 1: set them; 0: clear them."""
        w0, w1 = g0 >> 6, (g1 - 1) >> 6
        for w in range(w0, w1 + 1):
            lo = g0 - (w << 6) if w == w0 else 0
            hi = g1 - (w << 6) if w == w1 else 64
            mask = np.uint64(0xFFFFFFFFFFFFFFFF) if hi - lo == 64 else \
                ((np.uint64(1) << np.uint64(hi - lo)) - np.uint64(1)) << np.uint64(lo)
            if value < 0:
                if bm[w] & mask:
                    return False
            elif value > 0:
                bm[w] |= mask
            else:
                bm[w] &= ~mask
        return True

    @numba.cfunc(types.voidptr(types.voidptr, types.uint64), nopython=True, cache=True)
    def native_alloc(this, n):  # noqa: ANN001, ANN202
        s = numba.carray(this, HEAD + NSTATE, dtype=np.int64)[HEAD:]
        if s[MODE] == 1 and n > 0:
            k = s[K]
            size = (np.int64(n) + GRANULE - 1) // GRANULE * GRANULE
            if k < s[N] and _words(s[SIZES])[k] == size:
                off = _words(s[OFFS])[k]
                end = off + size
                bm = _uwords(s[BITMAP])
                if end <= s[CAP] and _bits(bm, off // GRANULE, end // GRANULE, -1):
                    _bits(bm, off // GRANULE, end // GRANULE, 1)
                    _words(s[LIVE])[_words(s[SLOTS])[k]] = size
                    s[K] = k + 1
                    s[PLANNED] += 1
                    s[CALLS] += 1
                    s[DIRTY] = 1
                    u = s[IN_USE] + size
                    s[IN_USE] = u
                    if u > s[PEAK]:
                        s[PEAK] = u
                    if end > s[HW]:
                        s[HW] = end
                    return _vp(s[BASE] + off)
        return _call_alloc(s[PY_ALLOC], this, n)

    @numba.cfunc(types.void(types.voidptr, types.voidptr), nopython=True, cache=True)
    def native_free(this, p):  # noqa: ANN001, ANN202
        s = numba.carray(this, HEAD + NSTATE, dtype=np.int64)[HEAD:]
        addr = _addr(p)
        if s[MODE] == 1 and addr != 0:
            off = addr - s[BASE]
            if 0 <= off < s[CAP] and off % GRANULE == 0:
                uniq = _words(s[UNIQ])
                lo, hi = 0, s[NUNIQ]
                while lo < hi:
                    mid = (lo + hi) >> 1
                    if uniq[mid] < off:
                        lo = mid + 1
                    else:
                        hi = mid
                if lo < s[NUNIQ] and uniq[lo] == off:
                    live = _words(s[LIVE])
                    size = live[lo]
                    if size > 0:
                        _bits(_uwords(s[BITMAP]), off // GRANULE, (off + size) // GRANULE, 0)
                        live[lo] = 0
                        s[IN_USE] -= size
                        s[FREES] += 1
                        s[DIRTY] = 1
                        return
        _call_free(s[PY_FREE], this, p)

    return int(native_alloc.address), int(native_free.address)


class NativeTables:
    """The native side's tables for one ``PlacedAllocator`` (its bitmap, the layout's offsets and the live
    size at each, the run's plan) and the state words of its ``OrtAllocator`` block ``words`` (a view of the
    block's int64s after the four struct fields). ``pa`` keeps its Python structures; ``pull`` rebuilds them
    from these tables before Python serves a request, ``push_alloc``/``push_free`` record what it did."""

    def __init__(self, pa: Any, words: np.ndarray) -> None:
        self.pa = pa
        self.s = words
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

    # -- what the native side serves
    def begin_run(self) -> None:
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
        self.pull()
        self.s[MODE] = 0

    # -- keeping the Python allocator in step
    def pull(self) -> None:
        """Bring ``pa`` up to date with what the native side served since the last pull."""
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
        pa = self.pa
        if ptr:
            off = int(ptr) - int(pa.base)
            size = pa.size_at.get(off)
            if size is not None:
                self._mark(off, size, True)
        self._sync_state()

    def push_free(self, ptr: int | None, size: int | None) -> None:
        """``pa`` freed the block of ``size`` bytes at ``ptr``."""
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
