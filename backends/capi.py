"""CPU sessions of ONNX Runtime's C API (through ``ctypes``) whose every tensor comes from remc's allocator.

The Python binding offers no custom CPU allocator, but the onnxruntime wheel ships the C library
(``onnxruntime/capi/libonnxruntime.so.<version>``, exporting ``OrtGetApiBase``), and its C API does:
``RegisterAllocator(env, OrtAllocator*)`` puts a caller's allocator (a struct of ``Alloc``/``Free``/``Info``
function pointers, here ``ctypes`` callbacks into ``backends.placement.PlacedAllocator``) into the
environment, and a session made with ``session.use_env_allocators=1`` uses it for every CPU allocation:
the initializers it copies (the small ones), pre-packed weights (session creation), every node output,
every kernel's scratch (``GetTempSpaceAllocator``: MLAS' im2col buffer) and the graph outputs. Measured on
MobileNetV2 (test size): 2329 requests, exactly the number remc's layout has, node order and outputs equal to
the Python binding's. Memory that bypasses the session's allocator (MLAS' thread-local packing buffers, the
thread pool, the model proto) is outside the buffer, on ONNX Runtime's arena as here: neither counts it.

What the C API lacks, and how it is set here (checked at run time, else ``RuntimeFailure``):

- ``ExecutionOrder.PRIORITY_BASED`` and ``enable_mem_reuse = false`` have no C function (the binding writes
  them into ``SessionOptions``). ``OrtSessionOptions`` starts with ``onnxruntime::SessionOptions``
  (``session_options.h``): ``execution_mode`` (int, offset 0), ``execution_order`` (int, 4),
  ``enable_profiling`` (bool, 8), ..., ``enable_mem_pattern``, ``enable_mem_reuse``, ``enable_cpu_mem_arena``
  (three adjacent bools). ``_set_order_and_reuse`` finds the bools by flipping them with the C functions
  that exist (``DisableMemPattern`` clears the first, ``DisableCpuMemArena`` the third, both probed on a
  scratch options object), checks offsets 0/4 with ``SetSessionExecutionMode``, then writes 1 at offset 4
  and 0 into the middle bool. ``tests/test_capi.py`` checks that the executed node order is the binding's.
- A NULL from ``Alloc`` is not checked by ONNX Runtime 1.32 (the process segfaults). A request that does not
  fit the buffer is served from a separate host block instead, recorded as a failure, and the run's
  terminate flag is set (``RunOptionsSetTerminate``), so ONNX Runtime stops before the next node and the run
  ends in ``OutOfMemory`` naming the request and the node remc's layout has there. A session whose creation
  overflowed is released and raises the same way.

``Session`` mimics the part of ``onnxruntime.InferenceSession`` and its IOBinding that ``runtime.Runner``
uses (``get_inputs``, ``get_outputs``, ``io_binding``, ``run_with_iobinding``), so the runner, ``measure``
and ``compile --verify`` drive it unchanged; ``Binding.bind_output_buffer`` writes an output into a caller's
array (``Run``'s pre-allocated outputs), which ``backends.trainer``'s fixed-buffer loop uses.

Speed: the callbacks are Python. ``PlacedAllocator.alloc`` has a hot path for a request at its planned
offset. ``tools/capi_alloc_speed.py`` measures where the time goes: on MobileNetV2 and ResNet50 (test size)
callbacks that only look the address up in a table ran as fast as ONNX Runtime's arena, so the ``ctypes``
boundary itself costs little and the rest is remc's bookkeeping (BENCHMARKS, last section).
"""
from __future__ import annotations

import contextlib
import ctypes as C
import functools
import glob
import os
import re
import weakref
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import onnx
from onnx import helper

from ..ir.errors import RuntimeFailure
from . import nativealloc

API_VERSION = 13
"""The ``OrtApi`` version requested: its function table is a prefix of every later one."""

_P = C.c_void_p
_S = C.c_void_p  # OrtStatus*: NULL is success

_FUNCS: dict[str, tuple[int, object, tuple]] = {
    # name: (index in OrtApi, restype, argtypes): onnxruntime_c_api.h, struct OrtApi, in declaration order
    "CreateStatus": (0, _S, (C.c_int, C.c_char_p)),
    "GetErrorMessage": (2, C.c_char_p, (_S,)),
    "CreateEnv": (3, _S, (C.c_int, C.c_char_p, C.POINTER(_P))),
    "CreateSessionFromArray": (8, _S, (_P, C.c_char_p, C.c_size_t, _P, C.POINTER(_P))),
    "Run": (9, _S, (_P, _P, C.POINTER(C.c_char_p), C.POINTER(_P), C.c_size_t, C.POINTER(C.c_char_p),
                    C.c_size_t, C.POINTER(_P))),
    "CreateSessionOptions": (10, _S, (C.POINTER(_P),)),
    "SetSessionExecutionMode": (13, _S, (_P, C.c_int)),
    "EnableProfiling": (14, _S, (_P, C.c_char_p)),
    "DisableMemPattern": (17, _S, (_P,)),
    "DisableCpuMemArena": (19, _S, (_P,)),
    "SetSessionLogSeverityLevel": (22, _S, (_P, C.c_int)),
    "SetSessionGraphOptimizationLevel": (23, _S, (_P, C.c_int)),
    "SetIntraOpNumThreads": (24, _S, (_P, C.c_int)),
    "CreateRunOptions": (39, _S, (C.POINTER(_P),)),
    "RunOptionsSetTerminate": (46, _S, (_P,)),
    "RunOptionsUnsetTerminate": (47, _S, (_P,)),
    "CreateTensorWithDataAsOrtValue": (49, _S, (_P, _P, C.c_size_t, C.POINTER(C.c_int64), C.c_size_t, C.c_int,
                                                C.POINTER(_P))),
    "GetTensorMutableData": (51, _S, (_P, C.POINTER(_P))),
    "GetTensorElementType": (60, _S, (_P, C.POINTER(C.c_int))),
    "GetDimensionsCount": (61, _S, (_P, C.POINTER(C.c_size_t))),
    "GetDimensions": (62, _S, (_P, C.POINTER(C.c_int64), C.c_size_t)),
    "GetTensorTypeAndShape": (65, _S, (_P, C.POINTER(_P))),
    "CreateCpuMemoryInfo": (69, _S, (C.c_int, C.c_int, C.POINTER(_P))),
    "MemoryInfoGetName": (71, _S, (_P, C.POINTER(C.c_char_p))),
    "GetAllocatorWithDefaultOptions": (78, _S, (C.POINTER(_P),)),
    "ReleaseStatus": (93, None, (_S,)),
    "ReleaseSession": (95, None, (_P,)),
    "ReleaseValue": (96, None, (_P,)),
    "ReleaseRunOptions": (97, None, (_P,)),
    "ReleaseTensorTypeAndShapeInfo": (99, None, (_P,)),
    "ReleaseSessionOptions": (100, None, (_P,)),
    "SessionEndProfiling": (110, _S, (_P, _P, C.POINTER(C.c_char_p))),
    "AddSessionConfigEntry": (130, _S, (_P, C.c_char_p, C.c_char_p)),
    "RegisterAllocator": (176, _S, (_P, _P)),
    "UnregisterAllocator": (177, _S, (_P, _P)),
}

_NSTATE = 24  # nativealloc.NSTATE
ALLOC_FN = C.CFUNCTYPE(_P, _P, C.c_size_t)
FREE_FN = C.CFUNCTYPE(None, _P, _P)
INFO_FN = C.CFUNCTYPE(_P, _P)


_ALIVE: list = []
"""Every allocator struct, its callbacks and overflow blocks handed to ONNX Runtime: they must outlive every
tensor made from them (an output may be released after its session), so they are never collected."""


class _OrtAllocator(C.Structure):
    """``struct OrtAllocator`` of API version 13 (no ``Reserve``: ONNX Runtime then reserves with ``Alloc``),
    followed by the native hot path's state words (``backends.nativealloc``; ONNX Runtime reads only the four
    fields of its version)."""

    _fields_ = [("version", C.c_uint32), ("Alloc", _P), ("Free", _P), ("Info", INFO_FN),
                ("state", C.c_int64 * _NSTATE)]


class _Api:
    """The C API's functions used here, the process' ``OrtEnv`` and a CPU ``OrtMemoryInfo``."""

    def __init__(self, path: str) -> None:
        import onnxruntime as ort
        self.lib = C.CDLL(path)

        class _Base(C.Structure):
            _fields_ = [("GetApi", C.CFUNCTYPE(_P, C.c_uint32)), ("GetVersionString", C.CFUNCTYPE(C.c_char_p))]

        self.lib.OrtGetApiBase.restype = C.POINTER(_Base)
        base = self.lib.OrtGetApiBase().contents
        self.version = base.GetVersionString().decode()
        if self.version != ort.__version__:
            raise RuntimeFailure(f"{path} is onnxruntime {self.version}, the Python binding {ort.__version__}")
        api = base.GetApi(API_VERSION)
        if not api:
            raise RuntimeFailure(f"onnxruntime {self.version} does not offer C API version {API_VERSION}")
        table = C.cast(api, C.POINTER(_P))
        for name, (i, res, args) in _FUNCS.items():
            setattr(self, name, C.CFUNCTYPE(res, *args)(table[i]))
        st = self.CreateStatus(1, b"remc")
        if self.GetErrorMessage(st) != b"remc":
            raise RuntimeFailure("the C API's function table is not the one remc expects")
        self.ReleaseStatus(st)
        self.mem_info = _P()
        self.check(self.CreateCpuMemoryInfo(0, 0, C.byref(self.mem_info)))  # OrtDeviceAllocator, default
        name = C.c_char_p()
        self.check(self.MemoryInfoGetName(self.mem_info, C.byref(name)))
        if name.value != b"Cpu":
            raise RuntimeFailure("the C API's function table is not the one remc expects")
        self.env = _P()
        self.check(self.CreateEnv(3, b"remc", C.byref(self.env)))
        self.offsets = _probe_options(self)

    def check(self, status: int | None, doing: str = "") -> None:
        """Raise RuntimeFailure with ONNX Runtime's message when ``status`` is not NULL."""
        if status:
            msg = self.GetErrorMessage(status).decode(errors="replace")
            self.ReleaseStatus(status)
            raise RuntimeFailure(f"ONNX Runtime failed{' ' + doing if doing else ''} on cpu: {msg}")

    def error(self, status: int) -> str:
        msg = self.GetErrorMessage(status).decode(errors="replace")
        self.ReleaseStatus(status)
        return msg


def library_path() -> str | None:
    """The C library the onnxruntime wheel ships (None when there is none)."""
    import onnxruntime as ort
    found = sorted(glob.glob(os.path.join(os.path.dirname(ort.__file__), "capi", "libonnxruntime.so*")))
    return found[-1] if found else None


_API: list[_Api] = []


def api() -> _Api:
    """The C API (loaded once); RuntimeFailure saying why it cannot be used."""
    path = library_path()
    if path is None:
        raise RuntimeFailure("this onnxruntime install has no C library (onnxruntime/capi/libonnxruntime.so*): "
                             "remc's CPU placement needs it; use --placement arena")
    if _API:
        return _API[0]
    try:
        _API.append(_Api(path))
        return _API[0]
    except OSError as exc:
        raise RuntimeFailure(f"cannot load {path}: {exc}; use --placement arena") from exc


@functools.cache
def available() -> bool:
    """Whether remc's CPU placement can be used here (the C library loads and its layout checks pass)."""
    try:
        api()
        return True
    except RuntimeFailure:
        return False


@dataclass(frozen=True)
class _Offsets:
    order: int
    """Byte offset of ``execution_order`` (int)."""
    mem_reuse: int
    """Byte offset of ``enable_mem_reuse`` (bool)."""


def _probe_options(a: _Api) -> _Offsets:
    """Where ``execution_order`` and ``enable_mem_reuse`` live in ``OrtSessionOptions`` (module docstring),
    found and checked with the C functions that set their neighbours."""
    so = _P()
    a.check(a.CreateSessionOptions(C.byref(so)))
    try:
        n = 256
        raw = (C.c_uint8 * n).from_address(so.value)
        before = bytes(raw)
        a.check(a.DisableMemPattern(so))
        pattern = [i for i in range(n) if raw[i] != before[i]]
        mid = bytes(raw)
        a.check(a.DisableCpuMemArena(so))
        arena = [i for i in range(n) if raw[i] != mid[i]]
        mode0 = bytes(raw[:8])
        a.check(a.SetSessionExecutionMode(so, 1))
        mode1 = bytes(raw[:8])
        ok = (len(pattern) == 1 and len(arena) == 1 and arena[0] == pattern[0] + 2
              and before[pattern[0]] == 1 and before[pattern[0] + 1] == 1 and before[arena[0]] == 1
              and mode0 == bytes(8) and mode1 == bytes([1, 0, 0, 0, 0, 0, 0, 0]))
    finally:
        a.ReleaseSessionOptions(so)
    if not ok:
        raise RuntimeFailure(f"onnxruntime {a.version}'s session options are not laid out as remc expects "
                             "(execution order and memory reuse cannot be set through its C API); "
                             "use --placement arena")
    return _Offsets(4, pattern[0] + 1)


# ---------------------------------------------------------------------------------------------------
# Sessions
# ---------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class NodeArg:
    """A graph input or output, as ``InferenceSession.get_inputs()`` lists them."""

    name: str


class _Overflow:
    """Host blocks for requests that do not fit remc's buffer (a NULL would crash ONNX Runtime)."""

    def __init__(self) -> None:
        self.blocks: dict[int, np.ndarray] = {}

    def take(self, n: int) -> int:
        arr = np.empty(int(n) + 64, dtype=np.uint8)
        p = (arr.ctypes.data + 63) // 64 * 64
        self.blocks[p] = arr
        return p

    def give(self, p: int) -> bool:
        return self.blocks.pop(int(p), None) is not None


class HostBuffer:
    """``nbytes`` of host memory (page-aligned), remc's CPU buffer."""

    def __init__(self, nbytes: int) -> None:
        self.nbytes = int(nbytes)
        self._arr: np.ndarray | None = np.empty(self.nbytes + 4096, dtype=np.uint8)
        self.ptr = (self._arr.ctypes.data + 4095) // 4096 * 4096

    def release(self) -> None:
        self._arr = None
        self.ptr = 0


class Session:
    """A CPU session of ``model`` on the C API allocating through ``allocator`` (a ``PlacedAllocator`` over a
    ``HostBuffer``), with remc's session settings (``runtime.make_session``): PRIORITY_BASED order, no graph
    optimization, no memory pattern, no planner reuse."""

    def __init__(self, model: onnx.ModelProto, allocator, *, threads: int | None = None, log_level: int = 4,
                 profile_prefix: str | None = None, layout=None, prepack: bool = True,
                 native: bool | None = None) -> None:
        self.api = a = api()
        self.allocator = allocator
        self.layout = layout
        self.model = model
        inits = {i.name for i in model.graph.initializer}
        self._inputs = [NodeArg(i.name) for i in model.graph.input if i.name not in inits]
        self._outputs = [NodeArg(o.name) for o in model.graph.output]
        self._producer = {o: (n.name or n.op_type, n.op_type) for n in model.graph.node for o in n.output}
        self.overflow = _Overflow()
        self.run_options = _P()
        a.check(a.CreateRunOptions(C.byref(self.run_options)))
        self.failure: tuple[str, int, int] | None = None
        """(phase, request index, bytes) of the first request that did not fit."""
        self._struct = self._make_allocator(native)
        self.ptr = _P()
        so = self._options(threads, log_level, profile_prefix, prepack)
        try:
            self._create(model, so)
        finally:
            a.ReleaseSessionOptions(so)
        self._closer = weakref.finalize(self, _close, a, self.ptr.value, self.run_options.value, allocator)

    # -- the allocator
    def _make_allocator(self, native: bool | None) -> _OrtAllocator:
        a, pa, over = self.api, self.allocator, self.overflow
        tables: list = []  # the native hot path's tables, when it serves the planned requests

        def _alloc(_this: int, n: int) -> int:
            if n <= 0:
                return over.take(0)
            nt = tables[0] if tables else None
            try:
                with nt.held() if nt is not None else contextlib.nullcontext():
                    if nt is not None:
                        nt.pull()
                    p = pa.alloc(n)
                    if nt is not None:
                        nt.push_alloc(p)
            except Exception:  # noqa: BLE001 - nothing may cross into C
                pa.stats.failures.append((int(n), -1))
                p = None
            if p is None:
                if self.failure is None:
                    self.failure = (pa.phase, pa.k, int(n))
                a.RunOptionsSetTerminate(self.run_options)
                return over.take(n)
            return p

        def _free(_this: int, p: int | None) -> None:
            nt = tables[0] if tables else None
            try:
                with nt.held() if nt is not None else contextlib.nullcontext():
                    if nt is not None:
                        nt.pull()
                        size = pa.size_at.get(int(p or 0) - pa.base)
                    if pa.free(p):  # remc's buffer (the hot path), else an overflow block
                        if nt is not None:
                            nt.push_free(p, size)
                        return
            except Exception:  # noqa: BLE001 - nothing may cross into C
                pass
            if p:
                over.give(p)

        info = a.mem_info.value
        callbacks = (ALLOC_FN(_alloc), FREE_FN(_free), INFO_FN(lambda _this: info))
        # the native side serves a run's planned requests: without a plan (kernel measurement) it has nothing to do
        fast = nativealloc.compiled() if native is not False and getattr(pa, "plans", {}).get("run") else None
        addrs = fast or tuple(C.cast(f, C.c_void_p).value for f in callbacks[:2])
        struct = _OrtAllocator(API_VERSION, addrs[0], addrs[1], callbacks[2])
        if fast is not None:
            words = np.ctypeslib.as_array(struct.state)
            nt = nativealloc.NativeTables(pa, words)
            words[nativealloc.PY_ALLOC] = C.cast(callbacks[0], C.c_void_p).value
            words[nativealloc.PY_FREE] = C.cast(callbacks[1], C.c_void_p).value
            tables.append(nt)
            pa.native = nt
        self.native = tables[0] if tables else None
        """The native hot path's tables (None: every request is served in Python)."""
        _ALIVE.append((struct, callbacks, over, tables))
        return struct

    def _options(self, threads: int | None, log_level: int, profile_prefix: str | None, prepack: bool) -> int:
        a = self.api
        so = _P()
        a.check(a.CreateSessionOptions(C.byref(so)))
        a.check(a.DisableMemPattern(so))
        a.check(a.DisableCpuMemArena(so))
        a.check(a.SetSessionGraphOptimizationLevel(so, 0))
        a.check(a.SetSessionLogSeverityLevel(so, int(log_level)))
        if threads is not None:
            a.check(a.SetIntraOpNumThreads(so, int(threads)))
        if profile_prefix:
            a.check(a.EnableProfiling(so, profile_prefix.encode()))
        a.check(a.AddSessionConfigEntry(so, b"session.use_env_allocators", b"1"))
        if not prepack:  # no packed weight copies (MatMul/Gemm/ConvTranspose read their weights as they are)
            a.check(a.AddSessionConfigEntry(so, b"session.disable_prepacking", b"1"))
        C.c_int32.from_address(so.value + a.offsets.order).value = 1  # ExecutionOrder::PRIORITY_BASED
        C.c_uint8.from_address(so.value + a.offsets.mem_reuse).value = 0  # enable_mem_reuse = false
        return so

    def _create(self, model: onnx.ModelProto, so: int) -> None:
        a = self.api
        st = a.UnregisterAllocator(a.env, a.mem_info)  # a previous session's, if any (else an error status)
        if st:
            a.ReleaseStatus(st)
        a.check(a.RegisterAllocator(a.env, C.byref(self._struct)), "registering remc's allocator")
        try:
            data = model.SerializeToString()
            st = a.CreateSessionFromArray(a.env, data, len(data), so, C.byref(self.ptr))
            if st:
                msg = a.error(st)
                m = re.search(r"Unsupported model IR version: (\d+), max supported IR version: (\d+)", msg)
                if m is None or self.failure is not None:
                    raise self._error(msg, "loading the model")
                lowered = onnx.ModelProto()
                lowered.CopyFrom(model)
                lowered.ir_version = int(m.group(2))
                data = lowered.SerializeToString()
                st = a.CreateSessionFromArray(a.env, data, len(data), so, C.byref(self.ptr))
                if st:
                    raise self._error(a.error(st), "loading the model")
        finally:
            st = a.UnregisterAllocator(a.env, a.mem_info)
            if st:
                a.ReleaseStatus(st)
        if self.failure is not None:
            a.ReleaseSession(self.ptr)
            self.ptr = _P()
            raise self._error("a request did not fit remc's buffer", "loading the model")

    def _error(self, msg: str, doing: str) -> Exception:
        """An exception ``runtime._failure`` turns into OutOfMemory (when a request overflowed: it names the
        node remc's layout has at that request) or RuntimeFailure."""
        if self.failure is None:
            return RuntimeError(msg)
        phase, k, _n = self.failure
        what = self._planned_what(phase, k)
        node = self._producer.get(what) or (self._producer_of_scratch(what) if what else None)
        where = f"running {node[1]} node. Name:'{node[0]}'" if node else f"request {k} of {phase}"
        return RuntimeError(f"{where}: out of memory in remc's buffer ({msg})")

    def _planned_what(self, phase: str, k: int) -> str:
        lay = self.layout
        if lay is None:
            return ""
        from ..passes.placement import _when
        blocks = [b for b in sorted(lay.blocks, key=_when) if b.phase == phase
                  and (self.allocator.runs <= 1 or not b.first_run_only)]
        return blocks[min(k, len(blocks) - 1)].what if blocks else ""

    def _producer_of_scratch(self, what: str) -> tuple[str, str] | None:
        for prefix in ("scratch of ", "temporary of ", "kept by "):
            if what.startswith(prefix):
                name = what[len(prefix):]
                ops = {n.name: n.op_type for n in self.model.graph.node}
                return (name, ops.get(name, "?"))
        return None

    # -- what runtime.Runner uses
    def get_inputs(self) -> list[NodeArg]:
        return list(self._inputs)

    def get_outputs(self) -> list[NodeArg]:
        return list(self._outputs)

    def io_binding(self) -> Binding:
        return Binding(self)

    def run_with_iobinding(self, binding: Binding, run_options: None = None) -> None:
        """One run of the graph on the bound inputs. Outputs bound to caller buffers (``bind_output_buffer``)
        are written there; the others are allocated by the run (in remc's buffer) and stay in the binding until
        cleared. ``run_options``: the Python binding's; CPU runs take none."""
        if run_options is not None:
            raise ValueError("a C-API session takes no Python RunOptions")
        a = self.api
        binding.clear_binding_outputs()
        names = [o.name for o in self._outputs]
        cin = (C.c_char_p * len(binding.inputs))(*[n.encode() for n in binding.inputs])
        cval = (_P * len(binding.inputs))(*[v.value for v in binding.inputs.values()])
        cout = (C.c_char_p * len(names))(*[n.encode() for n in names])
        fixed = binding.fixed_outputs
        outs = (_P * len(names))(*[fixed[n][0].value if n in fixed else None for n in names])
        self.failure = None
        a.check(a.RunOptionsUnsetTerminate(self.run_options))
        try:
            st = a.Run(self.ptr, self.run_options, cin, cval, len(binding.inputs), cout, len(names), outs)
        finally:
            if self.native is not None:  # the allocator's statistics and live set, as the native side left them
                self.native.pull()
        binding.outputs[:] = [_P(v) for n, v in zip(names, outs) if v and n not in fixed]
        if st:
            msg = a.error(st)
            binding.clear_binding_outputs()
            raise self._error(msg, "running the model")
        if self.failure is not None:
            binding.clear_binding_outputs()
            raise self._error("the run overflowed remc's buffer", "running the model")

    def end_profiling(self) -> str:
        a = self.api
        da, path = _P(), C.c_char_p()
        a.check(a.GetAllocatorWithDefaultOptions(C.byref(da)))
        a.check(a.SessionEndProfiling(self.ptr, da, C.byref(path)))
        return path.value.decode()

    def close(self) -> None:
        """Release the session (its initializers go back to the buffer, which is then released)."""
        self._closer()


def _close(a: _Api, sess: int | None, run_options: int | None, allocator) -> None:
    if sess:
        a.ReleaseSession(sess)
    if run_options:
        a.ReleaseRunOptions(run_options)
    allocator.close()


class Binding:
    """The IOBinding subset ``runtime.Runner`` uses: CPU inputs bound from numpy arrays (no copy), outputs
    allocated by the run (in remc's buffer) and held until cleared."""

    def __init__(self, session: Session) -> None:
        self.session = session
        self.inputs: dict[str, C.c_void_p] = {}
        self._arrays: list[np.ndarray] = []
        self.outputs: list[C.c_void_p] = []
        self.fixed_outputs: dict[str, tuple[C.c_void_p, np.ndarray]] = {}
        """Outputs written into caller buffers (``bind_output_buffer``): name -> (tensor over it, the array)."""
        self._finalizer = weakref.finalize(self, _release_values, session.api, self.inputs, self.outputs,
                                           self.fixed_outputs)

    def _over(self, arr: np.ndarray):  # noqa: ANN202 - an OrtValue pointer
        """A CPU tensor over ``arr``'s memory (C-contiguous; the caller keeps ``arr`` alive)."""
        a = self.session.api
        shape = (C.c_int64 * max(arr.ndim, 1))(*arr.shape)
        v = _P()
        a.check(a.CreateTensorWithDataAsOrtValue(a.mem_info, arr.ctypes.data, arr.nbytes, shape, arr.ndim,
                                                 helper.np_dtype_to_tensor_dtype(arr.dtype), C.byref(v)))
        return v

    def bind_cpu_input(self, name: str, arr: np.ndarray) -> None:
        a = self.session.api
        arr = np.ascontiguousarray(arr)
        v = self._over(arr)
        old = self.inputs.pop(name, None)
        if old is not None:
            a.ReleaseValue(old)
        self.inputs[name] = v
        self._arrays.append(arr)

    def bind_output(self, name: str, device_type: str = "cpu", device_id: int = 0) -> None:
        """An output the run allocates (ONNX Runtime allocates it from remc's buffer): the default."""

    def bind_output_buffer(self, name: str, arr: np.ndarray) -> None:
        """Output ``name`` is written into ``arr`` (C-contiguous, of the output's shape and type) by every run:
        a tensor over its memory passed to ``Run`` as the pre-allocated output, so nothing of it is in remc's
        buffer (as ``IOBinding.bind_ortvalue_output``)."""
        if not arr.flags.c_contiguous:
            raise ValueError(f"output buffer {name!r} is not C-contiguous")
        a = self.session.api
        v = self._over(arr)
        old = self.fixed_outputs.pop(name, None)
        if old is not None:
            a.ReleaseValue(old[0])
        self.fixed_outputs[name] = (v, arr)

    def clear_binding_outputs(self) -> None:
        a = self.session.api
        for v in self.outputs:
            a.ReleaseValue(v)
        self.outputs.clear()

    def synchronize_outputs(self) -> None:
        """CPU runs are synchronous."""

    def copy_outputs_to_cpu(self) -> list[np.ndarray]:
        return [_to_numpy(self.session.api, v) for v in self.outputs]


def _release_values(a: _Api, inputs: dict, outputs: list, fixed: dict) -> None:
    for v in list(inputs.values()) + list(outputs) + [v for v, _arr in fixed.values()]:
        a.ReleaseValue(v)
    inputs.clear()
    outputs.clear()
    fixed.clear()


def _to_numpy(a: _Api, value: C.c_void_p) -> np.ndarray:
    """A copy of a CPU tensor ``OrtValue``."""
    info = _P()
    a.check(a.GetTensorTypeAndShape(value, C.byref(info)))
    try:
        et, nd = C.c_int(), C.c_size_t()
        a.check(a.GetTensorElementType(info, C.byref(et)))
        a.check(a.GetDimensionsCount(info, C.byref(nd)))
        dims = (C.c_int64 * max(nd.value, 1))()
        a.check(a.GetDimensions(info, dims, nd.value))
        shape = tuple(int(dims[i]) for i in range(nd.value))
    finally:
        a.ReleaseTensorTypeAndShapeInfo(info)
    dtype = np.dtype(helper.tensor_dtype_to_np_dtype(et.value))
    n = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    if n == 0:
        return np.zeros(shape, dtype=dtype)
    p = _P()
    a.check(a.GetTensorMutableData(value, C.byref(p)))
    return np.frombuffer((C.c_uint8 * n).from_address(p.value), dtype=np.uint8).view(dtype).reshape(shape).copy()


def placed_session(model: onnx.ModelProto, cap: int, layout, *, threads: int | None = None,
                   log_level: int = 4, profile_prefix: str | None = None,
                   prepack: bool = True, native: bool | None = None) -> tuple[Session, object]:
    """A ``Session`` of ``model`` on remc's allocator over a fresh host buffer of ``cap`` bytes, following
    ``layout`` (a ``passes.placement.Layout``; None: best fit only), and the allocator. ``prepack`` False:
    ``session.disable_prepacking`` (``DeviceSettings.prepack``). ``native`` False: every request is served by
    the Python callbacks; None: the planned ones by ``backends.nativealloc`` when numba is installed."""
    from .placement import from_layout
    buf = HostBuffer(cap)
    alloc = from_layout(buf.ptr, int(cap), layout)
    alloc.buffer = buf
    try:
        sess = Session(model, alloc, threads=threads, log_level=log_level, profile_prefix=profile_prefix,
                       layout=layout, prepack=prepack, native=native)
    except RuntimeError as exc:  # ONNX Runtime's error, or a request that did not fit
        from .runtime import _failure
        alloc.close()
        raise _failure(exc, "cpu", int(cap), "loading the model", alloc) from exc
    except BaseException:
        alloc.close()
        raise
    return sess, alloc


__all__: Sequence[str] = ["Session", "Binding", "HostBuffer", "api", "available", "library_path",
                          "placed_session"]
