#!/usr/bin/env python3
"""Where remc's live-bytes model holds more tensor bytes than the lowered graph at the model's peak node:
tensors that share one buffer on ONNX Runtime (an output written in place into its input's buffer, an alias
view) are counted once per value by the model (``passes.livecheck.model_live``) and once per buffer by the
lowered graph's events (``passes.livecheck.lowered_live``).

    python tools/model_inplace_overcount.py unet_s2.onnx [--strategy checkpoint-all]
"""
from __future__ import annotations

import argparse
import json

import onnx

from remc.passes.livecheck import lowered_live, model_live
from remc.pipeline import State, compile_pipeline, run


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("model")
    ap.add_argument("--strategy", default="checkpoint-all")
    ap.add_argument("--budget", type=int, default=1 << 50)
    a = ap.parse_args()
    st = run(compile_pipeline(strategy=a.strategy), State(model=onnx.load(a.model), budget=a.budget))
    model = model_live(st.graph, st.plan, "cpu", {})
    best = None
    for name, holds, live, _ in lowered_live(st.lowered, "cpu", None):
        pred = model.get(name, ({}, 0))[0]
        if best is None or sum(pred.values()) > best[0]:
            best = (sum(pred.values()), name, holds, live, pred)
    total, name, holds, live, pred = best
    op = {o: n.op_type for n in st.lowered.graph.node for o in n.output}
    shared = []
    for b, vals in holds.items():
        inside = [v for v in vals if v in pred]
        if len(inside) > 1:
            shared.append({"buffer": b, "values": [[v, op.get(v)] for v in inside],
                           "counted_twice": sum(pred[v] for v in inside) - live[b]})
    missing = sum(n for v, n in pred.items() if not any(v in vals for vals in holds.values()))
    print(json.dumps({"node": name, "model_tensors": total, "lowered_tensors": sum(live.values()),
                      "shared_buffers_counted_twice": sum(s["counted_twice"] for s in shared),
                      "model_values_not_held": missing, "shared": shared}))


if __name__ == "__main__":
    main()
