"""Is a graph's CPU arena need the same in every session? The bytes held (no cap to speak of: 1 TiB) with a
region per request (``kSameAsRequested``, remc's CPU arena before) in ``--sessions`` sessions of one process,
with the default intra-op threads and with 1, against the least cap of remc's one-region arena, bisected
in as many sessions, and the replay's (``remc.fit.predict``).

    python tools/arena_sessions.py --models resnet50,mobilenet_v2,unet [--sessions 3]
"""
from __future__ import annotations

import argparse
import json

from remc import zoo
from remc.backends import runtime
from remc.fit import predict
from remc.pipeline import State, compile_pipeline, run


def held_per_request(model, feeds, threads: int | None) -> int:
    events = runtime._profile_events(model, "cpu", feeds, mem_limit=1 << 40, threads=threads,
                                     arena_extend="kSameAsRequested")
    return max(int(e["args"].get("mem_arena_held", 0)) for e in events)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", default="resnet50,mobilenet_v2,unet")
    ap.add_argument("--sessions", type=int, default=3)
    a = ap.parse_args()
    for name in a.models.split(","):
        cfg = dict(zoo.small_config(name))
        batch = cfg.pop("batch")
        train = zoo.export(name, batch, train=True, **cfg)
        st = run(compile_pipeline(strategy="checkpoint-all"), State(model=train, budget=1 << 50))
        lg = run(compile_pipeline(strategy="lin-greedy"), State(model=train, budget=int(0.8 * st.sim.peak)))
        for label, m in (("checkpoint-all", st.lowered), ("lin-greedy@0.8", lg.lowered)):
            feeds = runtime.random_inputs(m, 0)
            row = {"model": name, "batch": batch, "plan": label}
            for t in (None, 1):
                row[f"held_per_request_threads_{t or 'default'}"] = sorted(
                    {held_per_request(m, feeds, t) for _ in range(a.sessions)})
            row["least_cap_one_region"] = sorted(
                {runtime.bisect_peak(m, "cpu", feeds=feeds, runs=2, resolution=256).peak for _ in range(a.sessions)})
            row["replayed_least_cap"] = predict(m, "cpu").arena
            print(json.dumps(row), flush=True)


if __name__ == "__main__":
    main()
