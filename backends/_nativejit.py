"""The native ``Alloc`` and ``Free`` of ``backends.nativealloc``, compiled by numba on import (cached on disk).

Imported only by ``nativealloc.compiled`` (numba is an optional dependency: the ``fast`` extra). The state words
and their indices are ``nativealloc``'s."""
# ruff: noqa: ANN001, ANN202
from __future__ import annotations

import numba
import numpy as np
from llvmlite import ir
from numba import types
from numba.extending import intrinsic

from .nativealloc import (
    BASE,
    BITMAP,
    CALLS,
    CAP,
    DIRTY,
    FREES,
    GRANULE,
    HEAD,
    HW,
    IN_USE,
    LIVE,
    MODE,
    NSTATE,
    NUNIQ,
    OFFS,
    PEAK,
    PLANNED,
    PY_ALLOC,
    PY_FREE,
    SIZES,
    SLOTS,
    UNIQ,
    K,
    N,
)


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
