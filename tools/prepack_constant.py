#!/usr/bin/env python3
"""remc's live-bytes model of the checkpoint-all plan against what remc's CPU placement needs, with and without
the pre-packed weight copies in the solver's constant (``remc.fit.dag_with_measured_scratch``).

For each zoo model at test size: the DAG's constant without and with the measured pre-packed bytes
(``remc.fit.prepacked_bytes``), the pre-packed blocks of the plan's layout (kept ones; the count must equal the
constant's increase), the model's peak (constant + live + W_v) and the device's need (``remc.fit.predict``: the
layout's height plus the bytes outside it), and their ratio before and after.

    nice -n 10 python tools/prepack_constant.py --out results/prepack_constant.json
"""
from __future__ import annotations

import argparse
import json
from pathlib import Path

from remc import zoo
from remc.backends.placement import model_layout
from remc.fit import dag_with_measured_scratch, predict
from remc.ir.schedule import checkpoint_all
from remc.pipeline import State, compile_pipeline, run

MODELS = ("vgg16", "vgg19", "resnet50", "mobilenet", "mobilenet_v2", "unet", "fcn8", "segnet", "gpt2")


def one(name: str) -> dict:
    cfg = dict(zoo.small_config(name))
    b = cfg.pop("batch")
    train = zoo.export(name, b, train=True, **cfg)
    st = run(compile_pipeline(strategy="checkpoint-all"), State(model=train, budget=1 << 50))
    before = int(st.dag.constant)
    dag_with_measured_scratch(st, "cpu")  # W_v from measured scratch, and the pre-packed bytes (this branch)
    after = int(st.dag.constant)
    peak_after = int(checkpoint_all(st.dag).peak(st.dag))
    peak_before = peak_after - (after - before)
    lay = model_layout(st.lowered, "cpu")
    kept = sum(bl.size for bl in lay.blocks if bl.what == "pre-packed weight")
    need = predict(st.lowered, "cpu").total
    return {"model": name, "batch": b, "constant_before": before, "constant_after": after,
            "prepacked_added": after - before, "layout_prepacked_kept": kept, "count_exact": kept == after - before,
            "model_peak_before": peak_before, "model_peak_after": peak_after, "device_need": need,
            "need_over_model_before": round(need / peak_before, 3), "need_over_model_after": round(need / peak_after, 3)}


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
    print("| model | constant (bytes) | pre-packed added | layout's kept pre-packed blocks | model peak before / after "
          "| device need | need / model, before | after |")
    print("|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['model']} b{r['batch']} | {r['constant_before']} | {r['prepacked_added']} | "
              f"{r['layout_prepacked_kept']} | {r['model_peak_before']} / {r['model_peak_after']} | {r['device_need']} | "
              f"{r['need_over_model_before']} | {r['need_over_model_after']} |")


if __name__ == "__main__":
    main()
