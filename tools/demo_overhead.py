#!/usr/bin/env python3
"""The time overhead of ``remc demo``'s compiled step, measured so that it means something on a loaded machine.

``remc demo`` prints one ratio: the median of 5 runs of the compiled step (remc's placement, cap = budget)
over the median of 5 runs of the unmodified step (ONNX Runtime's arena, no cap), the two measured one after
the other. At the demo's size (ResNet50 test size, batch 8: a few ms per step) that ratio is mostly noise.
Here the steps of the demo's work directory run alternately, ``--runs`` times each after warm-up runs:

- ``compiled``: the compiled step on remc's placement, a buffer of its layout's height;
- ``unmodified, remc``: the unmodified step on remc's placement, a buffer of its own layout's height (the
  same allocator: the ratio is recomputation alone);
- ``unmodified, arena``: the unmodified step on ONNX Runtime's arena (what the demo compares with);

the medians, their ratios, and the spread of the ratio the demo's 5-run windows would have printed (each
window of 5 consecutive alternations: least and largest ratio of the two windows' medians).

    remc demo --workdir /tmp/d && nice -n 10 python tools/demo_overhead.py /tmp/d --runs 60 --out results/demo_overhead.json
"""
from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path

import onnx

from remc.backends import runtime
from remc.fit import predict


def _placed(model: onnx.ModelProto, feeds: dict):  # noqa: ANN202
    cap = predict(model, "cpu").arena
    sess, alloc = runtime.capped_session(model, "cpu", cap)
    return runtime.Runner(sess, feeds, "cpu", mem_limit=cap, allocator=alloc)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("workdir")
    ap.add_argument("--model", default="resnet50")
    ap.add_argument("--runs", type=int, default=60)
    ap.add_argument("--out")
    a = ap.parse_args()
    wd = Path(a.workdir)
    compiled = onnx.load(wd / f"{a.model}_step_remat.onnx")
    unmodified = onnx.load(wd / f"{a.model}_step.onnx")
    feeds = runtime.random_inputs(unmodified, 0)
    ways = {"compiled": _placed(compiled, runtime.random_inputs(compiled, 0)),
            "unmodified, remc": _placed(unmodified, feeds),
            "unmodified, arena": runtime.Runner(runtime.make_session(unmodified, "cpu"), feeds, "cpu")}
    for _ in range(3):
        for f in ways.values():
            f()
    times: dict[str, list[float]] = {k: [] for k in ways}
    for _ in range(a.runs):
        for k, f in ways.items():
            t0 = time.perf_counter()
            f()
            times[k].append(time.perf_counter() - t0)
    med = {k: statistics.median(v) for k, v in times.items()}
    windows = [statistics.median(times["compiled"][i:i + 5]) / statistics.median(times["unmodified, arena"][i:i + 5])
               for i in range(0, a.runs - 4, 5)]
    out = {"runs": a.runs, "median_ms": {k: round(1e3 * v, 3) for k, v in med.items()},
           "compiled_over_unmodified_remc": round(med["compiled"] / med["unmodified, remc"], 3),
           "compiled_over_unmodified_arena": round(med["compiled"] / med["unmodified, arena"], 3),
           "demo_5_run_ratio_range": [round(min(windows), 3), round(max(windows), 3)], "windows": len(windows),
           "native": getattr(ways["compiled"].session, "native", None) is not None}
    print(json.dumps(out))
    if a.out:
        Path(a.out).write_text(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
