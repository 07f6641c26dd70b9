"""GPU evidence: remc plans that really run under a memory limit the unmodified graph exceeds.

For each model (ResNet50, U-Net), on the CUDA provider of onnxruntime-gpu:

1. build the training graph (zoo, random weights, fixed seed), measure the unmodified graph's arena peak
   and set ``gpu_mem_limit`` below it (``--limit-fraction``); remc's budget is that limit restated in
   remc's accounting (plus the graph inputs, which the arena does not hold) divided by ``--headroom``;
2. compile it with checkmate, approx and every baseline at that budget;
3. run the unmodified graph under ``gpu_mem_limit`` (it must fail with out-of-memory), and each plan's
   lowered graph under the same limit: measured peak (profiler ``mem_in_use_peak``), median time with
   and without CUDA graph capture, outputs against the unmodified graph run without a limit (1e-4).

Also (issue: a zoo training graph on CUDA matching CPU) every small zoo training graph runs on CPU and
CUDA with its loss and gradient norm compared, every strategy's lowered graph at 0.7 of the
checkpoint-all peak is compared with the original on CUDA, and the executed order from ORT's profiler is
checked against the plan's order.

    python tools/gpu_evidence.py --out results/gpu.json [--models resnet50,unet]

Writes one JSON file; ``tools/gpu_table.py`` turns it into the BENCHMARKS.md tables.

Device time is scarce, so the work splits in two stages: ``--stage plan`` (any machine, no GPU) solves
every strategy at the budget that ``GPU_MEM_LIMIT`` implies and writes the plans (plan IR text, with the
solver's report) and their metadata to ``--plans``; ``--stage run`` (the GPU machine) rebuilds each
training graph, re-validates every plan against it with the independent simulator, lowers and runs it.
``--stage all`` (default) does both in one process, with the limit measured from the unmodified graph.
"""
from __future__ import annotations

import argparse
import json
import platform
import time
import traceback
from pathlib import Path
from typing import Any

import numpy as np

from remc import zoo
from remc.backends import runtime
from remc.backends.runtime import import_model
from remc.backends.strategies import least_budget_bound
from remc.cli import dag_for_graph
from remc.ir.errors import RemcError
from remc.ir.plan import parse_plan, print_plan
from remc.ir.schedule import checkpoint_all
from remc.passes.lower import lower
from remc.passes.strategies import BASELINE_NAMES
from remc.passes.validate import validate
from remc.pipeline import State, compile_pipeline, run, stages

SIZES = {
    # name: (batch, build kwargs); chosen so the checkpoint-all peak is several GiB on the GPU.
    "resnet50": (32, {"height": 224, "width": 224}),
    "unet": (4, {"height": 416, "width": 608}),
}
LIMIT_FRACTION = {"resnet50": 0.75, "unet": 0.85}
GPU_MEM_LIMIT = {"resnet50": 2388104601, "unet": 2637262745}
"""``gpu_mem_limit`` bytes for the two-stage run: 0.80 (ResNet50) and 0.95 (U-Net) of the unmodified
graph's arena peak as measured on the H100 (results/gpu_h100_b_*.json: 2985130752 and 2776066048 bytes);
the run stage measures the unmodified graph again and reports its peak beside the limit."""
HEADROOM = 1.3
"""remc's budget is the limit (in remc's accounting) over this. ONNX Runtime's CUDA arena needs the slack:
it grows by regions that never coalesce and hands out a free chunk whole when the excess is under 128 MiB
and under the request, so a plan whose live bytes fit 0.91 of the limit ran out of memory
(results/gpu_h100_c_arena_probe.json: every U-Net plan at 0.85-0.91 of the limit failed; ResNet50's ran
at up to 0.87 of it and failed from 0.91)."""
DEVICE = ["cuda"]
"""The device everything runs on ('cpu' for a dry run of this script without a GPU)."""
STRATEGIES = ("checkmate", "approx") + tuple(s for s in BASELINE_NAMES if s != "checkpoint-all")


def cuda_match(out: dict, ref: dict) -> tuple[bool, str]:
    """Outputs within 1e-4 of the reference, relative to the largest magnitude among all outputs: CUDA
    reductions are not deterministic, and gradients that are zero in exact arithmetic (a convolution
    bias before BatchNorm) carry only rounding noise, which a per-output relative test would flag."""
    scale = max(float(np.abs(v).max()) for v in ref.values() if v.dtype.kind == "f" and v.size)
    return runtime.compare_outputs(out, ref, rtol=runtime.CUDA_RTOL, atol=runtime.CUDA_RTOL * scale)


def build(name: str, small: bool = False):
    """The training graph of a zoo model at its GPU size (``SIZES``) or its test size."""
    if small:
        cfg = dict(zoo.small_config(name))
        return zoo.export(name, cfg.pop("batch", 1), train=True, **cfg)
    batch, kw = SIZES[name]
    return zoo.export(name, batch, train=True, **kw)


def solve_plan(train, budget: int | None, strategy: str, time_limit: float, midpoint: bool = False) -> dict:
    """Schedule a ModelProto at ``budget`` and return the plan (IR text) with the solve's report. With
    ``midpoint``, solvers get the budget half way from the least-budget bound to the checkpoint-all peak
    and baselines their own default schedule (as in tests/test_end_to_end.py)."""
    solver = strategy in ("checkmate", "approx")
    passes = compile_pipeline(strategy=strategy, device=DEVICE[0], **({"time_limit": time_limit} if solver else {}))
    t0 = time.perf_counter()
    state = run(stages(passes, last="units"), State(model=train))
    if midpoint:
        full = checkpoint_all(state.dag).peak(state.dag)
        least = least_budget_bound(state.dag, time_limit=time_limit)
        budget = int(least + 0.5 * (full - least)) if solver else None
    state.budget = budget
    run(stages(passes, "schedule", "plan"), state)  # schedule, plan (validated by the simulator)
    return {"plan": print_plan(state.plan), "solve_seconds": time.perf_counter() - t0,
            "status": state.schedule.report.get("status"), "gap": state.schedule.report.get("gap"),
            "predicted_peak": state.sim.peak, "predicted_overhead": state.sim.cost / state.dag.total_cost,
            "units": state.dag.n}


def lower_plan(train, text: str):
    """Re-validate a plan against the training graph (the independent simulator, at the plan's budget) and
    lower it. The plan stage and this run must use the same commit (``tools/gpu_session.sh``'s REMC_SRC):
    a plan whose unit table this checkout accounts differently is rejected."""
    plan = parse_plan(text)
    graph = import_model(train)
    sim = validate(plan, dag_for_graph(plan, graph, DEVICE[0]), budget=plan.budget)  # the plan stage used DEVICE too
    return lower(graph, plan), sim


def attempt(row: dict, fn: Any) -> None:
    """Run ``fn()``; a failure becomes the row's error (one strategy's failure must not lose the rest)."""
    try:
        fn()
    except RemcError as e:
        row["error"] = str(e)
    except Exception as e:
        row["error"] = f"{type(e).__name__}: {e}"
        row["traceback"] = traceback.format_exc()[-2000:]


def input_bytes(train) -> int:
    return sum(a.nbytes for a in runtime.random_inputs(train, 0).values())


def plan_model(name: str, limit: int, headroom: float, time_limit: float, save: Any = lambda out: None) -> dict:
    """Stage 1 for one model: every strategy's plan at the budget that ``limit`` implies.

    The limit caps ONNX Runtime's arena (initializers included on CUDA, graph inputs not: they are bound
    from caller buffers). remc's budget is that limit in remc's accounting (plus the inputs), divided by
    ``headroom`` for what the model leaves out (arena fragmentation, 256-byte rounding). No calibration by
    the unmodified graph's measured/predicted ratio: a plan's ratio differs from it (ResNet50: 0.80
    unmodified, 0.86-0.95 for plans), and a plan at a budget inflated by it ran out of memory.
    """
    batch, kw = SIZES[name]
    train = build(name)
    base = run(stages(compile_pipeline(device=DEVICE[0]), last="units"), State(model=train))
    budget = int((limit + input_bytes(train)) / headroom)
    out: dict[str, Any] = {
        "model": name, "batch": batch, "config": kw, "gpu_mem_limit": limit, "headroom": headroom,
        "budget": budget, "predicted_checkpoint_all_peak": int(checkpoint_all(base.dag).peak(base.dag)),
        "least_budget_bound": least_budget_bound(base.dag, time_limit=min(time_limit, 30.0)),  # informational
        "strategies": []}
    for strategy in STRATEGIES:
        row: dict[str, Any] = {"strategy": strategy}
        attempt(row, lambda: row.update(solve_plan(train, budget, strategy, time_limit)))
        out["strategies"].append(row)
        save(out)
        print(json.dumps({k: v for k, v in row.items() if k != "plan"}, default=float), flush=True)
    return out


def run_model(planned: dict, iters: int, save: Any = lambda out: None) -> dict:
    """Stage 2 for one model: the unmodified graph with and without the limit, then every plan."""
    name, limit = planned["model"], planned["gpu_mem_limit"]
    train = build(name)
    feeds = runtime.random_inputs(train, 0)
    ref = runtime.measure(train, DEVICE[0], feeds=feeds, iters=iters)
    out = {k: v for k, v in planned.items() if k != "strategies"}
    out["calibration"] = ref.peak_with_constants / planned["predicted_checkpoint_all_peak"]
    out["unmodified"] = {"measured_peak": ref.peak_with_constants, "arena_peak": ref.measured_peak,
                         "median_seconds": ref.median_seconds, "input_bytes": ref.input_bytes,
                         "limit_fraction": limit / ref.measured_peak}
    try:
        runtime.measure(train, DEVICE[0], feeds=feeds, iters=1, mem_method=None, mem_limit=limit)
        out["unmodified"]["under_limit"] = "ran (unexpected)"
    except RemcError as e:
        out["unmodified"]["under_limit"] = f"failed: {e}"
    rows = out["strategies"] = []
    for planned_row in planned["strategies"]:
        row = {k: v for k, v in planned_row.items() if k != "plan"}
        rows.append(row)
        if "plan" in planned_row:
            def measure_plan() -> None:
                lowered, sim = lower_plan(train, planned_row["plan"])
                if sim.peak != row["predicted_peak"]:
                    raise RemcError(f"re-validated peak {sim.peak} differs from the plan stage's {row['predicted_peak']}")
                res = runtime.measure(lowered, DEVICE[0], feeds=feeds, iters=iters, mem_limit=limit)
                cg = runtime.measure(lowered, DEVICE[0], feeds=feeds, iters=iters, mem_method=None,
                                     mem_limit=limit, cuda_graph=True) if DEVICE[0] == "cuda" else res
                ok, worst = cuda_match(res.outputs, ref.outputs)
                row.update(measured_peak=res.peak_with_constants, arena_peak=res.measured_peak,
                           median_seconds=res.median_seconds, median_seconds_cuda_graph=cg.median_seconds,
                           measured_overhead=res.median_seconds / ref.median_seconds, outputs_match=ok,
                           worst=worst)
            attempt(row, measure_plan)
        save(out)
        print(json.dumps(row, default=float), flush=True)
    return out


def plan_small(models: list[str], time_limit: float, save: Any = lambda rows: None) -> list[dict]:
    """Stage 1 of the small checks: every strategy's plan for every small zoo training graph."""
    rows = []
    for name in models:
        train = build(name, small=True)
        row: dict[str, Any] = {"model": name, "strategies": {}}
        for strategy in ("checkmate", "approx") + BASELINE_NAMES:
            r = row["strategies"][strategy] = {}
            attempt(r, lambda: r.update(solve_plan(train, None, strategy, time_limit, midpoint=True)))
        rows.append(row)
        save(rows)
        print(json.dumps({"model": name, "planned": [s for s, r in row["strategies"].items() if "plan" in r]}))
    return rows


def run_small(planned: list[dict], save: Any = lambda rows: None) -> list[dict]:
    """Stage 2 of the small checks: CPU vs CUDA loss and gradient norm; every plan on CUDA against the
    unmodified graph on CUDA, and the executed order (ORT's profiler) against the plan's."""
    rows: list[dict] = []
    for p in planned:
        name = p["model"]
        train = build(name, small=True)
        feeds = runtime.random_inputs(train, 0)
        cpu = runtime.measure(train, "cpu", feeds=feeds, iters=1, mem_method=None).outputs
        try:
            gpu = runtime.measure(train, DEVICE[0], feeds=feeds, iters=1, mem_method=None).outputs
        except RemcError as e:  # keep going with the other models
            rows.append({"model": name, "error": str(e)})
            save(rows)
            continue
        grads = [k for k in cpu if k.startswith("grad.")]
        gnorm = lambda o: float(np.sqrt(sum(float(np.sum(o[k].astype(np.float64) ** 2)) for k in grads)))  # noqa: E731
        row: dict[str, Any] = {"model": name, "loss_cpu": float(cpu["loss"]), "loss_cuda": float(gpu["loss"]),
                               "grad_norm_cpu": gnorm(cpu), "grad_norm_cuda": gnorm(gpu),
                               "cpu_vs_cuda": worst_outputs(cpu, gpu), "strategies": {}}
        for strategy, pr in p["strategies"].items():
            r = row["strategies"][strategy] = {k: v for k, v in pr.items() if k in ("error", "status")}
            if "plan" not in pr:
                continue

            def check(pr: dict = pr, r: dict = r) -> None:
                lowered, _ = lower_plan(train, pr["plan"])
                low = runtime.measure(lowered, DEVICE[0], feeds=feeds, iters=1, mem_method=None).outputs
                ok, worst = cuda_match(low, gpu)
                order = runtime.executed_order(lowered, DEVICE[0], feeds=feeds)
                r.update(outputs_match=ok, worst=worst, order_matches_plan=order == runtime.ort_execution_order(lowered))
            attempt(r, check)
        rows.append(row)
        save(rows)
        print(json.dumps(row, default=float), flush=True)
    return rows


def worst_outputs(a: dict, b: dict, k: int = 6) -> list[tuple[str, float, str]]:
    """The k outputs that differ most between two runs: (name, relative L2 difference, shape)."""
    diffs = []
    for name in a:
        x, y = a[name].astype(np.float64), b[name].astype(np.float64)
        if x.dtype.kind != "f" or not x.size:
            continue
        diffs.append((name, float(np.linalg.norm(x - y) / max(np.linalg.norm(x), 1e-30)), str(x.shape)))
    return sorted(diffs, key=lambda d: -d[1])[:k]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--stage", choices=("all", "plan", "run"), default="all",
                    help="plan: solve and write plans to --plans (no GPU); run: run the plans in --plans; "
                         "all: both, with the limit measured from the unmodified graph")
    ap.add_argument("--plans", default=".gpuplans", help="folder of the plan stage's output")
    ap.add_argument("--models", default="resnet50,unet")
    ap.add_argument("--limit-fraction", type=float, default=None,
                    help="stage all: gpu_mem_limit as a fraction of the unmodified graph's measured arena "
                         "peak (default: LIMIT_FRACTION per model)")
    ap.add_argument("--headroom", default=str(HEADROOM),
                    help="remc's budget is the limit in its accounting divided by this (a comma list: one "
                         "set of plans per value)")
    ap.add_argument("--gpu-mem-limit", action="append", default=[], metavar="MODEL=BYTES",
                    help="stage plan: the limit for a model instead of GPU_MEM_LIMIT's")
    ap.add_argument("--time-limit", type=float, default=120.0)
    ap.add_argument("--iters", type=int, default=5)
    ap.add_argument("--skip-small", action="store_true")
    ap.add_argument("--small-models", default=",".join(zoo.list_models()))
    ap.add_argument("--out", default="results/gpu.json")
    ap.add_argument("--device", default="cuda", help="'cpu' for a dry run")
    ap.add_argument("--small", action="store_true", help="evidence at the zoo's test sizes (dry runs)")
    args = ap.parse_args()
    DEVICE[0] = args.device
    if args.small:
        for name in SIZES:
            cfg = dict(zoo.small_config(name))
            SIZES[name] = (cfg.pop("batch"), cfg)
    models = list(filter(None, args.models.split(",")))
    small_models = [] if args.skip_small else list(filter(None, args.small_models.split(",")))
    headrooms = [float(h) for h in args.headroom.split(",")]
    plans = Path(args.plans)
    for item in args.gpu_mem_limit:
        model, _, size = item.partition("=")
        GPU_MEM_LIMIT[model] = int(size)
    if args.stage == "plan":
        plans.mkdir(parents=True, exist_ok=True)
        if small_models:
            plan_small(small_models, min(args.time_limit, 30.0),
                       lambda rows: _write(plans / "small.json", rows))
        for name in models:
            for h in headrooms:
                plan_model(name, GPU_MEM_LIMIT[name], h, args.time_limit,
                           lambda out, name=name, h=h: _write(plans / f"{name}@{h}.json", out))
        return
    if args.device == "cuda":
        runtime.require_cuda()
    import onnxruntime as ort
    result: dict[str, Any] = {"onnxruntime": ort.__version__, "host": platform.node(), "stage": args.stage,
                              "evidence": []}
    out = Path(args.out)
    save = lambda: _write(out, result)  # noqa: E731
    if small_models:
        if args.stage == "run":
            planned = [r for r in json.loads((plans / "small.json").read_text()) if r["model"] in small_models]
        else:
            planned = plan_small(small_models, min(args.time_limit, 30.0))
        result["small"] = []
        run_small(planned, lambda rows: (result.__setitem__("small", rows), save()))
    for name in models:
        for h in headrooms:
            if args.stage == "run":
                planned = json.loads((plans / f"{name}@{h}.json").read_text())
            else:
                ref = runtime.measure(build(name), DEVICE[0], iters=1)
                limit = int((args.limit_fraction or LIMIT_FRACTION[name]) * ref.measured_peak)
                planned = plan_model(name, limit, h, args.time_limit)
            done = list(result["evidence"])
            result["evidence"] = done + [run_model(planned, args.iters, lambda partial, done=done: (
                result.__setitem__("evidence", done + [partial]), save()))]
            save()


def _write(path: Path, data: Any) -> None:
    """Write JSON through a temporary name (a killed run leaves the last complete file)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(data, indent=1, default=float))
    tmp.replace(path)


if __name__ == "__main__":
    main()
