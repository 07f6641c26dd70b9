"""CPU evidence for issue 11: every zoo model (test size), every strategy, run under a cap equal to the budget.

For each model: the checkpoint-all plan's lowered graph gives what the graph really needs on ONNX Runtime CPU
(the replayed arena, ``remc.fit.predict``, plus the bytes outside it); the budget is ``--fraction`` of that.
Every strategy compiles at that budget with ``remc.fit.compile_fit`` (arena replay, re-solve at a tighter
solver budget while the replay exceeds the budget, then ``verify``: two runs under the cap). Each plan that
compiles then runs once more under the cap (arena limit = budget less the bytes outside the arena) with the
profiler on (bytes in use), and its least cap is bisected on the device (two runs per probe, to 256 bytes):
what it really needs, plus the bytes outside the arena, against the prediction. The unmodified training
graph runs under the same cap.

    python tools/arena_cpu_evidence.py --out results/arena_cpu.json [--fraction 0.9] [--models a,b]
    python tools/arena_cpu_evidence.py --render results/arena_cpu.json
"""
from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from remc import zoo
from remc.backends import runtime
from remc.backends.strategies import make_options
from remc.fit import compile_fit, predict
from remc.ir.errors import RemcError
from remc.passes.strategies import SOLVER_NAMES, STRATEGIES
from remc.pipeline import State, compile_pipeline, run, stages

ARENA = runtime.DeviceSettings(placement="arena")
"""This table is ONNX Runtime's BFC arena's (remc's CPU placement: tools/cpu_placement_evidence.py)."""


def measure_under_cap(model, budget: int) -> dict:
    cap = runtime.arena_cap(model, "cpu", budget)
    feeds = runtime.random_inputs(model, 0)
    out = runtime.outside_bytes(model, "cpu")
    try:
        pk = runtime.profiler_peak(model, "cpu", feeds=feeds, mem_limit=cap)
        sess = runtime.make_session(model, "cpu", mem_limit=cap, log_level=4)
        r = runtime.Runner(sess, feeds, "cpu", mem_limit=cap)
        for _ in range(3):
            r()
    except runtime.OutOfMemory as e:
        return {"ran": False, "oom": str(e)[:200]}
    least = runtime.bisect_peak(model, "cpu", feeds=feeds, runs=2, resolution=256).peak
    return {"ran": True, "measured_need": least + out, "measured_in_use": pk.peak + out}


def one_model(name: str, fraction: float, time_limit: float) -> dict:
    cfg = dict(zoo.small_config(name))
    batch = cfg.pop("batch")
    train = zoo.export(name, batch, train=True, **cfg)
    st = run(compile_pipeline(strategy="checkpoint-all"), State(model=train, budget=1 << 50))
    full = predict(st.lowered, "cpu", settings=ARENA)
    budget = int(fraction * full.total)
    rows = []
    for strat in STRATEGIES:
        options = make_options(strat, time_limit=time_limit) if strat in SOLVER_NAMES else None
        passes = compile_pipeline(strategy=strat, options=options)
        s = run(stages(passes, last="units"), State(model=train))
        s.budget = budget
        t0 = time.perf_counter()
        row: dict = {"strategy": strat}
        try:
            fit = compile_fit(stages(passes, first="schedule"), s, device="cpu", verify=True, settings=ARENA)
        except RemcError as e:
            row.update(compiled=False, why=str(e).splitlines()[0][:160])
            rows.append(row)
            continue
        p = fit.prediction
        at_cap = predict(s.lowered, "cpu", cap=runtime.arena_cap(s.lowered, "cpu", budget), settings=ARENA)  # in use under the cap
        row.update(compiled=True, rounds=fit.rounds, solver_budget=fit.solver_budget, live_peak=int(s.sim.peak),
                   predicted=p.total, predicted_in_use=at_cap.in_use_total, seconds=time.perf_counter() - t0)
        row.update(measure_under_cap(s.lowered, budget))
        rows.append(row)
    ref = measure_under_cap(train, budget)
    return {"model": name, "batch": batch, "checkpoint_all_needs": full.total, "budget": budget,
            "fraction": fraction, "unmodified_under_cap": ref, "rows": rows}


def render(data: list[dict]) -> str:
    out = ["| model | budget (fraction of checkpoint-all's real need) | strategy | rounds | predicted need | "
           "measured need (least cap) | measured / predicted | measured in use (pred.) | ran under cap = budget |",
           "|---|---|---|---|---|---|---|---|---|"]
    for m in data:
        for r in m["rows"]:
            head = f"| {m['model']} b{m['batch']} | {m['budget']} ({m['fraction']:.2f}) | {r['strategy']} "
            if not r.get("compiled"):
                out.append(head + f"| – | no plan fits: {r['why'][:90]} | | | | |")
                continue
            if not r.get("ran"):
                out.append(head + f"| {r['rounds']} | {r['predicted']} | OOM | | | no: {r.get('oom', '')[:80]} |")
                continue
            ratio = r["measured_need"] / r["predicted"]
            out.append(head + f"| {r['rounds']} | {r['predicted']} | {r['measured_need']} | {ratio:.3f} | "
                       f"{r['measured_in_use']} ({r['predicted_in_use']}) | "
                       f"{'yes' if r['measured_need'] <= m['budget'] else 'NO'} |")
        u = m["unmodified_under_cap"]
        out.append(f"| {m['model']} b{m['batch']} | {m['budget']} | unmodified graph | | | | | | "
                   f"{'ran' if u.get('ran') else 'out of memory (as it must)'} |")
    return "\n".join(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out")
    ap.add_argument("--fraction", type=float, default=0.9)
    ap.add_argument("--models", default=",".join(zoo.list_models()))
    ap.add_argument("--time-limit", type=float, default=10.0)
    ap.add_argument("--render")
    a = ap.parse_args()
    if a.render:
        print(render(json.loads(Path(a.render).read_text())))
        return
    data = []
    for name in a.models.split(","):
        data.append(one_model(name, a.fraction, a.time_limit))
        if a.out:
            Path(a.out).write_text(json.dumps(data, indent=1))
        print(render([data[-1]]), flush=True)


if __name__ == "__main__":
    main()
