#!/usr/bin/env python3
"""Where remc's Python allocator callbacks spend their time inside a CPU run: cProfile over 5 runs of ResNet50's
checkpoint-all training graph (test size) on remc's placement with the Python callbacks (``native=False``),
after timing it against ONNX Runtime's arena (15 alternations, medians, with and without the garbage collector).

    nice -n 10 python tools/capi_alloc_profile.py
"""
from __future__ import annotations

import cProfile
import gc
import pstats
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from capi_alloc_speed import _lowered  # noqa: E402

from remc.backends import runtime  # noqa: E402
from remc.fit import predict  # noqa: E402


def main() -> None:
    low, _ = _lowered("resnet50", None)
    cap = predict(low, "cpu").arena
    feeds = runtime.random_inputs(low, 0)
    sess, alloc = runtime.capped_session(low, "cpu", cap, native=False)
    placed = runtime.Runner(sess, feeds, "cpu", mem_limit=cap, allocator=alloc)
    arena = runtime.Runner(runtime.make_session(low, "cpu", mem_limit=2 * cap), feeds, "cpu")
    for f in (placed, arena, placed, arena):
        f()
    times: dict[str, list[float]] = {"arena": [], "remc": [], "remc, gc disabled": []}
    for _ in range(15):
        for key in times:
            if key == "remc, gc disabled":
                gc.disable()
            t0 = time.perf_counter()
            (arena if key == "arena" else placed)()
            times[key].append(time.perf_counter() - t0)
            gc.enable()
    print({k: round(1e3 * statistics.median(v), 2) for k, v in times.items()})
    pr = cProfile.Profile()
    pr.enable()
    for _ in range(5):
        placed()
    pr.disable()
    pstats.Stats(pr).sort_stats("tottime").print_stats(8)


if __name__ == "__main__":
    main()
