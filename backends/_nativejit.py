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
    LOCK,
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


def _cast(result):  # noqa: ANN001, ANN202
    """An intrinsic that reinterprets an int64 address as ``result`` (a numba pointer type)."""
    @intrinsic
    def cast(typingctx, addr):  # noqa: ANN001, ANN202
        def codegen(context, builder, signature, args):  # noqa: ANN001, ANN202
            return builder.inttoptr(args[0], context.get_value_type(result))
        return result(types.int64), codegen
    return cast


_words = _cast(types.CPointer(types.int64))
_uwords = _cast(types.CPointer(types.uint64))
_vp = _cast(types.voidptr)


@intrinsic
def _addr(typingctx, p):  # noqa: ANN001, ANN202 - void* -> int64
    sig = types.int64(types.voidptr)

    def codegen(context, builder, signature, args):  # noqa: ANN001, ANN202
        return builder.ptrtoint(args[0], ir.IntType(64))
    return sig, codegen


def _caller(result, arg):  # noqa: ANN001, ANN202
    """An intrinsic ``(fn, this, arg) -> (*fn)(this, arg)``: the Python callback of the same name, where ``fn``
    is its address, ``result`` its return type (voidptr or void) and ``arg`` its second argument's."""
    @intrinsic
    def call(typingctx, fn, this, a):  # noqa: ANN001, ANN202
        def codegen(context, builder, signature, args):  # noqa: ANN001, ANN202
            ret = context.get_value_type(result) if result is not types.void else ir.VoidType()
            fnty = ir.FunctionType(ret, [ir.IntType(8).as_pointer(), context.get_value_type(arg)])
            out = builder.call(builder.inttoptr(args[0], fnty.as_pointer()), [args[1], args[2]])
            return out if result is not types.void else context.get_dummy_value()
        return result(types.int64, types.voidptr, arg), codegen
    return call


_call_alloc = _caller(types.voidptr, types.uint64)
_call_free = _caller(types.void, types.voidptr)


@intrinsic
def _try_lock(typingctx, addr):  # noqa: ANN001, ANN202 - compare-and-swap the word at addr from 0 to 1
    def codegen(context, builder, signature, args):  # noqa: ANN001, ANN202
        ptr = builder.inttoptr(args[0], ir.IntType(64).as_pointer())
        zero, one = ir.Constant(ir.IntType(64), 0), ir.Constant(ir.IntType(64), 1)
        return builder.extract_value(builder.cmpxchg(ptr, zero, one, "acquire", "monotonic"), 1)
    return types.boolean(types.int64), codegen


@intrinsic
def _unlock(typingctx, addr):  # noqa: ANN001, ANN202 - store 0 to the word at addr with release order
    def codegen(context, builder, signature, args):  # noqa: ANN001, ANN202
        ptr = builder.inttoptr(args[0], ir.IntType(64).as_pointer())
        builder.store_atomic(ir.Constant(ir.IntType(64), 0), ptr, "release", 8)
        return context.get_dummy_value()
    return types.void(types.int64), codegen


@numba.njit(inline="always")
def _lock_word(this) -> int:  # noqa: ANN001
    return _addr(this) + (HEAD + LOCK) * 8


@numba.njit(inline="always")
def _acquire(this) -> None:  # noqa: ANN001
    w = _lock_word(this)
    while not _try_lock(w):
        pass


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


@numba.njit(inline="always")
def _serve_alloc(this, s, n) -> int:  # noqa: ANN001
    """The planned block's address, 0 when Python must serve the request; under the state's lock."""
    _acquire(this)
    p = _alloc_planned(s, n)
    _unlock(_lock_word(this))
    return p


@numba.njit(inline="always")
def _alloc_planned(s, n) -> int:  # noqa: ANN001
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
                return s[BASE] + off
    return 0


@numba.njit(inline="always")
def _free_planned(s, addr) -> bool:  # noqa: ANN001
    """Whether the block at ``addr`` was one the native side handed out (then freed here)."""
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
                    return True
    return False


@numba.cfunc(types.voidptr(types.voidptr, types.uint64), nopython=True, cache=True)
def native_alloc(this, n):  # noqa: ANN001, ANN202
    s = numba.carray(this, HEAD + NSTATE, dtype=np.int64)[HEAD:]
    p = _serve_alloc(this, s, n)
    if p != 0:
        return _vp(p)
    return _call_alloc(s[PY_ALLOC], this, n)


@numba.cfunc(types.void(types.voidptr, types.voidptr), nopython=True, cache=True)
def native_free(this, p):  # noqa: ANN001, ANN202
    s = numba.carray(this, HEAD + NSTATE, dtype=np.int64)[HEAD:]
    _acquire(this)
    done = _free_planned(s, _addr(p))
    _unlock(_lock_word(this))
    if not done:
        _call_free(s[PY_FREE], this, p)


@numba.cfunc(types.void(types.voidptr), nopython=True, cache=True)
def native_lock(this):  # noqa: ANN001, ANN202
    """Take the state's lock (the Python callbacks hold it while they read or change the tables)."""
    _acquire(this)


@numba.cfunc(types.void(types.voidptr), nopython=True, cache=True)
def native_unlock(this):  # noqa: ANN001, ANN202
    _unlock(_lock_word(this))
