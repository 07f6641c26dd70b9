"""A lowered graph run on remc's placement with its graph outputs bound at their PLANNED offsets, with CUDA graph.

CUDA graph replay needs every graph input and output at a fixed device address, bound before the first run.
The Python binding's route to remc's allocator on CUDA (``gpu_external_alloc``: ``backends.placement``) cannot
capture (the provider then runs on the legacy default stream, which ``cudaStreamBeginCapture`` rejects), so
this module drives ONNX Runtime's C library (``backends.capi``) instead: remc's allocator
(``placement.PlacedAllocator`` over one buffer of the cap) registered as the environment's allocator for the
device (``RegisterAllocator``; the session is made with ``session.use_env_allocators=1``), the CUDA provider
with ``enable_cuda_graph=1`` (it then makes its own stream), and the graph run with an IOBinding.

The outputs are bound INSIDE remc's buffer, each at the offset the compiled layout gives its block
(``passes.placement.bind_outputs``): ONNX Runtime writes an output into the bound tensor instead of
requesting it, so the allocator's expected request sequence drops exactly those requests and keeps every
other request's planned offset. The run therefore uses the layout the compile checked, and its bytes are the
layout's height plus what the normal run holds outside the buffer (the fed inputs, bound outside as there):
the prediction, with and without CUDA graph. A request off the layout (best fit) never lands in a bound
output's range (``PlacedAllocator.fenced``). Outputs the layout has no block for (none on the zoo's graphs)
are bound outside the buffer and counted on top.

With ``enable_cuda_graph`` the first ``Run`` executes the graph several times (warm-up runs, then the
capture), one pass of the layout's requests each: a new pass begins when the last one's planned requests are
used up. Replays allocate nothing.

The C library is a second copy of ONNX Runtime beside the Python binding, and both would load the one CUDA
provider library; each run is therefore a child process (``python -m remc.backends.boundrun JOB``) that never
makes a Python-binding session. On CPU the same child binds the outputs inside remc's host buffer (no CUDA
graph there), which tests exercise.
"""
from __future__ import annotations

import ctypes as C
import json
import os
import pickle
import re
import subprocess
import sys
import tempfile
import time
import traceback
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import onnx

from ..ir.errors import RuntimeFailure

_P = C.c_void_p
_S = C.c_void_p
_EXTRA = {
    # name: (index in struct OrtApi, restype, argtypes): onnxruntime_c_api.h, in declaration order (the same table
    # as backends/capi.py's; checked on onnxruntime-gpu 1.31.1 by tools/gpu_cudagraph_env_probe.py)
    "CreateMemoryInfo": (68, _S, (C.c_char_p, C.c_int, C.c_int, C.c_int, C.POINTER(_P))),
    "ReleaseMemoryInfo": (94, None, (_P,)),
    "RunWithBinding": (133, _S, (_P, _P, _P)),
    "CreateIoBinding": (134, _S, (_P, C.POINTER(_P))),
    "ReleaseIoBinding": (135, None, (_P,)),
    "BindInput": (136, _S, (_P, C.c_char_p, _P)),
    "BindOutput": (137, _S, (_P, C.c_char_p, _P)),
    "SessionOptionsAppendExecutionProvider_CUDA_V2": (204, _S, (_P, _P)),
    "CreateCUDAProviderOptions": (205, _S, (C.POINTER(_P),)),
    "UpdateCUDAProviderOptions": (206, _S, (_P, C.POINTER(C.c_char_p), C.POINTER(C.c_char_p), C.c_size_t)),
    "ReleaseCUDAProviderOptions": (208, None, (_P,)),
}
_IR_MSG = re.compile(r"Unsupported model IR version: (\d+), max supported IR version: (\d+)")


@dataclass
class BoundRun:
    """What a run with bound outputs measured."""

    device: str
    cuda_graph: bool
    median_seconds: float
    times: list[float]
    buffer: int
    """remc's buffer (the cap)."""
    high_water: int
    """Highest end offset of any allocation the allocator served (the bound outputs not included)."""
    held: int
    """Bytes of the buffer in use at its fullest: the high-water mark or a bound output's end, the higher."""
    outside_outputs: int
    """Bytes of outputs bound outside the buffer (``BoundOutputs.outside``)."""
    bound: int
    """Graph outputs bound inside the buffer at their planned offsets."""
    planned: int
    fallback: int
    calls: int
    requests_per_run: list[int]
    passes: int
    """Passes of the layout's requests the allocator began (CUDA graph: several in the first Run)."""
    outputs: dict[str, np.ndarray] = field(default_factory=dict)


def run_bound(model: onnx.ModelProto, layout, cap: int, feeds: Mapping[str, np.ndarray], *, device: str = "cuda",  # noqa: ANN001
              cuda_graph: bool = True, iters: int = 10, warmup: int = 1, timeout: float = 600.0,
              cudnn_conv_algo_search: str = "HEURISTIC") -> BoundRun:
    """Run ``model`` ``warmup`` + ``iters`` times on remc's placement (a buffer of ``cap`` bytes following
    ``layout``, a ``passes.placement.Layout``: the compiled one) with its outputs bound at their planned
    offsets and, on CUDA, CUDA graph (module docstring), in a child process; the median of the ``iters``
    timed runs. OutOfMemory when a request did not fit the buffer, RuntimeFailure (one line) when the session
    could not be made, the graph not captured or the child broke."""
    from .runtime import OutOfMemory
    if cuda_graph and not device.startswith("cuda"):
        raise RuntimeFailure("CUDA graph needs --device cuda")
    with tempfile.TemporaryDirectory(prefix="remc-bound-") as tmp:
        t = Path(tmp)
        onnx.save(model, t / "model.onnx")
        (t / "layout.pkl").write_bytes(pickle.dumps(layout))
        np.savez(t / "feeds.npz", **{k: np.ascontiguousarray(v) for k, v in feeds.items()})
        job = {"device": device, "cuda_graph": bool(cuda_graph), "cap": int(cap), "iters": int(iters),
               "warmup": int(warmup), "dir": tmp, "cudnn": cudnn_conv_algo_search}
        (t / "job.json").write_text(json.dumps(job))
        try:
            p = subprocess.run([sys.executable, "-m", "remc.backends.boundrun", str(t / "job.json")],
                               capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired as exc:
            raise RuntimeFailure(f"the run with bound outputs took more than {timeout:.0f} s") from exc
        try:
            res = json.loads(p.stdout.strip().splitlines()[-1])
        except (ValueError, IndexError):
            tail = (p.stderr.strip().splitlines() or ["no output"])[-1][:300]
            raise RuntimeFailure(f"the run with bound outputs broke (exit {p.returncode}): {tail}") from None
        what = "CUDA graph on remc's placement" if cuda_graph else "the run with outputs at their planned offsets"
        if res.get("failures"):
            req, gap = res["failures"][0]
            raise OutOfMemory(f"out of memory on {device} ({what}): needed {req} bytes, the largest free range of "
                              f"remc's buffer ({cap} bytes) is {gap}; {res.get('fallback', 0)} of "
                              f"{res.get('calls', 0)} requests off the layout", req, gap, cap)
        if "error" in res:
            raise RuntimeFailure(f"{what} failed at {res.get('stage', '?')}: {res['error']}")
        outputs = dict(np.load(t / "outputs.npz"))
    return BoundRun(device=device, cuda_graph=bool(cuda_graph), median_seconds=float(res["median_seconds"]),
                    times=list(res["times"]), buffer=int(cap), high_water=int(res["high_water"]),
                    held=int(res["held"]), outside_outputs=int(res["outside_outputs"]), bound=int(res["bound"]),
                    planned=int(res["planned"]), fallback=int(res["fallback"]), calls=int(res["calls"]),
                    requests_per_run=list(res["requests_per_run"]), passes=int(res["passes"]), outputs=outputs)


# ---------------------------------------------------------------------------------------------------
# The child
# ---------------------------------------------------------------------------------------------------

def _functions(a) -> dict:  # noqa: ANN001
    class _Base(C.Structure):
        _fields_ = [("GetApi", C.CFUNCTYPE(_P, C.c_uint32)), ("GetVersionString", C.CFUNCTYPE(C.c_char_p))]

    a.lib.OrtGetApiBase.restype = C.POINTER(_Base)
    from .capi import API_VERSION
    table = C.cast(a.lib.OrtGetApiBase().contents.GetApi(API_VERSION), C.POINTER(_P))
    return {n: C.CFUNCTYPE(r, *args)(table[i]) for n, (i, r, args) in _EXTRA.items()}


def _child(job: dict, out: dict) -> None:
    """One C-API session on remc's allocator with the outputs bound at their planned offsets (module
    docstring); ``out`` gets the stage reached and, when done, the measurements."""
    import onnxruntime as ort
    from onnx import helper

    from ..ir.onnx_types import static_types
    from ..passes.placement import bind_outputs
    from . import capi, placement
    out["stage"] = "load"
    cuda = job["device"].startswith("cuda")
    if cuda:
        ort.preload_dlls()
    a = capi.api()
    f = _functions(a)
    d = Path(job["dir"])
    model = onnx.load(d / "model.onnx")
    lay = pickle.loads((d / "layout.pkl").read_bytes())
    feeds = dict(np.load(d / "feeds.npz"))
    types = static_types(model)
    names = [o.name for o in model.graph.output]
    bound = bind_outputs(lay, names)
    cap = int(job["cap"])
    if bound.extent() > cap:  # an output's planned range does not fit the buffer: out of memory before any run
        name, (off, size) = max(bound.at.items(), key=lambda kv: sum(kv[1]))
        out["failures"] = [[size, max(cap - off, 0)]]
        raise RuntimeFailure(f"graph output {name!r} is planned at bytes {off}..{off + size}, beyond the buffer of {cap}")
    if cuda:
        info = _P()
        a.check(f["CreateMemoryInfo"](b"Cuda", 0, 0, 0, C.byref(info)))  # OrtDeviceAllocator, device 0, default
        try:
            alloc = placement.on_device(cap, bound.layout, 0, list(bound.at.values()))
        except MemoryError as exc:
            out["failures"] = [[cap, 0]]
            raise RuntimeFailure(str(exc)) from exc
        lib = alloc.buffer.lib
    else:
        info = a.mem_info
        buf = capi.HostBuffer(cap)
        alloc = placement.from_layout(buf.ptr, cap, bound.layout, list(bound.at.values()))
        alloc.buffer = buf
        lib = None
    over = capi._Overflow()
    ro = _P()
    a.check(a.CreateRunOptions(C.byref(ro)))
    passes = [0]

    def _alloc(_this: int, n: int) -> int | None:
        try:
            if job["cuda_graph"] and alloc.phase == "run" and alloc.k >= len(alloc._plan()) > 0:
                alloc.begin_run()  # one Run with CUDA graph executes the graph several times: a new pass
                passes[0] += 1
            p = alloc.alloc(n)
        except Exception:  # noqa: BLE001 - nothing may cross into C
            alloc.stats.failures.append((int(n), -1))
            p = None
        if p is None and not cuda:  # ONNX Runtime's CPU kernels do not check for NULL: stop the run instead
            a.RunOptionsSetTerminate(ro)
            return over.take(max(int(n), 1))
        return p

    def _free(_this: int, p: int | None) -> None:
        try:
            if alloc.free(p):
                return
        except Exception:  # noqa: BLE001
            pass
        if p:
            over.give(p)

    cbs = (capi.ALLOC_FN(_alloc), capi.FREE_FN(_free), capi.INFO_FN(lambda _this: info.value))
    struct = capi._OrtAllocator(capi.API_VERSION, C.cast(cbs[0], _P).value, C.cast(cbs[1], _P).value, cbs[2])
    out["stage"] = "register"
    st = a.UnregisterAllocator(a.env, info)
    if st:
        a.ReleaseStatus(st)
    a.check(a.RegisterAllocator(a.env, C.byref(struct)), "registering remc's allocator")
    so = _P()
    a.check(a.CreateSessionOptions(C.byref(so)))
    a.check(a.DisableMemPattern(so))
    a.check(a.DisableCpuMemArena(so))
    a.check(a.SetSessionGraphOptimizationLevel(so, 0))
    a.check(a.SetSessionLogSeverityLevel(so, 3))
    a.check(a.AddSessionConfigEntry(so, b"session.use_env_allocators", b"1"))
    C.c_int32.from_address(so.value + a.offsets.order).value = 1  # ExecutionOrder::PRIORITY_BASED
    C.c_uint8.from_address(so.value + a.offsets.mem_reuse).value = 0  # enable_mem_reuse = false
    if cuda:
        a.check(a.AddSessionConfigEntry(so, b"session.disable_cpu_ep_fallback", b"1"))
        opts = _P()
        a.check(f["CreateCUDAProviderOptions"](C.byref(opts)))
        kv = {"device_id": "0", "cudnn_conv_algo_search": job.get("cudnn", "HEURISTIC"),
              "cudnn_conv_use_max_workspace": "0", "enable_cuda_graph": "1" if job["cuda_graph"] else "0"}
        keys = (C.c_char_p * len(kv))(*[k.encode() for k in kv])
        vals = (C.c_char_p * len(kv))(*[v.encode() for v in kv.values()])
        a.check(f["UpdateCUDAProviderOptions"](opts, keys, vals, len(kv)), "setting CUDA provider options")
        a.check(f["SessionOptionsAppendExecutionProvider_CUDA_V2"](so, opts), "appending the CUDA provider")
        f["ReleaseCUDAProviderOptions"](opts)
    out["stage"] = "create session"
    sess = _P()
    data = model.SerializeToString()
    st = a.CreateSessionFromArray(a.env, data, len(data), so, C.byref(sess))
    if st:
        msg = a.error(st)
        m = _IR_MSG.search(msg)
        if m is None:
            raise RuntimeFailure(msg.splitlines()[0][:300] if msg else "no message")
        model.ir_version = int(m.group(2))
        data = model.SerializeToString()
        a.check(a.CreateSessionFromArray(a.env, data, len(data), so, C.byref(sess)), "loading the model")
    st = a.UnregisterAllocator(a.env, info)
    if st:
        a.ReleaseStatus(st)
    if alloc.stats.failures:
        raise RuntimeFailure("a request of session creation did not fit remc's buffer")
    out["stage"] = "bind"
    bind = _P()
    a.check(f["CreateIoBinding"](sess, C.byref(bind)))
    keep: list = []

    def tensor(t, ptr: int | None, arr: np.ndarray | None) -> tuple[_P, int]:  # noqa: ANN001
        """An OrtValue of type ``t`` over ``ptr`` (None: a fresh buffer outside remc's), filled from ``arr``."""
        dtype = np.dtype(helper.tensor_dtype_to_np_dtype(t.elem_type))
        shape = [int(x) for x in t.shape]
        nbytes = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
        if ptr is None:
            if cuda:
                db = placement.DeviceBuffer(max(nbytes, 256))
                keep.append(db)
                ptr = db.ptr
            else:
                host = np.zeros(max(nbytes, 1), np.uint8)
                keep.append(host)
                ptr = host.ctypes.data
        if arr is not None:
            src = np.ascontiguousarray(arr, dtype=dtype)
            if cuda:
                if lib.cudaMemcpy(_P(ptr), src.ctypes.data_as(_P), C.c_size_t(nbytes), 1) != 0:
                    raise RuntimeFailure("cudaMemcpy of an input failed")
            else:
                C.memmove(ptr, src.ctypes.data, nbytes)
        dims = (C.c_int64 * max(len(shape), 1))(*shape)
        val = _P()
        a.check(a.CreateTensorWithDataAsOrtValue(info, _P(ptr), nbytes, dims, len(shape), t.elem_type, C.byref(val)))
        keep.append(val)
        return val, nbytes

    inits = {i.name for i in model.graph.initializer}
    for i in model.graph.input:
        if i.name not in inits:
            val, _ = tensor(types[i.name], None, feeds[i.name])
            a.check(f["BindInput"](bind, i.name.encode(), val), f"binding input {i.name}")
    outs: list[tuple[str, int, object]] = []
    outside = 0
    for name in names:
        if name not in types:
            raise RuntimeFailure(f"graph output {name!r} has no static shape: it cannot be bound")
        planned = bound.at.get(name)
        val, nbytes = tensor(types[name], None if planned is None else alloc.base + planned[0], None)
        if planned is None:
            outside += nbytes
        a.check(f["BindOutput"](bind, name.encode(), val), f"binding output {name}")
        outs.append((name, nbytes, val))
    out["stage"] = "run"
    times: list[float] = []
    calls: list[int] = []
    for k in range(job["warmup"] + job["iters"]):
        alloc.begin_run()
        passes[0] += 1
        c0 = alloc.stats.calls
        t0 = time.perf_counter()
        st = f["RunWithBinding"](sess, ro, bind)
        if cuda and st is None:
            lib.cudaDeviceSynchronize()
        dt = time.perf_counter() - t0
        calls.append(alloc.stats.calls - c0)
        if alloc.stats.failures:
            out.update(failures=alloc.stats.failures[:3], calls=alloc.stats.calls, fallback=alloc.stats.fallback)
            if st:
                a.ReleaseStatus(st)
            raise RuntimeFailure(f"run {k}: out of remc's buffer")
        a.check(st, f"run {k}")
        if k >= job["warmup"]:
            times.append(dt)
    out["stage"] = "outputs"
    got: dict[str, np.ndarray] = {}
    for name, nbytes, val in outs:
        p = _P()
        a.check(a.GetTensorMutableData(val, C.byref(p)))
        t = types[name]
        host = np.empty([int(x) for x in t.shape], np.dtype(helper.tensor_dtype_to_np_dtype(t.elem_type)))
        if nbytes:
            if cuda:
                lib.cudaMemcpy(host.ctypes.data_as(_P), p, C.c_size_t(nbytes), 2)
            else:
                C.memmove(host.ctypes.data, p.value, nbytes)
        got[name] = host
    np.savez(d / "outputs.npz", **got)
    s = alloc.stats
    out.update(stage="done", times=times, median_seconds=float(np.median(times)) if times else 0.0,
               high_water=s.high_water, held=max(s.high_water, bound.extent()), outside_outputs=outside,
               bound=len(bound.at), planned=s.planned, fallback=s.fallback, calls=s.calls, requests_per_run=calls,
               passes=passes[0])


def main(argv: list[str] | None = None) -> None:
    """The child: ``python -m remc.backends.boundrun JOB.json``; one JSON line on stdout."""
    args = sys.argv[1:] if argv is None else argv
    job = json.loads(Path(args[0]).read_text())
    res: dict = {}
    try:
        _child(job, res)
    except Exception as exc:  # noqa: BLE001 - the parent reports where and why, in one line
        msg = str(exc).strip().splitlines()
        line = msg[0][:400] if msg else type(exc).__name__
        if not isinstance(exc, RuntimeFailure):
            line = f"{type(exc).__name__}: {line}"
        # backends.capi's checks name the CPU, the only device of its own sessions
        res.setdefault("error", line.replace(" on cpu:", f" on {job.get('device', 'cpu')}:"))
        res["traceback"] = traceback.format_exc()[-1500:]
    print(json.dumps(res, default=str), flush=True)
    sys.stdout.flush()
    os._exit(0)  # skip ONNX Runtime's teardown (the buffer's tensors outlive the session here)


if __name__ == "__main__":
    main()
