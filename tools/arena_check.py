"""Replay vs ONNX Runtime: the arena replay (``remc.fit.predict``) against the profiler's accounting.

For each zoo model (test size unless ``--paper``) the checkpoint-all plan and the approx plan at 0.7 of its
live peak are lowered and run once with the profiler on (no cap): the replayed arena bytes held and in use
against the measured ones, and the first node where in-use bytes differ. On CPU also the least cap: the
replayed one (``predict``) against the one bisected on the device (two runs per probe, to 256 bytes) in
``--sessions`` separate bisections. One JSON line per graph.

    python tools/arena_check.py [--device cpu|cuda] [--models resnet50,unet] [--batch N]
"""
from __future__ import annotations

import argparse
import json

from remc import zoo
from remc.backends import runtime
from remc.backends.scratch import kernel_memory
from remc.backends.strategies import make_options
from remc.fit import predict
from remc.passes.arena import graph_events, replay
from remc.pipeline import State, compile_pipeline, run


def check(model, device: str, sessions: int = 2) -> dict:
    pred = predict(model, device, settings=runtime.DeviceSettings(placement="arena"))  # this tool is about the arena
    feeds = runtime.random_inputs(model, 0)
    pk = runtime.profiler_peak(model, device, feeds=feeds, mem_limit=None if device.startswith("cuda") else 1 << 40)
    ev = graph_events(model, device, kernel_memory(model, device))
    rp = replay(ev, runtime.arena_config(device))
    first = None
    for k, (name, v) in enumerate(pk.node_in_use.items()):
        if k < len(rp.node_in_use) and v != rp.node_in_use[k]:
            first = {"index": k, "node": name, "measured": v, "replayed": rp.node_in_use[k]}
            break
    least = {}
    if not device.startswith("cuda"):
        caps = [runtime.bisect_peak(model, device, feeds=feeds, runs=2, resolution=256).peak for _ in range(sessions)]
        least = {"predicted_least_cap": pred.arena, "measured_least_cap": caps}
    return {**least, "predicted_held": pred.arena, "measured_held": pk.held, "predicted_in_use": pred.in_use_peak,
            "measured_in_use": pk.peak, "baseline_measured": pk.baseline, "first_difference": first,
            "nodes": len(pk.node_in_use), "method": pk.method}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--models", default=",".join(zoo.list_models()))
    ap.add_argument("--paper", action="store_true")
    ap.add_argument("--batch", type=int)
    ap.add_argument("--sessions", type=int, default=2, help="CPU: bisect the least cap this many times")
    a = ap.parse_args()
    for name in a.models.split(","):
        cfg = dict(zoo.paper_config(name) if a.paper else zoo.small_config(name))
        b = a.batch or cfg.pop("batch")
        cfg.pop("batch", None)
        train = zoo.export(name, b, train=True, **cfg)
        st = run(compile_pipeline(strategy="checkpoint-all", device=a.device), State(model=train, budget=1 << 60))
        rows = [("checkpoint-all", st.lowered)]
        approx = compile_pipeline(strategy="approx", device=a.device, options=make_options("approx", time_limit=20))
        s2 = run(approx[:3], State(model=train))
        s2.budget = int(0.7 * st.sim.peak)
        try:
            run(approx[3:], s2)
            rows.append(("approx@0.7", s2.lowered))
        except Exception as e:  # noqa: BLE001 - report and go on
            print(json.dumps({"model": name, "strategy": "approx@0.7", "error": str(e)[:200]}))
        for strat, low in rows:
            try:
                r = check(low, a.device, a.sessions)
            except Exception as e:  # noqa: BLE001
                r = {"error": str(e)[:300]}
            print(json.dumps({"model": name, "batch": b, "strategy": strat, **r}), flush=True)


if __name__ == "__main__":
    main()
