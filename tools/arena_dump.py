"""Dump what the arena replay needs to be checked offline: per node of a lowered graph, ONNX Runtime's
profiled arena stats (bytes in use, held, peak, delta) and the kernel memory measured for the node; per
graph the replayed totals. Used to fit the replay to a device without device time for every try.

    python tools/arena_dump.py --device cuda --out dump.json [--paper] [--models resnet50:2] [--approx 0.7]
"""
from __future__ import annotations

import argparse
import json

from remc import zoo
from remc.backends import runtime
from remc.backends.scratch import kernel_memory
from remc.fit import predict
from remc.pipeline import State, compile_pipeline, run


def dump(model, device: str) -> dict:
    feeds = runtime.random_inputs(model, 0)
    events = runtime._profile_events(model, device, feeds, mem_limit=None if device.startswith("cuda") else 1 << 40)
    km = kernel_memory(model, device)
    pred = predict(model, device, settings=runtime.DeviceSettings(placement="arena"))  # this tool is about the arena
    rows = []
    for e in events:
        a = e["args"]
        name = runtime._event_node(e)
        k = km.get(name)
        rows.append([name, a.get("op_name"), int(a.get("mem_in_use_delta", 0)), int(a.get("mem_bytes_in_use", 0)),
                     int(a.get("mem_arena_held", 0)), int(a.get("mem_in_use_peak", 0)), int(a.get("output_size", 0)),
                     list(k.raw) if k else None, [k.scratch, k.persistent, k.prepack] if k else None])
    return {"predicted": [pred.arena, pred.in_use_peak, pred.outside], "nodes": rows}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--out", required=True)
    ap.add_argument("--paper", action="store_true")
    ap.add_argument("--models", default="resnet50:2")
    ap.add_argument("--approx", type=float, default=0.7)
    a = ap.parse_args()
    out = {}
    for s in a.models.split(","):
        name, batch = s.split(":")[0], int(s.split(":")[1])
        cfg = dict(zoo.paper_config(name) if a.paper else zoo.small_config(name))
        cfg.pop("batch", None)
        if len(s.split(":")) > 2:
            h, w = s.split(":")[2].split("x")
            cfg.update(height=int(h), width=int(w))
        train = zoo.export(name, int(batch), train=True, **cfg)
        st = run(compile_pipeline(strategy="checkpoint-all", device=a.device), State(model=train, budget=1 << 60))
        out[f"{s}/checkpoint-all"] = dump(st.lowered, a.device)
        out[f"{s}/unmodified"] = dump(train, a.device)
        try:
            passes = compile_pipeline(strategy="lin-greedy", device=a.device)
            s2 = run(passes, State(model=train, budget=int(a.approx * st.sim.peak)))
            out[f"{s}/lin-greedy@{a.approx}"] = dump(s2.lowered, a.device)
        except Exception as e:  # noqa: BLE001
            out[f"{s}/lin-greedy@{a.approx}"] = {"error": str(e)[:300]}
        with open(a.out, "w") as f:
            json.dump(out, f)
        print(s, "done", flush=True)


if __name__ == "__main__":
    main()
