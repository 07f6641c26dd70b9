"""What a step graph's training loop needs on ONNX Runtime CPU, replayed (no run): the least cap of 2 steps
with fixed buffers and with fresh outputs (``remc.fit.predict_loop``), and of one run alone
(``remc.fit.predict``), in bytes, as one JSON line. With ``--append sgd|adamw`` the input is a training
graph and the optimizer is appended first (``--momentum`` for SGD), and ``--save`` writes the step graph.

    python tools/train_need.py vit_train.onnx --append sgd --momentum 0.9 --save vit_step.onnx
"""
from __future__ import annotations

import argparse
import json
import time

from remc.backends.runtime import DeviceSettings, load_model
from remc.fit import predict, predict_loop
from remc.ir.onnx_io import save_model
from remc.passes.optimizer import OptimizerOptions, append_optimizer, memory_parts


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("model")
    ap.add_argument("--append", choices=("sgd", "adamw"))
    ap.add_argument("--momentum", type=float, default=0.9)
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--save")
    a = ap.parse_args()
    t = time.perf_counter()
    step = load_model(a.model)
    if a.append:
        step = append_optimizer(step, OptimizerOptions(a.append, lr=a.lr, momentum=a.momentum))
    if a.save:
        save_model(step, a.save)
    arena = DeviceSettings(placement="arena")  # what this tool replays: ONNX Runtime's arena
    fixed = predict_loop(step, "cpu", 2, settings=arena)
    fresh = predict_loop(step, "cpu", 2, fixed_buffers=False, settings=arena)
    single = predict(step, "cpu", settings=arena)
    print(json.dumps({"fixed_least_cap": fixed.total, "fixed_outside": fixed.outside, "fresh_least_cap": fresh.total,
                      "single_least_cap": single.total, "parts": memory_parts(step),
                      "seconds": round(time.perf_counter() - t, 1)}))


if __name__ == "__main__":
    main()
