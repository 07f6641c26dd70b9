#!/usr/bin/env python3
"""The fit loop's rounds (``remc/fit.py: compile_fit``) for one graph, budget and strategy, printed as JSON lines.

Each round: the solver budget, the plan's live peak in remc's model, what the device needs (ONNX Runtime's
replayed arena, or remc's layout) and why the loop stopped. ``--steps N`` fits ``remc train``'s loop of N steps
(a step graph; ``remc.train.compile_step_graph``), as ``remc train`` does; without, one run (``remc compile``).
``--placement`` picks the CPU memory model (``remc``: remc's layout, the compile default; ``arena``: ONNX
Runtime's BFC arena). Nothing is trained or run.

    python tools/fit_rounds.py vitz_b1_step.onnx --budget 1440000000 --strategy approx --steps 2 --placement arena
    python tools/fit_rounds.py vitz_b1_step.onnx --budget 1440000000 --strategy approx --placement remc
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import time

import onnx

from remc.backends.runtime import DEFAULT_SETTINGS
from remc.backends.strategies import REGISTRY, make_options
from remc.ir.errors import RemcError


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("model")
    ap.add_argument("--budget", type=int, required=True)
    ap.add_argument("--strategy", default="approx")
    ap.add_argument("--time-limit", type=float, default=60.0)
    ap.add_argument("--steps", type=int, default=None)
    ap.add_argument("--placement", choices=("remc", "arena"), default="remc")
    a = ap.parse_args(argv)
    from remc.fit import compile_fit
    from remc.pipeline import State, compile_pipeline, run, stages
    settings = dataclasses.replace(DEFAULT_SETTINGS, placement=a.placement)
    fields = {f.name for f in dataclasses.fields(REGISTRY[a.strategy].options)}
    opts = make_options(a.strategy, **({"time_limit": a.time_limit} if "time_limit" in fields else {}))
    t0 = time.perf_counter()
    model = onnx.load(a.model)
    passes = compile_pipeline(strategy=a.strategy, options=opts)
    state = run(stages(passes, last="units"), State(model=model, budget=a.budget))
    out: dict = {"model": a.model, "budget": a.budget, "strategy": a.strategy, "steps": a.steps,
                 "placement": a.placement}
    try:
        fit = compile_fit(stages(passes, first="schedule"), state, steps=a.steps, settings=settings)
        out.update(fits=True, rounds=fit.rounds, solver_budget=fit.solver_budget,
                   predicted=fit.prediction.total if fit.prediction else None, history=fit.history)
    except RemcError as e:
        rep = getattr(e, "fit_report", None)
        out.update(fits=False, error=str(e)[:600], history=rep.history if rep else None)
    out["seconds"] = round(time.perf_counter() - t0, 1)
    print(json.dumps(out, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
