#!/usr/bin/env python3
"""remc's live-bytes model at checkpoint-all against what remc's CPU placement needs, before and after the kept
outputs (graph outputs: parameter gradients, the loss) are held from their unit's first computation instead of
from the start, with the 256-byte rounding of the kept outputs and of the small initializers in the buffer.

For each zoo model at test size (the checkpoint-all plan, measured kernel scratch and pre-packed weights as
``remc.fit.dag_with_measured_scratch`` sets them): the model's peak before (kept outputs in the constant, no
rounding: ``DAG.kept_from_start`` of the DAG built without it) and after, the device's need (``remc.fit.predict``:
the layout's height plus the bytes outside the buffer), its live lower bound (the most bytes the layout has live
at once, plus the bytes outside; the height adds the layout's fragmentation), and the ratios.

    nice -n 10 python tools/kept_outputs_model.py --out results/kept_outputs_model.json
"""
from __future__ import annotations

import argparse
import dataclasses
import json
from pathlib import Path

from remc import zoo
from remc.fit import allocation_rounding, dag_with_measured_scratch, predict
from remc.ir.schedule import checkpoint_all
from remc.pipeline import State, compile_pipeline, run

MODELS = ("vgg16", "vgg19", "resnet50", "mobilenet", "mobilenet_v2", "unet", "fcn8", "segnet", "gpt2", "vit")


def one(name: str) -> dict:
    cfg = dict(zoo.small_config(name))
    b = cfg.pop("batch")
    st = run(compile_pipeline(strategy="checkpoint-all"), State(model=zoo.export(name, b, train=True, **cfg),
                                                                  budget=1 << 50))
    dag_with_measured_scratch(st, "cpu")
    after = int(checkpoint_all(st.dag).peak(st.dag))
    granule, rounding = allocation_rounding(st.graph, "cpu")
    kept_raw = sum(v.nbytes for v in st.graph.kept if v.producer is not None)
    old = st.dag.kept_from_start()  # the paper's U_init, and neither rounding: the model before
    before_dag = dataclasses.replace(old, constant=int(old.constant - rounding - (st.dag.kept.sum() - kept_raw)))
    before = int(checkpoint_all(before_dag).peak(before_dag))
    pred = predict(st.lowered, "cpu")
    live = pred.in_use_peak + pred.outside
    return {"model": name, "batch": b, "kept_outputs": kept_raw, "kept_rounded": int(st.dag.kept.sum()),
            "initializer_rounding": rounding, "model_before": before, "model_after": after,
            "device_need": pred.total, "live_lower_bound": live, "fragmentation": pred.arena - pred.in_use_peak,
            "need_over_model_before": round(pred.total / before, 4), "need_over_model_after": round(pred.total / after, 4),
            "live_over_model_after": round(live / after, 4)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", default=",".join(MODELS))
    ap.add_argument("--out")
    a = ap.parse_args()
    rows = []
    for name in a.models.split(","):
        rows.append(one(name))
        print(json.dumps(rows[-1]), flush=True)
        if a.out:
            Path(a.out).write_text(json.dumps(rows, indent=1))
    print("| model | kept outputs (rounded) | initializer rounding | model before / after | device need "
          "(layout height + outside) | live lower bound | need / model before | after | live / model after |")
    print("|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['model']} b{r['batch']} | {r['kept_outputs']} ({r['kept_rounded']}) | {r['initializer_rounding']} | "
              f"{r['model_before']} / {r['model_after']} | {r['device_need']} | {r['live_lower_bound']} | "
              f"{r['need_over_model_before']} | {r['need_over_model_after']} | {r['live_over_model_after']} |")


if __name__ == "__main__":
    main()
