"""Can a CUDA graph be captured with remc's allocator if the CUDA provider gets a stream of ours? (issue 11)

With ``gpu_external_alloc``/``gpu_external_free`` the CUDA provider runs on the legacy default stream
(``stream_ = nullptr`` in ``CUDAExecutionProvider::CUDAExecutionProvider``), which CUDA cannot capture. Its
provider options ``has_user_compute_stream``/``user_compute_stream`` give it a stream of the caller's; this
probe makes one with ``cudaStreamCreateWithFlags(cudaStreamNonBlocking)`` on the CUDA runtime ONNX Runtime
loaded and tries, on one small lowered training graph (the zoo's ResNet50 at test size, batch 2):

1. remc's allocator + ``enable_cuda_graph=1`` (no stream of ours);
2. remc's allocator + our stream + ``enable_cuda_graph=1``;
3. remc's allocator + our stream, no CUDA graph;
4. ONNX Runtime's arena + our stream + ``enable_cuda_graph=1`` (control: the stream option itself works).

Each: session creation and three runs (the provider captures at a run after ``min_num_runs_before_cuda_graph_capture``),
or the error ONNX Runtime returned. Also whether the binding's shared library exports the C API's
``OrtGetApiBase`` (the route through ``OrtApi::RegisterAllocator`` + ``session.use_env_allocators``, not tried).

    tools/gpu_session.sh python3 $REPO/tools/gpu_cudagraph_stream_probe.py --out $OUT/cudagraph_stream.json
"""
from __future__ import annotations

import argparse
import ctypes
import json
from pathlib import Path


def run_variant(low, feeds, lay, *, placed: bool, stream: int | None, graph: bool) -> dict:
    import onnxruntime as ort

    from remc.backends import placement, runtime
    from remc.ir.onnx_types import static_types
    settings = runtime.DeviceSettings()
    opts = runtime._cuda_options(0, None, graph, settings)
    alloc = None
    if placed:
        alloc = placement.on_device(2 * lay.height, lay, 0)
        opts.update(alloc.provider_options())
    if stream is not None:
        opts.update(has_user_compute_stream="1", user_compute_stream=str(stream))
    so = ort.SessionOptions()
    so.execution_order = ort.ExecutionOrder.PRIORITY_BASED
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    so.enable_mem_pattern = False
    so.log_severity_level = 3
    so.add_session_config_entry("session.disable_cpu_ep_fallback", "1")
    row: dict = {"placed": placed, "user_stream": stream is not None, "cuda_graph": graph}
    try:
        sess = ort.InferenceSession(low.SerializeToString(), so, providers=[("CUDAExecutionProvider", opts)])
    except Exception as e:  # noqa: BLE001 - recorded
        row["error"] = f"session creation: {type(e).__name__}: {str(e)[:600]}"
        return row
    try:
        r = runtime.Runner(sess, feeds, "cuda", cuda_graph=graph, output_types=static_types(low), allocator=alloc)
        for i in range(3):
            r()
            row["runs"] = i + 1
        row["ok"] = True
        if alloc is not None:
            st = alloc.stats
            row.update(calls=st.calls, planned=st.planned, fallback=st.fallback, high_water=st.high_water,
                       height=lay.height)
    except Exception as e:  # noqa: BLE001 - recorded
        row["error"] = f"run: {type(e).__name__}: {str(e)[:600]}"
    return row


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    import onnxruntime
    onnxruntime.preload_dlls()
    from remc import zoo
    from remc.backends import placement, runtime
    from remc.pipeline import State, compile_pipeline, run
    cfg = {k: v for k, v in zoo.small_config("resnet50").items() if k != "batch"}
    low = run(compile_pipeline(strategy="checkpoint-all", device="cuda"),
              State(model=zoo.export("resnet50", 2, train=True, **cfg), budget=1 << 60)).lowered
    feeds = runtime.random_inputs(low, 0)
    runtime._binding_cuda_allocator(0)
    lay = placement.model_layout(low, "cuda")
    lib = placement._cudart()
    s = ctypes.c_void_p()
    rc = lib.cudaStreamCreateWithFlags(ctypes.byref(s), ctypes.c_uint(1))  # cudaStreamNonBlocking
    out: dict = {"onnxruntime": onnxruntime.__version__, "stream_create_rc": rc, "rows": []}
    for placed, stream, graph in ((True, None, True), (True, s.value, True), (True, s.value, False),
                                  (False, s.value, True)):
        out["rows"].append(run_variant(low, feeds, lay, placed=placed, stream=stream, graph=graph))
        print(json.dumps(out["rows"][-1]), flush=True)
    try:
        from onnxruntime.capi import _pybind_state
        out["OrtGetApiBase_exported"] = hasattr(ctypes.CDLL(_pybind_state.__file__), "OrtGetApiBase")
    except Exception as e:  # noqa: BLE001 - recorded
        out["OrtGetApiBase_exported"] = f"{type(e).__name__}: {e}"
    print(json.dumps({k: v for k, v in out.items() if k != "rows"}), flush=True)
    Path(a.out).write_text(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
