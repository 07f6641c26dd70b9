"""Replay of ``remc train``'s loop vs ONNX Runtime, on zoo models at test size (issue #13, branch t13).

For each model and optimizer: the step graph (training graph + SGD with momentum or AdamW), unmodified and
compiled with ``--strategy`` for 0.9 of the unmodified step's least cap over ``--steps`` steps (the smaller
of the two loops'; the plan is fitted to either loop, fixed buffers first). For each graph and each loop
(fixed buffers, fresh outputs): the least cap (budget: arena limit plus what is outside it) that
``--steps`` steps run under,
measured by bisection on ONNX Runtime (``backends.trainer.least_cap``: a fresh session per probe) and
replayed (``remc.fit.predict_loop``: the same search over the replay); and, for the loop the plan was
fitted to, under a cap of the budget the measured peak in use (profiler ``mem_in_use_peak`` plus what is
outside the arena) against the replayed one, and the losses
against the unmodified graph's. One JSON row per graph.

    python tools/train_replay_check.py --models vgg16,resnet50,mobilenet,unet,gpt2 --out results/train_replay.json

``--drift STEP.onnx --steps N --caps C1,C2,...``: for a step graph (``remc train -o``) and each cap (the
budget, bytes), how many of N steps of the fresh-outputs loop run before ONNX Runtime runs out of memory,
replayed and measured.
"""
from __future__ import annotations

import argparse
import json
import time

from remc import zoo
from remc.backends.runtime import DeviceSettings
from remc.backends.trainer import (
    fixed_outside_bytes,
    least_cap,
    loop_outside_bytes,
    measure_train_peak,
    split_state,
    train,
)
from remc.fit import predict_loop
from remc.passes.optimizer import OptimizerOptions, append_optimizer
from remc.train import compile_step_graph, data_feeds

ARENA = DeviceSettings(placement="arena")
"""What this tool checks: the replay of ONNX Runtime's arena (remc's CPU placement: ``remc train``)."""


def check(model: str, opt: str, strategy: str, steps: int) -> list[dict]:
    cfg = dict(zoo.small_config(model))
    batch = cfg.pop("batch")
    step = append_optimizer(zoo.export(model, batch, train=True, **cfg), OptimizerOptions(opt))
    feeds = data_feeds(step, 0, False)
    rows = []
    needs = {fixed: least_cap(step, feeds, "cpu", steps=steps, fixed_buffers=fixed, settings=ARENA) for fixed in (True, False)}
    graphs = [("unmodified", step, None)]
    budget = int(0.9 * min(needs.values()))
    t0 = time.perf_counter()
    try:
        state, fit = compile_step_graph(step, budget, strategy, steps=steps, settings=ARENA)
        graphs.append((strategy, state.lowered, fit))
    except Exception as e:  # noqa: BLE001 — a row saying why
        rows.append({"model": model, "optimizer": opt, "graph": strategy, "budget": budget, "error": str(e)})
        print(json.dumps(rows[-1]), flush=True)
    ref = train(step, feeds, steps).losses
    for name, g, fit in graphs:
        for fixed in (True, False):
            measured = needs[fixed] if name == "unmodified" else least_cap(g, feeds, "cpu", steps=steps,
                                                                           fixed_buffers=fixed, settings=ARENA)
            replayed = predict_loop(g, "cpu", steps, fixed_buffers=fixed, settings=ARENA)
            row = {"model": model, "batch": batch, "optimizer": opt, "graph": name, "steps": steps,
                   "loop": "fixed buffers" if fixed else "fresh outputs",
                   "least_cap_measured": measured, "least_cap_replayed": replayed.total,
                   "equal": measured == replayed.total}
            if fit is not None and fit.fixed_buffers == fixed:  # the loop the plan was fitted to
                stripped, init = split_state(g)
                out = (fixed_outside_bytes if fixed else loop_outside_bytes)(stripped, init, "cpu")
                at = predict_loop(g, "cpu", steps, budget=budget, fixed_buffers=fixed, settings=ARENA)
                peak = measure_train_peak(g, feeds, "cpu", steps=steps, mem_limit=budget, fixed_buffers=fixed)
                losses = train(g, feeds, steps, mem_limit=budget, fixed_buffers=fixed, settings=ARENA).losses
                row.update(budget=budget, fit_rounds=fit.rounds, peak_in_use_measured=peak + out if peak else None,
                           peak_in_use_replayed=at.in_use_total, fits_budget_replayed=at.fits_budget,
                           losses_equal_unmodified=list(losses) == list(ref),
                           compile_seconds=round(time.perf_counter() - t0, 1))
            rows.append(row)
            print(json.dumps(row), flush=True)
    return rows


def drift(path: str, steps: int, caps: list[int], out: str) -> None:
    import dataclasses

    import onnx

    from remc.backends import runtime
    from remc.backends.runtime import OutOfMemory
    from remc.backends.trainer import Trainer, train_events
    from remc.passes.arena import replay
    step = onnx.load(path)
    feeds = data_feeds(step, 0, False)
    ev, carried, outside = train_events(step, "cpu", fixed_buffers=False)  # the fresh-outputs loop drifts
    cfg = runtime.arena_config("cpu")
    rows = []
    for cap in caps:
        rp = replay(ev, dataclasses.replace(cfg, limit=cap - outside), runs=steps, carried=carried)
        measured = 0
        try:
            trainer = Trainer(step, mem_limit=cap, fixed_buffers=False, settings=ARENA)
            for k in range(steps):
                trainer.step(feeds(k))
                measured += 1
        except OutOfMemory:
            pass
        rows.append({"cap": cap, "steps_run_replayed": steps if rp.fits else rp.runs - 1,
                     "steps_run_measured": measured})
        print(json.dumps(rows[-1]), flush=True)
    with open(out, "w") as f:
        json.dump(rows, f, indent=1)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--models", default="vgg16,resnet50,mobilenet,unet,gpt2")
    ap.add_argument("--optimizers", default="sgd,adamw")
    ap.add_argument("--strategy", default="lin-greedy")
    ap.add_argument("--steps", type=int, default=4)
    ap.add_argument("--out", required=True)
    ap.add_argument("--drift", help="a step graph: steps run per cap (--caps), replayed and measured")
    ap.add_argument("--caps", default="")
    a = ap.parse_args()
    if a.drift:
        drift(a.drift, a.steps, [int(c) for c in a.caps.split(",")], a.out)
        return
    rows = []
    for m in a.models.split(","):
        for o in a.optimizers.split(","):
            rows += check(m, o, a.strategy, a.steps)
            with open(a.out, "w") as f:
                json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
