"""Probe of remc's CPU placement (``backends/capi.py``): every request of a zoo model's training graph through
remc's allocator, in a buffer of exactly its layout's height.

For each model (test size, the checkpoint-all plan's lowered graph): remc's layout (``passes/placement.py``,
kernel memory measured on remc's allocator), then a C-API session on one host buffer of the layout's height
run three times: requests made vs the layout's, how many went to their planned offset, the buffer's
high-water mark, the outputs against the Python binding's session, and (``--order``) the executed node order
from ONNX Runtime's profiler against the binding's PRIORITY_BASED order.

    python tools/cpu_placement_probe.py --models mobilenet_v2,resnet50 [--order] [--threads N]
"""
from __future__ import annotations

import argparse
import json
import os
import tempfile

from remc import zoo
from remc.backends import capi, runtime
from remc.backends.placement import model_layout
from remc.pipeline import State, compile_pipeline, run


def probe(name: str, threads: int | None, order: bool) -> dict:
    cfg = dict(zoo.small_config(name))
    batch = cfg.pop("batch")
    train = zoo.export(name, batch, train=True, **cfg)
    low = run(compile_pipeline(strategy="checkpoint-all"), State(model=train, budget=1 << 50)).lowered
    lay = model_layout(low, "cpu")
    n_create, n_run = len(lay.sequence("create")), len(lay.sequence("run"))
    prefix = os.path.join(tempfile.mkdtemp(prefix="remc-capi-"), "p") if order else None
    sess, alloc = capi.placed_session(low, lay.height, lay, threads=threads, profile_prefix=prefix)
    feeds = runtime.random_inputs(low, 0)
    r = runtime.Runner(sess, feeds, "cpu", mem_limit=lay.height, allocator=alloc)
    created = alloc.stats.calls
    runs, first = [], None
    for _ in range(3):
        before = (alloc.stats.calls, alloc.stats.planned)
        r()
        first = first or r.outputs()  # seeded random nodes draw anew each run: compare first runs
        runs.append({"requests": alloc.stats.calls - before[0], "planned": alloc.stats.planned - before[1]})
    ref = runtime.measure(low, "cpu", feeds=feeds, warmup=0, iters=1, mem_method=None, threads=threads)
    ok, worst = runtime.compare_outputs(first, ref.outputs)
    row = {"model": name, "batch": batch, "layout_height": lay.height, "lower_bound": lay.lower_bound,
           "layout_requests": {"create": n_create, "run": n_run}, "create_requests": created, "runs": runs,
           "high_water": alloc.stats.high_water, "fallback": alloc.stats.fallback,
           "in_scratch": alloc.stats.in_scratch, "failures": len(alloc.stats.failures),
           "outputs_equal_binding": ok, "worst": worst}
    if order:
        path = sess.end_profiling()
        with open(path) as f:
            ev = json.load(f)
        got = [e["name"][: -len("_kernel_time")] for e in sorted(ev, key=lambda e: e["ts"])
               if e.get("cat") == "Node" and str(e.get("name", "")).endswith("_kernel_time")]
        want = runtime.executed_order(low, "cpu", feeds=feeds)
        row["order_equal_binding"] = got[: len(want)] == want
    return row


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", default="mobilenet_v2")
    ap.add_argument("--threads", type=int, default=None)
    ap.add_argument("--order", action="store_true")
    ap.add_argument("--out")
    a = ap.parse_args()
    rows = []
    for m in a.models.split(","):
        row = probe(m, a.threads, a.order)
        print(json.dumps(row), flush=True)
        rows.append(row)
    if a.out:
        with open(a.out, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
