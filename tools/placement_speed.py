"""How fast ``passes.placement.layout`` is, and how close to the live lower bound, on large event sequences.

1. zoo ResNet50 at the paper's size, batch 256, ``--granularity fine``, the checkpoint-all lowering for CUDA
   (events without measured kernel scratch);
2. random event sequences of ``--random`` nodes (1-2 outputs each, scratch on 30%, random frees; the test
   suite's generator), for 10k+ allocations.

    python tools/placement_speed.py --random 8000
"""
from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--random", type=int, default=8000)
    ap.add_argument("--batch", type=int, default=256)
    a = ap.parse_args()
    from remc import zoo
    from remc.passes.arena import graph_events
    from remc.passes.placement import layout, overlaps
    from remc.pipeline import State, compile_pipeline, run
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
    from test_placement import random_events
    cfg = dict(zoo.paper_config("resnet50"))
    cfg.pop("batch", None)
    train = zoo.export("resnet50", a.batch, train=True, **cfg)
    st = run(compile_pipeline(strategy="checkpoint-all", device="cuda", granularity="fine"),
             State(model=train, budget=1 << 62))
    cases = [(f"resnet50 b{a.batch} fine, checkpoint-all ({len(st.lowered.graph.node)} nodes)",
              graph_events(st.lowered, "cuda")),
             (f"random, {a.random} nodes", random_events(random.Random(0), a.random))]
    for name, ev in cases:
        t = time.perf_counter()
        lay = layout(ev)
        dt = time.perf_counter() - t
        print(f"{name}: {len(lay.blocks)} allocations; layout {dt:.1f} s (order {lay.order}); height {lay.height}, "
              f"live lower bound {lay.lower_bound}, ratio {lay.height / lay.lower_bound:.4f}; "
              f"overlapping pairs {len(overlaps(lay))}", flush=True)


if __name__ == "__main__":
    main()
