"""Does remc's allocator work under onnxruntime-gpu? (``backends/placement.py``, issue 11)

For each model spec ``name:batch[:HxW]`` (zoo, paper size unless ``--small``), its unmodified training graph
(the checkpoint-all lowering): remc's layout on CUDA (``backends.placement.model_layout``: events with kernel
memory measured on the GPU), then runs

1. under remc's allocator with a buffer of exactly the layout's height: how many callbacks came, how many
   followed the layout, the high-water mark against the height, outputs against an uncapped BFC-arena run
   (norm-relative), median time against the arena's, with and without CUDA graph;
2. under a buffer 1 MiB short of the height: must fail with remc's out-of-memory error (a NULL from the
   allocator), and the process must go on.

The first requests that did not follow the layout are written out (phase, index, bytes, how), to see where
ONNX Runtime's sequence differs from the prediction.

    tools/gpu_session.sh python3 $REPO/tools/gpu_placement_probe.py --out $OUT/placement_probe.json \\
        --models resnet50:8 --small
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))


def probe(spec: str, small: bool, iters: int) -> dict:
    from gpu_arena_evidence import spec as parse_spec

    from remc import zoo
    from remc.backends import runtime
    from remc.backends.placement import model_layout
    from remc.pipeline import State, compile_pipeline, run
    name, batch, cfg = parse_spec(spec, small)
    t0 = time.perf_counter()
    train = zoo.export(name, batch, train=True, **cfg)
    low = run(compile_pipeline(strategy="checkpoint-all", device="cuda"), State(model=train, budget=1 << 60)).lowered
    lay = model_layout(low, "cuda")
    row: dict = {"model": name, "batch": batch, "blocks": len(lay.blocks), "height": lay.height,
                 "live_lower_bound": lay.lower_bound, "layout_order": lay.order,
                 "outside": runtime.outside_bytes(low, "cuda"), "layout_seconds": time.perf_counter() - t0}
    feeds = runtime.random_inputs(low, 0)
    arena = runtime.DeviceSettings(placement="arena")
    ref = runtime.measure(low, "cuda", feeds=feeds, iters=iters, mem_method="profiler", settings=arena)
    row.update(arena_in_use=ref.measured_peak, arena_held=ref.held_peak, arena_seconds=ref.median_seconds)
    try:
        cg = runtime.measure(low, "cuda", feeds=feeds, iters=iters, mem_method=None, settings=arena, cuda_graph=True)
        row["arena_seconds_cuda_graph"] = cg.median_seconds
    except Exception as e:  # noqa: BLE001 - recorded
        row["arena_cuda_graph_error"] = str(e)[:300]
    settings = runtime.DeviceSettings()
    row["trace_roomy"] = _trace(low, feeds, lay, settings, 2 * lay.height)
    sess, alloc = runtime.capped_session(low, "cuda", lay.height, settings, layout=lay)
    alloc.trace = []
    r = runtime.Runner(sess, feeds, "cuda", mem_limit=lay.height, allocator=alloc)
    try:
        for _ in range(2):
            r()
    except runtime.OutOfMemory as e:
        row["exact_height"] = f"OutOfMemory: {e}"
        row["exact_trace"] = _off_plan(alloc, lay)
        return row
    t = []
    for _ in range(iters):
        s = time.perf_counter()
        r()
        t.append(time.perf_counter() - s)
    ok, worst = runtime.compare_outputs(r.outputs(), ref.outputs, rtol=runtime.CUDA_RTOL)
    st = alloc.stats
    row.update(placed_ran=True, placed_seconds=sorted(t)[len(t) // 2], high_water=st.high_water,
               peak_in_use=st.peak_in_use, calls=st.calls, planned=st.planned, fallback=st.fallback,
               rejected=st.rejected, failures=len(st.failures), runs=alloc.runs, outputs_match=ok, worst=worst,
               create_requests=sum(1 for x in alloc.trace if x[0] == "create"),
               planned_create=len(lay.sequence("create")), planned_run=len(lay.sequence("run")),
               run_requests_first=sum(1 for x in alloc.trace if x[0] == "run") // max(alloc.runs, 1),
               off_plan=[x for x in alloc.trace if x[4] != "planned"][:40])
    del r, sess
    try:
        cgm = runtime.measure(low, "cuda", feeds=feeds, iters=iters, mem_method="profiler", mem_limit=lay.height,
                              settings=settings, layout=lay, cuda_graph=True)
        row.update(placed_seconds_cuda_graph=cgm.median_seconds, placed_cuda_graph=cgm.placement)
    except Exception as e:  # noqa: BLE001 - recorded
        row["placed_cuda_graph_error"] = f"{type(e).__name__}: {str(e)[:1500]}"
    try:
        runtime.measure(low, "cuda", feeds=feeds, iters=1, mem_limit=lay.height - (1 << 20), settings=settings,
                        layout=lay)
        row["short_buffer"] = "ran (unexpected)"
    except runtime.OutOfMemory as e:
        row["short_buffer"] = f"OutOfMemory: {e}"
    except Exception as e:  # noqa: BLE001 - recorded
        row["short_buffer"] = f"{type(e).__name__}: {str(e)[:300]}"
    row["seconds"] = time.perf_counter() - t0
    return row


def _off_plan(alloc, lay, k: int = 60) -> list:
    """The requests that did not follow the layout, each with the planned request at its index."""
    seqs = {"create": lay.sequence("create"), "run": lay.sequence("run")}
    whats = {ph: [b.what for b in sorted((b for b in lay.blocks if b.phase == ph),
                                         key=lambda b: b.start if b.request < 0 else b.request)] for ph in seqs}
    out = []
    for ph, i, n, off, how in alloc.trace:
        if how in ("planned", "scratch"):
            continue
        seq = seqs.get(ph, [])
        planned = (seq[i][0], whats[ph][i]) if i < len(seq) else None
        out.append([ph, i, n, off, how, planned])
        if len(out) >= k:
            break
    return out


def _trace(low, feeds, lay, settings, cap: int) -> dict:
    """Two runs in a roomy buffer: every request, and which ones left the layout."""
    from remc.backends import runtime
    sess, alloc = runtime.capped_session(low, "cuda", cap, settings, layout=lay)
    alloc.trace = []
    r = runtime.Runner(sess, feeds, "cuda", mem_limit=cap, allocator=alloc)
    try:
        for _ in range(2):
            r()
        err = None
    except Exception as e:  # noqa: BLE001 - recorded
        err = f"{type(e).__name__}: {e}"[:400]
    st = alloc.stats
    res = {"cap": cap, "error": err, "high_water": st.high_water, "peak_in_use": st.peak_in_use, "calls": st.calls,
           "planned": st.planned, "fallback": st.fallback, "rejected": st.rejected, "in_scratch": st.in_scratch,
           "create_requests": sum(1 for x in alloc.trace if x[0] == "create"),
           "planned_create": len(lay.sequence("create")), "planned_run": len(lay.sequence("run")),
           "run_requests": sum(1 for x in alloc.trace if x[0] == "run"),
           "create_sizes": [x[2] for x in alloc.trace if x[0] == "create"][:40],
           "planned_create_sizes": [s for s, _ in lay.sequence("create")][:40],
           "off_plan": _off_plan(alloc, lay)}
    del r, sess
    return res


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--models", default="resnet50:8")
    ap.add_argument("--small", action="store_true")
    ap.add_argument("--iters", type=int, default=5)
    a = ap.parse_args()
    import onnxruntime
    onnxruntime.preload_dlls()
    rows = []
    for s in a.models.split(","):
        try:
            rows.append(probe(s, a.small, a.iters))
        except Exception as e:  # noqa: BLE001 - recorded, the next model still runs
            import traceback
            rows.append({"spec": s, "error": f"{type(e).__name__}: {e}", "traceback": traceback.format_exc()[-2000:]})
        print(json.dumps({k: v for k, v in rows[-1].items() if k != "off_plan"}), flush=True)
        Path(a.out).write_text(json.dumps({"onnxruntime": onnxruntime.__version__, "rows": rows}, indent=1))


if __name__ == "__main__":
    main()
