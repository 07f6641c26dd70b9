"""GPU evidence for issue 11: plans run under ``gpu_mem_limit`` = budget, with the arena replayed.

On the device (``tools/gpu_session.sh``), for each model spec ``name:batch[:HxW]``:

1. the checkpoint-all plan (the unmodified graph's schedule) is lowered; its need on ONNX Runtime is
   predicted (``remc.fit.predict``: replayed arena, kernel memory measured per op signature on the GPU, plus
   the inputs outside the arena) and measured (profiler: bytes held and in use, no cap);
2. for each fraction f the budget is f x that need. The unmodified training graph runs under a cap of the
   budget (it must run out of memory); every strategy compiles with ``compile_fit(verify=True)`` (re-solve
   until the replayed arena fits, then one run under the cap), and its lowered graph runs under the cap:
   measured bytes held and in use (plus inputs) against predicted, median time with and without CUDA
   graph, outputs against the unmodified graph (norm-relative, 1e-4), predicted overhead (FLOP costs,
   and profiled costs with ``--profile``) against measured.

The CUDA in-place ops are measured first (``tools/arena_inplace_probe.py``) and used for the replay.
Rows are written to ``--out`` (JSON) as they finish; ``--deadline`` seconds stops starting new work.

    tools/gpu_session.sh python3 $REPO/tools/gpu_arena_evidence.py --out $OUT/gpu_arena.json \
        --models resnet50:32:224x224 --fractions 0.8,0.6,0.5 --strategies approx,checkmate,lin-greedy
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from remc import zoo
from remc.backends import runtime
from remc.backends.strategies import make_options
from remc.fit import compile_fit, predict
from remc.ir.errors import RemcError
from remc.passes import arena
from remc.passes.strategies import SOLVER_NAMES
from remc.pipeline import State, compile_pipeline, run, stages

T0 = time.perf_counter()


def spec(s: str, small: bool = False) -> tuple[str, int, dict]:
    parts = s.split(":")
    cfg = dict(zoo.small_config(parts[0]) if small else zoo.paper_config(parts[0]))
    cfg.pop("batch", None)
    if len(parts) > 2:
        h, w = parts[2].split("x")
        cfg.update(height=int(h), width=int(w))
    return parts[0], int(parts[1]), cfg


def measure(model, device: str, budget: int | None, ref=None, iters: int = 5) -> dict:
    out = runtime.outside_bytes(model, device)
    try:
        cap = runtime.arena_cap(model, device, budget) if budget is not None else None
        feeds = runtime.random_inputs(model, 0)
        res = runtime.measure(model, device, feeds=feeds, iters=iters, mem_limit=cap, mem_method="profiler")
        row = {"ran": True, "measured_held": res.held_peak + out, "measured_in_use": res.measured_peak + out,
               "median_seconds": res.median_seconds}
        if device.startswith("cuda"):
            cg = runtime.measure(model, device, feeds=feeds, iters=iters, mem_method=None, mem_limit=cap,
                                 cuda_graph=True)
            row["median_seconds_cuda_graph"] = cg.median_seconds
        if ref is not None:
            ok, worst = runtime.compare_outputs(res.outputs, ref.outputs, rtol=runtime.default_rtol(device))
            row.update(outputs_match=ok, worst=worst, measured_overhead=res.median_seconds / ref.median_seconds)
        return row | {"_result": res}
    except runtime.OutOfMemory as e:
        return {"ran": False, "oom": str(e)[:300]}


def render(files: list[str]) -> str:
    """The BENCHMARKS.md table of one or more result files."""
    out = ["| model | budget (fraction of checkpoint-all's predicted need) | strategy | fit rounds | predicted in use | "
           "measured in use | measured / predicted | ran under cap = budget | overhead predicted (FLOPs) / measured | "
           "ms (CUDA graph) | outputs |", "|---|---|---|---|---|---|---|---|---|---|---|"]
    for f in files:
        d = json.loads(Path(f).read_text())
        for m in d["models"]:
            for r in m["rows"]:
                head = f"| {m['model']} b{m['batch']} | {r.get('budget', '')} ({r['fraction']}) | {r['strategy']} "
                if r["strategy"] == "unmodified":
                    out.append(head + f"| | | | | {'ran' if r['ran'] else 'out of memory'} | | | |")
                elif r.get("skipped"):
                    out.append(head + "| not run (device time) | | | | | | |")
                elif not r.get("compiled"):
                    out.append(head + f"| no plan fits: {r['why'][:100]} | | | | | | |")
                elif not r.get("ran"):
                    out.append(head + f"| {r['rounds']} | {r['predicted_in_use']} | | | no: {r['oom'][:90]} | | | |")
                else:
                    out.append(head + f"| {r['rounds']} | {r['predicted_in_use']} | {r['measured_in_use']} | "
                               f"{r['measured_in_use'] / r['predicted_in_use']:.3f} | yes | "
                               f"{r['predicted_overhead']:.3f} / {r['measured_overhead']:.3f} | "
                               f"{1e3 * r['median_seconds']:.1f} ({1e3 * r['median_seconds_cuda_graph']:.1f}) | "
                               f"{'match' if r['outputs_match'] else 'DIFFER'} |")
    return "\n".join(out)


def main() -> None:
    if len(sys.argv) > 2 and sys.argv[1] == "--render":
        print(render(sys.argv[2:]))
        return
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--models", default="resnet50:32:224x224")
    ap.add_argument("--fractions", default="0.8,0.6,0.5")
    ap.add_argument("--strategies", default="approx,checkmate,lin-greedy")
    ap.add_argument("--time-limit", type=float, default=30.0)
    ap.add_argument("--deadline", type=float, default=540.0)
    ap.add_argument("--profile", action="store_true", help="also compile approx with profiled costs")
    ap.add_argument("--no-probe", action="store_true")
    ap.add_argument("--small", action="store_true", help="the zoo's test-size models")
    a = ap.parse_args()
    data: dict = {"onnxruntime": runtime.ort.__version__, "device": a.device, "models": []}
    out = Path(a.out)

    def save() -> None:
        out.write_text(json.dumps(data, indent=1, default=str))

    if not a.no_probe:
        sys.path.insert(0, str(Path(__file__).parent))
        from arena_inplace_probe import BINARY, TERNARY, UNARY, probe
        got = {op: probe(op, a.device) for op in UNARY + BINARY + list(TERNARY)}
        kind = a.device.split(":")[0]
        arena.IN_PLACE[kind] = frozenset(op for op, v in got.items() if v and op not in arena.ALIAS_OPS)
        data["in_place"] = sorted(arena.IN_PLACE[kind])
        print("in place:", data["in_place"], flush=True)
        save()
    for s in a.models.split(","):
        name, batch, cfg = spec(s, a.small)
        train = zoo.export(name, batch, train=True, **cfg)
        m: dict = {"model": name, "batch": batch, "config": cfg, "rows": []}
        data["models"].append(m)
        full_state = run(compile_pipeline(strategy="checkpoint-all", device=a.device), State(model=train, budget=1 << 60))
        full = predict(full_state.lowered, a.device)
        ref = measure(train, a.device, None)
        m.update(checkpoint_all_predicted=full.total, checkpoint_all_predicted_in_use=full.in_use_total,
                 unmodified_measured_held=ref.get("measured_held"), unmodified_measured_in_use=ref.get("measured_in_use"),
                 unmodified_median_seconds=ref.get("median_seconds"),
                 unmodified_median_seconds_cuda_graph=ref.get("median_seconds_cuda_graph"),
                 seconds=time.perf_counter() - T0)
        refres = ref.pop("_result", None)
        print(json.dumps({k: v for k, v in m.items() if k != "rows"}), flush=True)
        save()
        for f in map(float, a.fractions.split(",")):
            budget = int(f * full.total)
            under = measure(train, a.device, budget, iters=1)
            under.pop("_result", None)
            m["rows"].append({"fraction": f, "budget": budget, "strategy": "unmodified", **under})
            save()
            strategies = a.strategies.split(",") + (["approx+profile"] if a.profile else [])
            for strat in strategies:
                if time.perf_counter() - T0 > a.deadline:
                    m["rows"].append({"fraction": f, "strategy": strat, "skipped": "deadline"})
                    continue
                base = strat.split("+")[0]
                options = make_options(base, time_limit=a.time_limit) if base in SOLVER_NAMES else None
                cost = "profile" if strat.endswith("+profile") else "flops"
                passes = compile_pipeline(strategy=base, device=a.device, cost=cost, options=options)
                row: dict = {"fraction": f, "budget": budget, "strategy": strat}
                t = time.perf_counter()
                try:
                    st = run(stages(passes, last="units"), State(model=train))
                    st.budget = budget
                    fit = compile_fit(stages(passes, first="schedule"), st, device=a.device, verify=True)
                except RemcError as e:
                    row.update(compiled=False, why=str(e)[:300])
                    m["rows"].append(row)
                    save()
                    continue
                ideal = float(st.dag.total_cost)
                p = fit.prediction
                row.update(compiled=True, rounds=fit.rounds, solver_budget=fit.solver_budget,
                           live_peak=int(st.sim.peak), predicted=p.total, predicted_in_use=p.in_use_total,
                           predicted_overhead=st.sim.cost / ideal if ideal else None,
                           status=st.schedule.report.get("status"), gap=st.schedule.report.get("gap"),
                           compile_seconds=time.perf_counter() - t)
                r = measure(st.lowered, a.device, budget, ref=refres)
                r.pop("_result", None)
                row.update(r)
                m["rows"].append(row)
                print(json.dumps(row), flush=True)
                save()
    save()


if __name__ == "__main__":
    main()
