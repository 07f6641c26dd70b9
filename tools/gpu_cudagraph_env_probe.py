"""CUDA graph with remc's placement through an ENVIRONMENT allocator (issue 11 item 5: the untried route).

Superseded for plans by ``backends.boundrun`` (``remc run --cuda-graph``), which binds the outputs INSIDE remc's
buffer at their planned offsets and so runs the compiled layout itself; this probe binds them outside the buffer
and derives a second layout (session 10's route, kept to reproduce its numbers).

onnxruntime-gpu refuses a user compute stream beside ``gpu_external_alloc`` (``ORT_ENFORCE`` in
``CUDAExecutionProvider::CUDAExecutionProvider``), and with ``gpu_external_alloc`` alone it runs on the legacy
default stream, which ``cudaStreamBeginCapture`` rejects (results/gpu_h200_s8/cudagraph_stream.json). This
probe gives the CUDA provider NO external allocator: remc's allocator (``backends.placement.PlacedAllocator``
over one ``cudaMalloc`` buffer of the cap, every request at its layout offset) is registered in the
environment through the C API (``OrtApi::RegisterAllocator`` with an ``OrtMemoryInfo`` "Cuda", device 0,
``OrtDeviceAllocator``), the session is made with ``session.use_env_allocators=1``
(``SessionState::UpdateAllocatorsWithEnvAllocators`` replaces the provider's allocator for that ``OrtDevice``)
and the CUDA provider with ``enable_cuda_graph`` 0 or 1 (it then makes its own non-blocking stream).
Inputs and outputs are bound once at fixed device addresses (``CreateIoBinding``/``BindInput``/``BindOutput``,
buffers outside the cap), as CUDA graph replay needs.

The C library (``onnxruntime/capi/libonnxruntime.so.*``) is a second copy of ONNX Runtime beside the Python
binding; both would load the one CUDA provider library (set up through its provider bridge by whichever loads
it first; sharing it was not tried). So each C-API run is a child process that never makes a Python-binding session; the parent (Python binding)
computes the layout (``placement.model_layout``, kernel requests measured on the device), runs the same graph
on remc's allocator through ``gpu_external_alloc`` (outputs and ms) and on ONNX Runtime's arena with CUDA
graph, and compares every child's outputs with its own.

    tools/gpu_session.sh python3 $REPO/tools/gpu_cudagraph_env_probe.py --out $OUT/cg_env.json \\
        --models resnet50:2:small --iters 10
    python tools/gpu_cudagraph_env_probe.py --device cpu --out /tmp/cg_env_cpu.json --models resnet50:2:small
"""
from __future__ import annotations

import argparse
import ctypes as C
import json
import pickle
import subprocess
import sys
import tempfile
import time
import traceback
from pathlib import Path

import numpy as np
import onnx

from remc.backends.boundrun import _EXTRA as _BOUND_EXTRA

_P = C.c_void_p
_S = C.c_void_p
# index in struct OrtApi, restype, argtypes: backends/boundrun.py's table (checked by this probe on
# onnxruntime-gpu 1.31.1) and SynchronizeBoundOutputs, which only the probe calls
_EXTRA = _BOUND_EXTRA | {"SynchronizeBoundOutputs": (203, _S, (_P,))}


def spec_model(s: str) -> onnx.ModelProto:
    """``name:batch[:small|HxW]``: the zoo's training graph (test size with ``small``)."""
    from remc import zoo
    parts = s.split(":")
    small = len(parts) > 2 and parts[2] == "small"
    cfg = dict(zoo.small_config(parts[0]) if small else zoo.paper_config(parts[0]))
    cfg.pop("batch", None)
    if len(parts) > 2 and not small:
        h, w = parts[2].split("x")
        cfg.update(height=int(h), width=int(w))
    return zoo.export(parts[0], int(parts[1]), train=True, **cfg)


# ------------------------------------------------------------------------------------------ child (C API)

def _functions(a) -> dict:
    base = a.lib.OrtGetApiBase().contents
    table = C.cast(base.GetApi(13), C.POINTER(_P))
    return {n: C.CFUNCTYPE(r, *args)(table[i]) for n, (i, r, args) in _EXTRA.items()}


def child(job: dict, out: dict) -> dict:
    """One C-API session on remc's env allocator: create, bind, run ``iters`` times; outputs to an npz.
    ``out`` records the stage reached (what failed, when something does)."""
    import onnxruntime as ort
    from onnx import helper

    from remc.backends import capi, placement
    from remc.backends.runtime import random_inputs
    from remc.ir.onnx_types import static_types
    out.update(variant=job["variant"], stage="load")
    cuda = job["device"] == "cuda"
    if cuda:
        ort.preload_dlls()
    a = capi.api()
    f = _functions(a)
    out["c_library"] = capi.library_path()
    model = onnx.load(job["model"])
    model.ir_version = min(model.ir_version, 10)
    layout = pickle.loads(Path(job["layout"]).read_bytes())
    info = _P()
    a.check(f["CreateMemoryInfo"](b"Cuda" if cuda else b"Cpu", 0, 0, 0, C.byref(info)))
    if cuda:
        alloc = placement.on_device(job["cap"], layout)
        lib = alloc.buffer.lib
    else:
        buf = capi.HostBuffer(job["cap"])
        alloc = placement.from_layout(buf.ptr, job["cap"], layout)
        alloc.buffer = buf
        lib = None

    def _alloc(_this, n):
        try:
            if job.get("auto_runs") and alloc.phase == "run" and alloc.k >= len(alloc._plan()) > 0:
                alloc.begin_run()  # the last execution used up its plan: one Run call makes several (CUDA graph)
                out["auto_runs"] = out.get("auto_runs", 0) + 1
            p = alloc.alloc(n)
        except Exception:  # noqa: BLE001 - nothing may cross into C
            p = None
        return p

    def _free(_this, p):
        try:
            alloc.free(p)
        except Exception:  # noqa: BLE001
            pass

    cbs = (capi.ALLOC_FN(_alloc), capi.FREE_FN(_free), capi.INFO_FN(lambda _this: info.value))
    struct = capi._OrtAllocator(capi.API_VERSION, *cbs)
    out["stage"] = "register"
    st = a.UnregisterAllocator(a.env, info)
    if st:
        a.ReleaseStatus(st)
    a.check(a.RegisterAllocator(a.env, C.byref(struct)), "registering remc's allocator for Cuda")
    so = _P()
    a.check(a.CreateSessionOptions(C.byref(so)))
    a.check(a.DisableMemPattern(so))
    a.check(a.DisableCpuMemArena(so))
    a.check(a.SetSessionGraphOptimizationLevel(so, 0))
    a.check(a.SetSessionLogSeverityLevel(so, 3))
    a.check(a.AddSessionConfigEntry(so, b"session.use_env_allocators", b"1"))
    C.c_int32.from_address(so.value + a.offsets.order).value = 1  # PRIORITY_BASED
    C.c_uint8.from_address(so.value + a.offsets.mem_reuse).value = 0
    if cuda:
        a.check(a.AddSessionConfigEntry(so, b"session.disable_cpu_ep_fallback", b"1"))
        opts = _P()
        a.check(f["CreateCUDAProviderOptions"](C.byref(opts)))
        kv = {"device_id": "0", "cudnn_conv_algo_search": "HEURISTIC", "cudnn_conv_use_max_workspace": "0",
              "enable_cuda_graph": "1" if job["cuda_graph"] else "0"}
        keys = (C.c_char_p * len(kv))(*[k.encode() for k in kv])
        vals = (C.c_char_p * len(kv))(*[v.encode() for v in kv.values()])
        a.check(f["UpdateCUDAProviderOptions"](opts, keys, vals, len(kv)), "setting CUDA provider options")
        a.check(f["SessionOptionsAppendExecutionProvider_CUDA_V2"](so, opts), "appending the CUDA provider")
        f["ReleaseCUDAProviderOptions"](opts)
    out["stage"] = "create session"
    sess = _P()
    data = model.SerializeToString()
    t0 = time.perf_counter()
    a.check(a.CreateSessionFromArray(a.env, data, len(data), so, C.byref(sess)), "creating the session")
    out["create_seconds"] = time.perf_counter() - t0
    out["create_requests"] = alloc.stats.calls
    st = a.UnregisterAllocator(a.env, info)
    if st:
        a.ReleaseStatus(st)
    out["stage"] = "bind"
    types = static_types(model)
    feeds = random_inputs(model, 0)
    bind = _P()
    a.check(f["CreateIoBinding"](sess, C.byref(bind)))
    keep: list = []

    def tensor(name: str, arr: np.ndarray | None, t) -> tuple[_P, int, np.dtype]:
        dtype = np.dtype(helper.tensor_dtype_to_np_dtype(t.elem_type))
        shape = list(t.shape)
        nbytes = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
        if cuda:
            db = placement.DeviceBuffer(max(nbytes, 256))
            keep.append(db)
            ptr = db.ptr
            if arr is not None:
                src = np.ascontiguousarray(arr, dtype=dtype)
                rc = lib.cudaMemcpy(_P(ptr), src.ctypes.data_as(_P), C.c_size_t(nbytes), 1)
                assert rc == 0, f"cudaMemcpy H2D {rc}"
            else:
                lib.cudaMemset(_P(ptr), 0, C.c_size_t(nbytes))
        else:
            host = np.zeros(shape, dtype) if arr is None else np.ascontiguousarray(arr, dtype=dtype).copy()
            keep.append(host)
            ptr = host.ctypes.data
        dims = (C.c_int64 * len(shape))(*shape)
        val = _P()
        a.check(a.CreateTensorWithDataAsOrtValue(info, _P(ptr), nbytes, dims, len(shape), t.elem_type, C.byref(val)))
        keep.append(val)
        return val, ptr, nbytes

    inits = {i.name for i in model.graph.initializer}
    for i in model.graph.input:
        if i.name in inits:
            continue
        val, _, _ = tensor(i.name, feeds[i.name], types[i.name])
        a.check(f["BindInput"](bind, i.name.encode(), val))
    outs = []
    for o in model.graph.output:
        val, ptr, nbytes = tensor(o.name, None, types[o.name])
        a.check(f["BindOutput"](bind, o.name.encode(), val))
        outs.append((o.name, ptr, nbytes, types[o.name]))
    ro = _P()
    a.check(a.CreateRunOptions(C.byref(ro)))
    out["stage"] = "run"
    times, calls = [], []
    for k in range(job["iters"] + job["warmup"]):
        alloc.begin_run()
        c0 = alloc.stats.calls
        t0 = time.perf_counter()
        st = f["RunWithBinding"](sess, ro, bind)
        if st:
            s = alloc.stats
            out.update(failed_run=k, requests_per_run=calls + [s.calls - c0], requests=s.calls, planned=s.planned,
                       fallback=s.fallback, rejected=s.rejected, failures=s.failures[:5], high_water=s.high_water,
                       layout_height=layout.height, cap=job["cap"])
        a.check(st, f"run {k}")
        if cuda:
            lib.cudaDeviceSynchronize()
        dt = time.perf_counter() - t0
        calls.append(alloc.stats.calls - c0)
        if k >= job["warmup"]:
            times.append(dt)
    out["stage"] = "done"
    got = {}
    for name, ptr, nbytes, t in outs:
        dtype = np.dtype(helper.tensor_dtype_to_np_dtype(t.elem_type))
        host = np.empty(list(t.shape), dtype)
        if cuda:
            lib.cudaMemcpy(host.ctypes.data_as(_P), _P(ptr), C.c_size_t(nbytes), 2)
        else:
            host[...] = np.frombuffer((C.c_char * nbytes).from_address(ptr), dtype).reshape(host.shape)
        got[name] = host
    np.savez(job["outputs"], **got)
    s = alloc.stats
    out.update(times_ms=[round(1e3 * t, 3) for t in times], median_ms=1e3 * float(np.median(times)),
               requests_per_run=calls, requests=s.calls, planned=s.planned, fallback=s.fallback,
               rejected=s.rejected, in_scratch=s.in_scratch, failures=s.failures[:5], high_water=s.high_water,
               layout_height=layout.height, cap=job["cap"])
    return out


# ------------------------------------------------------------------------------------------ parent (binding)

def run_child(job: dict, path: Path, timeout: float, ref_outputs: dict | None = None) -> dict:
    """Run ``job`` (``child``'s fields) in a child process (its description written to ``path``): the child's
    record, with ``outputs_match`` and ``worst`` against ``ref_outputs`` when it finished and they are given.
    A child that outlives ``timeout`` seconds is recorded as such (``error``), not raised."""
    from remc.backends import runtime
    path.write_text(json.dumps(job))
    t0 = time.perf_counter()
    try:
        p = subprocess.run([sys.executable, __file__, "--child", str(path)], capture_output=True, text=True,
                           timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"variant": job["variant"], "error": f"child killed after {timeout} s", "stage": "timeout"}
    res = {"variant": job["variant"], "rc": p.returncode, "wall_seconds": time.perf_counter() - t0,
           "stderr_tail": p.stderr[-1500:]}
    try:
        res.update(json.loads(p.stdout.strip().splitlines()[-1]))
    except (ValueError, IndexError):
        res["stdout_tail"] = p.stdout[-800:]
    if res.get("stage") == "done" and ref_outputs is not None:
        got = dict(np.load(job["outputs"]))
        ok, worst = runtime.compare_outputs(got, ref_outputs, rtol=runtime.default_rtol(job["device"]))
        res.update(outputs_match=ok, worst=worst)
    return res


def parent(a) -> None:
    from remc.backends import placement, runtime
    data: dict = {"device": a.device, "runs": []}
    outp = Path(a.out)
    tmp = Path(tempfile.mkdtemp(prefix="remc-cgenv-"))
    for s in a.models.split(","):
        model = spec_model(s)
        mpath = tmp / "model.onnx"
        model.ir_version = min(model.ir_version, 10)
        onnx.save(model, mpath)
        settings = runtime.DeviceSettings()
        lay = placement.model_layout(model, a.device, settings, bound_outputs=True)
        lpath = tmp / "layout.pkl"
        lpath.write_bytes(pickle.dumps(lay))
        cap = int(lay.height * a.cap_factor) // 256 * 256 + 256
        row: dict = {"model": s, "layout_height": lay.height, "live_lower_bound": lay.lower_bound, "cap": cap}
        feeds = runtime.random_inputs(model, 0)
        if a.device == "cuda":  # the binding's runs: the arena (+ graph), remc's allocator (gpu_external_alloc)
            arena = runtime.DeviceSettings(placement="arena")
            ref = runtime.measure(model, "cuda", feeds=feeds, iters=a.iters, mem_method=None, settings=arena)
            row["binding_arena_ms"] = 1e3 * ref.median_seconds
            try:  # its own layout (outputs allocated by ONNX Runtime, not bound): a buffer of that height
                own = placement.model_layout(model, "cuda", settings).height
                row["binding_remc_allocator_cap"] = own
                row["binding_remc_allocator_ms"] = 1e3 * runtime.measure(
                    model, "cuda", feeds=feeds, iters=a.iters, mem_limit=own, settings=settings,
                    mem_method=None).median_seconds
            except runtime.RuntimeFailure as e:
                row["binding_remc_allocator_error"] = str(e)[:400]
            try:
                row["binding_arena_cuda_graph_ms"] = 1e3 * runtime.measure(
                    model, "cuda", feeds=feeds, iters=a.iters, mem_method=None, settings=arena,
                    cuda_graph=True).median_seconds
            except runtime.RuntimeFailure as e:
                row["binding_arena_cuda_graph_error"] = str(e)[:400]
        else:
            ref = runtime.measure(model, "cpu", feeds=feeds, iters=2, mem_method=None)
        for variant, graph in (("env_allocator", False), ("env_allocator_cuda_graph", True)):
            if graph and a.device != "cuda":
                continue
            job = {"variant": variant, "device": a.device, "cuda_graph": graph, "model": str(mpath),
                   "layout": str(lpath), "cap": cap, "iters": a.iters, "warmup": 3, "auto_runs": a.auto_runs,
                   "outputs": str(tmp / f"{variant}.npz")}
            res = run_child(job, tmp / f"{variant}.json", a.child_timeout, ref.outputs)
            row[variant] = res
            print(json.dumps({"model": s, **{k: v for k, v in res.items() if k != "stderr_tail"}}), flush=True)
        data["runs"].append(row)
        outp.write_text(json.dumps(data, indent=1, default=str))
    outp.write_text(json.dumps(data, indent=1, default=str))


def main() -> None:
    if len(sys.argv) == 3 and sys.argv[1] == "--child":
        job = json.loads(Path(sys.argv[2]).read_text())
        res: dict = {}
        try:
            child(job, res)
        except Exception as e:  # noqa: BLE001 - the parent records where and why
            res.update(error=f"{type(e).__name__}: {e}", traceback=traceback.format_exc()[-1500:])
        print(json.dumps(res, default=str), flush=True)
        return
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--models", default="resnet50:2:small")
    ap.add_argument("--iters", type=int, default=10)
    ap.add_argument("--cap-factor", type=float, default=1.0, help="the cap: this times the layout's height")
    ap.add_argument("--child-timeout", type=float, default=240)
    ap.add_argument("--auto-runs", action="store_true",
                    help="begin a new run of the layout when the last one's planned requests are used up (the first "
                         "Run call with enable_cuda_graph executes the graph three times); on the H200 every request then lands at its planned address in a buffer of the layout height (BENCHMARKS, session 10)")
    parent(ap.parse_args())


if __name__ == "__main__":
    main()
