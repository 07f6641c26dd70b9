"""GPU evidence for issue 11: plans run under ``gpu_mem_limit`` = budget, with the arena replayed.

On the device (``tools/gpu_session.sh``), for each model spec ``name:batch[:HxW]``:

1. the checkpoint-all plan (the unmodified graph's schedule) is lowered; its need on ONNX Runtime is
   predicted (``remc.fit.predict``: replayed arena, kernel memory measured per op signature on the GPU, plus
   the inputs outside the arena); every node signature is also timed alone (``--cost profile``'s table);
   the unmodified graph is measured without a cap (profiler: bytes held and in use; median time with and
   without CUDA graph);
2. for each fraction f the budget is f x that need. The unmodified training graph runs under a cap of the
   budget (it must run out of memory). Every strategy compiles, ``--jobs`` at a time in child processes,
   with ``compile_fit(verify=True)`` (re-solve until the replayed arena fits, then runs under the cap on
   the device; at most ``--max-rounds`` rounds); a strategy ``S+profile`` compiles S with profiled costs;
3. then, one at a time, each lowered graph runs under the cap: measured bytes in use (plus inputs)
   against predicted, median time with and without CUDA graph, outputs against the unmodified graph
   (norm-relative), and the predicted overhead of the same schedule under FLOP and under profiled costs
   against the measured one.

No headroom factor: the cap is the budget less the bytes outside the arena (``runtime.arena_cap``). The
CUDA in-place ops are measured first (``tools/arena_inplace_probe.py``) and used for the replay. Rows are
written to ``--out`` (JSON) as they finish; ``--deadline`` seconds stops starting new work. Every session
uses one ``runtime.DeviceSettings`` built from the options: ``--placement remc`` (default) runs capped
sessions on remc's allocator (one buffer of the cap, every tensor at its layout offset; measured = the
buffer's high-water mark plus the bytes outside it; each plan is also timed on ONNX Runtime's arena without
a cap, to show what the allocator's callbacks cost) and the unmodified graph runs under the cap both ways
(BFC ``gpu_mem_limit`` = cap, and remc's allocator with its own layout); ``--placement arena`` is the
BFC arena throughout. ``--base`` says what the fractions are of: the checkpoint-all plan's replayed arena
need (``arena``, the budgets of the earlier tables) or its layout height (``placement``). ``--cudnn`` sets
cuDNN's algorithm search, ``--one-region`` gives capped arena sessions one region of the cap;
``--cudnn-probe`` only measures each model's unmodified graph under HEURISTIC, DEFAULT and EXHAUSTIVE.

    tools/gpu_session.sh python3 $REPO/tools/gpu_arena_evidence.py --out $OUT/gpu_arena.json \\
        --models resnet50:32:224x224 --fractions 0.8,0.6,0.5 --strategies approx,checkmate,lin-greedy --jobs 16
    python tools/gpu_arena_evidence.py --render results/gpu_arena.json   # --placement arena files
    python tools/gpu_arena_evidence.py --render-placement results/gpu_h200_place_resnet50.json
"""
from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
import multiprocessing as mp
import re
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path

import onnx

from remc import zoo
from remc.backends import runtime
from remc.backends.profile import profile_costs
from remc.backends.strategies import least_budget_bound, make_options
from remc.fit import compile_fit, predict
from remc.ir.errors import RemcError
from remc.ir.onnx_io import save_model
from remc.ir.plan import Compute
from remc.passes import arena
from remc.passes.dagbuild import build_dag
from remc.passes.strategies import SOLVER_NAMES
from remc.pipeline import State, compile_pipeline, run, shaped_model, stages

T0 = time.perf_counter()
CUDNN_SETTINGS = ("HEURISTIC", "DEFAULT", "EXHAUSTIVE")


def spec(s: str, small: bool = False) -> tuple[str, int, dict]:
    parts = s.split(":")
    cfg = dict(zoo.small_config(parts[0]) if small else zoo.paper_config(parts[0]))
    cfg.pop("batch", None)
    if len(parts) > 2:
        h, w = parts[2].split("x")
        if parts[0] == "gpt2":
            cfg.update(seq_len=int(h))
        else:
            cfg.update(height=int(h), width=int(w))
    return parts[0], int(parts[1]), cfg


def measure(model, device: str, budget: int | None, settings: runtime.DeviceSettings, ref=None, iters: int = 5,
            cuda_graph: bool = True, arena_time: bool = False) -> dict:
    """Run ``model`` under a cap of ``budget`` (None: no cap): measured bytes (plus the bytes outside), median
    time with and without CUDA graph; with ``arena_time`` also its time on ONNX Runtime's arena without a cap."""
    out = runtime.outside_bytes(model, device)
    try:
        cap = runtime.arena_cap(model, device, budget) if budget is not None else None
        feeds = runtime.random_inputs(model, 0)
        placed = cap is not None and settings.placed(device)
        res = runtime.measure(model, device, feeds=feeds, iters=iters, mem_limit=cap,
                              mem_method="profiler", settings=settings)
        row = {"ran": True, "measured_held": res.held_peak + out, "measured_in_use": res.measured_peak + out,
               "median_seconds": res.median_seconds, "placement": res.placement}
        if cuda_graph and device.startswith("cuda"):
            try:
                cg = runtime.measure(model, device, feeds=feeds, iters=iters, mem_method=None, mem_limit=cap,
                                     cuda_graph=True, settings=settings)
                row["median_seconds_cuda_graph"] = cg.median_seconds
            except runtime.RuntimeFailure as e:
                row["cuda_graph_error"] = str(e)[:1200]
        if arena_time and placed:
            arena = dataclasses.replace(settings, placement="arena")
            free = runtime.measure(model, device, feeds=feeds, iters=iters, mem_method=None, settings=arena)
            row["median_seconds_arena_no_cap"] = free.median_seconds
            try:
                cg = runtime.measure(model, device, feeds=feeds, iters=iters, mem_method=None, cuda_graph=True,
                                     settings=arena)
                row["median_seconds_arena_no_cap_cuda_graph"] = cg.median_seconds
            except runtime.RuntimeFailure as e:
                row["cuda_graph_error_arena"] = str(e)[:200]
        if ref is not None:
            ok, worst = runtime.compare_outputs(res.outputs, ref.outputs, rtol=runtime.default_rtol(device))
            row.update(outputs_match=ok, worst=worst, measured_overhead=res.median_seconds / ref.median_seconds)
        return row | {"_result": res}
    except runtime.OutOfMemory as e:
        return {"ran": False, "oom": str(e)[:300]}


def plan_overhead(state: State, costs: dict[str, float]) -> float:
    """The overhead of ``state``'s plan when its units cost what ``costs`` (per ONNX node) says."""
    dag = build_dag(state.graph, costs, state.units, granularity=state.granularity, device="cpu")
    index = {name: v for v, name in enumerate(dag.names)}
    spent = sum(float(dag.cost[index[st.unit]]) for _, _, st in state.plan.statements() if isinstance(st, Compute))
    return spent / float(dag.total_cost)


def env_cuda_graph(model_path: str, device: str, ref_outputs: dict | None, budget: int | None, iters: int,
                   settings: runtime.DeviceSettings, timeout: float = 180.0) -> tuple[dict, dict | None]:
    """The lowered graph with CUDA graph on remc's placement, on the COMPILED layout (``backends.boundrun``):
    remc's allocator registered in the environment over one buffer of the normal run's cap (the budget less the
    fed inputs; no budget: the layout's height), every graph output bound at its planned offset inside it, the
    inputs outside as in the normal run; the median ms of ``iters`` replays after one warm-up call (whose
    capture executes the graph several times), outputs against ``ref_outputs``, and the bytes it held in all
    (buffer in use + fed inputs + outputs bound outside, if any) against the prediction and ``budget``. The row's
    fields, and the outputs (None when it failed)."""
    from remc.backends import boundrun, placement
    model = onnx.load(model_path)
    lay = placement.model_layout(model, device, settings)  # the layout the normal capped run uses
    out = runtime.outside_bytes(model, device)
    cap = runtime.arena_cap(model, device, budget) if budget is not None else -(-int(lay.height) // 256) * 256
    row: dict = {"cg_layout_height": lay.height, "cg_cap": cap, "cg_outside": out,
                 "cg_predicted": lay.height + out, "cg_layout_stored": lay.stored}
    t = time.perf_counter()
    try:
        r = boundrun.run_bound(model, lay, cap, runtime.random_inputs(model, 0), device=device,
                               cuda_graph=device.startswith("cuda"),
                               iters=iters, warmup=1, timeout=timeout,
                               cudnn_conv_algo_search=settings.cudnn_conv_algo_search)
    except runtime.RuntimeFailure as e:
        row.update(cg_stage="failed", cg_error=str(e)[:600], cg_wall_seconds=time.perf_counter() - t)
        return row, None
    row.update(cg_stage="done", cg_median_ms=1e3 * r.median_seconds, cg_requests=r.calls, cg_planned=r.planned,
               cg_fallback=r.fallback, cg_high_water=r.high_water, cg_held=r.held, cg_bound=r.bound,
               cg_outside_outputs=r.outside_outputs, cg_requests_per_run=r.requests_per_run[:4], cg_passes=r.passes,
               cg_total=r.held + out + r.outside_outputs, cg_wall_seconds=time.perf_counter() - t)
    if budget is not None:
        row["cg_total_over_budget"] = row["cg_total"] / budget
    if ref_outputs is not None:
        ok, worst = runtime.compare_outputs(r.outputs, ref_outputs, rtol=runtime.default_rtol(device))
        row.update(cg_outputs_match=ok, cg_worst=worst)
    return row, r.outputs


def _top_scratch(lowered: onnx.ModelProto, device: str, settings: runtime.DeviceSettings, k: int = 5) -> list:
    from remc.backends.scratch import kernel_memory
    km = kernel_memory(lowered, device, settings=settings)
    ops = {n.name: n.op_type for n in lowered.graph.node}
    top = sorted(km.items(), key=lambda kv: -kv[1].scratch)[:k]
    return [[name, ops.get(name, "?"), m.scratch] for name, m in top]


def compile_job(job: dict) -> dict:
    """One strategy at one budget (in a child process): the row, and the lowered graph written to a file."""
    settings = runtime.DeviceSettings(**job["settings"])
    arena.IN_PLACE[job["device"].split(":")[0]] = frozenset(job["in_place"])
    device, strat, budget = job["device"], job["strategy"], job["budget"]
    train = onnx.load(job["train"])
    if strat == "least-budget-bound":  # the proven lower bound on any schedule's live bytes (simple + LP)
        t = time.perf_counter()
        st = run(stages(compile_pipeline(device=device), last="units"), State(model=train))
        return {"bound": least_budget_bound(st.dag, time_limit=job["time_limit"]),
                "bound_seconds": time.perf_counter() - t}
    base = strat.split("+")[0]
    options = make_options(base, time_limit=job["time_limit"], threads=job["threads"]) if base in SOLVER_NAMES else None
    cost = "profile" if strat.endswith("+profile") else "flops"
    passes = compile_pipeline(strategy=base, device=device, cost=cost, options=options)
    row: dict = {"fraction": job["fraction"], "budget": budget, "strategy": strat}
    t = time.perf_counter()
    st = run(stages(passes, last="units"), State(model=train))
    st.budget = budget
    try:
        fit = compile_fit(stages(passes, first="schedule"), st, device=device, verify=job["verify"],
                          max_rounds=job["max_rounds"], settings=settings)
    except RemcError as e:
        row.update(compiled=False, why=str(e)[:1200], compile_seconds=time.perf_counter() - t)
        rep = getattr(e, "fit_report", None)
        if rep is not None:
            row["fit_history"] = rep.history
        least = min((h["predicted"] for h in rep.history if "predicted" in h), default=None) if rep else None
        live = re.search(r"(?:needs (?:[\d.]+ \w+ \()?|least peak it reaches is )(\d+) bytes", str(e))
        if job.get("retry_least") and least is None and live and not job.get("retried_live"):
            again = compile_job({**job, "budget": int(live.group(1)), "retried_live": True, "first_budget": budget})  # its live need first
            if again.get("compiled"):
                return {**again, "first_budget": budget, "first_why": row["why"][:300]}
            row["least_tries"] = [{"budget": int(live.group(1)), "why": again.get("why", "")[:200]}]
            return row
        if job.get("retry_least") and least is not None:  # compile again at the least need its fit found
            tries = []
            for attempt in range(3):  # that need, then 1% and 2% more
                b = int(least * (1 + 0.01 * attempt))
                again = compile_job({**job, "budget": b, "retry_least": False})
                if again.get("compiled"):
                    return {**again, "first_budget": job.get("first_budget", budget), "first_why": row["why"][:300],
                            "least_tries": tries}
                tries.append({"budget": b, "why": again.get("why", "")[:200]})
            row["least_tries"] = tries
        if st.lowered is not None:  # the last round's plan: where its replayed need went
            p = predict(st.lowered, device, settings=settings)
            row.update(last_predicted=p.total, last_live_peak=int(st.sim.peak),
                       last_predicted_no_kernel_memory=predict(st.lowered, device, measure_kernels=False,
                                                               settings=settings).total,
                       top_scratch=_top_scratch(st.lowered, device, settings), peak_node=p.peak_node)
        return row
    p = fit.prediction
    flops = compile_pipeline(cost="flops")[1]
    prof = profile_costs(shaped_model(st.graph), device=device, settings=settings)
    fl_state = State(graph=st.graph)
    flops.apply(fl_state)
    row.update(compiled=True, rounds=fit.rounds, solver_budget=fit.solver_budget, live_peak=int(st.sim.peak),
               predicted=p.total, predicted_in_use=p.in_use_total, peak_node=p.peak_node, placement=p.placement,
               predicted_overhead=plan_overhead(st, fl_state.costs), predicted_overhead_profile=plan_overhead(st, prof),
               status=st.schedule.report.get("status"), gap=st.schedule.report.get("gap"),
               compile_seconds=time.perf_counter() - t, lowered=job["lowered"])
    save_model(st.lowered, job["lowered"])
    return row


def cudnn_probe(name: str, batch: int, cfg: dict, device: str) -> list[dict]:
    """The unmodified graph under each cuDNN algorithm search: bytes held and in use, median time."""
    train = zoo.export(name, batch, train=True, **cfg)
    rows = []
    for setting in CUDNN_SETTINGS:
        r = measure(train, device, None, runtime.DeviceSettings(cudnn_conv_algo_search=setting), cuda_graph=False)
        r.pop("_result", None)
        rows.append({"model": name, "batch": batch, "cudnn": setting, **r})
        print(json.dumps(rows[-1]), flush=True)
    return rows


def _f(x: float | None, fmt: str = "{:.3f}") -> str:
    return "" if x is None else fmt.format(x)


def _load(path: str) -> dict:
    """A result file: the JSON ``--out`` wrote, or a run's printed lines (``.jsonl``: one JSON object a line;
    for runs killed before their rows were saved), rows keyed by fraction and strategy, the last line winning."""
    if not path.endswith(".jsonl"):
        return json.loads(Path(path).read_text())
    models: list[dict] = []
    for line in Path(path).read_text().splitlines():
        if not line.startswith("{"):
            continue
        r = json.loads(line)
        if "checkpoint_all_predicted" in r:
            models.append({**r, "rows": []})
        elif models:
            rows = models[-1]["rows"]
            rows[:] = [x for x in rows if (x["fraction"], x["strategy"]) != (r["fraction"], r["strategy"])] + [r]
    for m in models:
        m["rows"].sort(key=lambda r: -r["fraction"])
    return {"models": models}


def render(files: list[str]) -> str:
    """The BENCHMARKS.md table of one or more result files."""
    out = ["| model | budget (fraction of checkpoint-all's predicted need) | strategy | fit rounds | predicted peak "
           "(in use) | measured peak (in use) | measured / budget | measured / predicted | ran under cap = budget | "
           "overhead predicted FLOPs / profile / measured | ms (CUDA graph) | outputs |",
           "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    probes = []
    for f in files:
        d = _load(f)
        probes += d.get("cudnn_probe", [])
        for m in d["models"]:
            cg = m.get("unmodified_median_seconds_cuda_graph")
            out.append(f"| {m['model']} b{m['batch']} | no cap | unmodified | | {m['checkpoint_all_predicted_in_use']} | "
                       f"{m.get('unmodified_measured_in_use', '')} | | "
                       f"{_f(m['unmodified_measured_in_use'] / m['checkpoint_all_predicted_in_use'])} | | | "
                       f"{1e3 * m['unmodified_median_seconds']:.1f} ({_f(cg and 1e3 * cg, '{:.1f}')}) | |")
            for r in m["rows"]:
                head = f"| {m['model']} b{m['batch']} | {r.get('budget', '')} ({r['fraction']}) | {r['strategy']} "
                if r["strategy"] == "unmodified":
                    out.append(head + f"| | | | | | {'ran' if r['ran'] else 'out of memory'} | | | |")
                elif r.get("skipped") or (r.get("compiled") and "ran" not in r):
                    out.append(head + f"| {r['rounds']} | {r['predicted_in_use']} | not measured "
                               f"({r.get('skipped', 'run killed at its time limit')}) | | | | "
                               f"{_f(r['predicted_overhead'])} / {_f(r.get('predicted_overhead_profile'))} / | | |")
                elif not r.get("compiled") and "last_predicted" in r:
                    why = r["why"]
                    best = why[why.index("the best needs") + 15:].split(" ")[0] if "the best needs" in why else "?"
                    out.append(head + f"| no plan fits: best replayed need {best} (its live bytes "
                               f"{r['last_live_peak']}; last round {r['last_predicted']}, "
                               f"{r['last_predicted_no_kernel_memory']} without kernel memory) | | | | | | | |")
                elif not r.get("compiled"):
                    why = r["why"].replace("|", "/")[:110]
                    out.append(head + f"| no plan fits: {why} | | | | | | | |")
                elif not r.get("ran"):
                    out.append(head + f"| {r['rounds']} | {r['predicted_in_use']} | | | | no: {r['oom'][:90]} | | | |")
                else:
                    cgs = r.get("median_seconds_cuda_graph")
                    out.append(head + f"| {r['rounds']} | {r['predicted_in_use']} | {r['measured_in_use']} | "
                               f"{r['measured_in_use'] / r['budget']:.3f} | "
                               f"{r['measured_in_use'] / r['predicted_in_use']:.3f} | yes | "
                               f"{_f(r['predicted_overhead'])} / {_f(r.get('predicted_overhead_profile'))} / "
                               f"{r['measured_overhead']:.3f} | {1e3 * r['median_seconds']:.1f} "
                               f"({_f(cgs and 1e3 * cgs, '{:.1f}')}) | {'match' if r['outputs_match'] else 'DIFFER'} |")
    if probes:
        out += ["", "| model | cudnn_conv_algo_search | bytes held | bytes in use | ms |", "|---|---|---|---|---|"]
        for p in probes:
            out.append(f"| {p['model']} b{p['batch']} | {p['cudnn']} | {p.get('measured_held', '')} | "
                       f"{p.get('measured_in_use', '')} | {_f(p.get('median_seconds') and 1e3 * p['median_seconds'], '{:.1f}')} |")
    return "\n".join(out)


def render_placement(files: list[str]) -> str:
    """The BENCHMARKS.md table of result files made with ``--placement remc``."""
    out = ["| model | budget (fraction) | strategy | fit rounds | predicted: layout height + outside (live lower bound) "
           "| measured: high-water + outside | measured / budget | measured / predicted | ran under cap = budget "
           "| requests at their planned address | overhead predicted FLOPs / profile / measured "
           "| ms remc allocator (cap) | ms ORT arena, no cap (CUDA graph) | outputs |",
           "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for f in files:
        for m in _load(f)["models"]:
            cg = m.get("unmodified_median_seconds_cuda_graph")
            out.append(f"| {m['model']} b{m['batch']} | no cap | unmodified | | {m['checkpoint_all_layout']} "
                       f"({m['checkpoint_all_live']}) | | | | | | | | {1e3 * m['unmodified_median_seconds']:.1f} "
                       f"({_f(cg and 1e3 * cg, '{:.1f}')}) | |")
            for r in m["rows"]:
                head = f"| {m['model']} b{m['batch']} | {r['budget']} ({r['fraction']}) | {r['strategy']} "
                blank = "| | | | | | | | | | |"
                if r["strategy"].startswith("unmodified"):
                    how = "ONNX Runtime's arena, gpu_mem_limit = cap" if r["strategy"] == "unmodified" else \
                        "remc's allocator, its own layout"
                    res = "ran" if r.get("ran") else f"out of memory ({how})"
                    out.append(head + f"| | | | | | {res} | | | | | |")
                elif not r.get("compiled"):
                    why = r.get("why", "").replace("|", "/")
                    i = why.find("the run under the cap failed:")
                    short = why[i:i + 230] if i >= 0 else why[:230]
                    out.append(head + f"| no plan fits: {short} " + blank)
                elif "ran" not in r:
                    out.append(head + f"| {r['rounds']} | {r['predicted']} ({r['predicted_in_use']}) | not timed "
                               f"({r.get('skipped', 'killed')}); ran 8 times under the cap in compile_fit(verify) | | "
                               f"| yes (verify) | | {_f(r['predicted_overhead'])} / "
                               f"{_f(r.get('predicted_overhead_profile'))} / | | | |")
                elif not r.get("ran"):
                    out.append(head + f"| {r['rounds']} | {r['predicted']} | | | | no: {r['oom'][:120]} | | | | | |")
                else:
                    pl = r.get("placement") if isinstance(r.get("placement"), dict) else {}
                    acg = r.get("median_seconds_arena_no_cap_cuda_graph")
                    out.append(head + f"| {r['rounds']} | {r['predicted']} ({r['predicted_in_use']}) | "
                               f"{r['measured_in_use']} | {r['measured_in_use'] / r['budget']:.3f} | "
                               f"{r['measured_in_use'] / r['predicted']:.3f} | yes | "
                               f"{pl.get('planned', '?')} of {pl.get('calls', '?')} | "
                               f"{_f(r['predicted_overhead'])} / {_f(r.get('predicted_overhead_profile'))} / "
                               f"{r['measured_overhead']:.3f} | {1e3 * r['median_seconds']:.1f} | "
                               f"{_f(r.get('median_seconds_arena_no_cap') and 1e3 * r['median_seconds_arena_no_cap'], '{:.1f}')} "
                               f"({_f(acg and 1e3 * acg, '{:.1f}')}) | {'match' if r['outputs_match'] else 'DIFFER'} |")
    return "\n".join(out)


def _cg_cell(r: dict, budget: int | None) -> str:
    """The CUDA-graph-on-remc's-placement cell: ms, bytes held in all (/ budget), requests at their address."""
    if "cg_stage" not in r:
        return ""
    if r["cg_stage"] != "done":
        return f"failed at {r['cg_stage']}: {str(r.get('cg_error', ''))[:160].replace('|', '/')}"
    share = f" = {r['cg_total'] / budget:.3f} of budget" if budget else ""
    if "cg_predicted" in r:
        share += f", {r['cg_total'] / r['cg_predicted']:.3f} of predicted"
    match = "" if r.get("cg_outputs_match", True) else ", outputs DIFFER"
    return (f"{r['cg_median_ms']:.1f} ms; {r['cg_total']}{share}; {r['cg_planned']} of {r['cg_requests']} "
            f"requests at their address{match}")


CG_HEAD_S10 = "CUDA graph on remc's placement (buffer = layout height): ms; held in all (high-water + inputs + bound outputs)"
CG_HEAD_S11 = ("CUDA graph on the compiled layout (buffer = the cap, outputs at their planned offsets in it): ms; held in "
               "all (buffer in use + inputs + outputs bound outside)")


def render_s10(files: list[str], cg_head: str = CG_HEAD_S10) -> str:
    """The BENCHMARKS.md table of result files made with ``--placement remc --env-cuda-graph`` (``cg_head``: the
    CUDA-graph column's title: session 10's route, or session 11's ``backends.boundrun``)."""
    out = ["| model | budget (fraction) | strategy | fit rounds | predicted: layout height + outside (live lower bound) "
           "| measured: high-water + outside | measured / budget | measured / predicted | ran under cap = budget "
           "| requests at their planned address | overhead predicted FLOPs / profile / measured (with CUDA graph) "
           f"| ms remc allocator (cap) | {cg_head} | outputs |",
           "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for f in files:
        for m in _load(f)["models"]:
            cg = m.get("unmodified_cuda_graph", {})
            bound = m.get("least_budget_bound")
            out.append(f"| {m['model']} b{m['batch']} | no cap | unmodified | | {m['checkpoint_all_layout']} "
                       f"({m['checkpoint_all_live']}) | | | | | | | {1e3 * m['unmodified_median_seconds']:.1f} "
                       f"(ORT arena) | {_cg_cell(cg, None)} | |")
            if bound:
                out.append(f"| {m['model']} b{m['batch']} | proven least budget (live bytes, simple + LP bound) "
                           f"{bound} = {bound / m['checkpoint_all_layout']:.3f} of checkpoint-all's layout | | | | | | "
                           "| | | | | | |")
            for r in m["rows"]:
                if "budget" not in r:
                    out.append(f"| {m['model']} b{m['batch']} | ? | {r.get('strategy')} | compile job failed: "
                               f"{str(r.get('why', ''))[:200].replace('|', '/')} | | | | | | | | | | |")
                    continue
                head = f"| {m['model']} b{m['batch']} | {r['budget']} ({r['fraction']}) | {r['strategy']} "
                if r.get("first_budget"):
                    head = (f"| {m['model']} b{m['batch']} | {r['budget']} (least feasible found: "
                            f"{r['budget'] / r['first_budget']:.3f}x the budget {r['first_budget']} of fraction "
                            f"{r['fraction']}) | {r['strategy']} ")
                if r["strategy"].startswith("unmodified"):
                    how = "ONNX Runtime's arena, gpu_mem_limit = cap" if r["strategy"] == "unmodified" else \
                        "remc's allocator, its own layout"
                    res = "ran" if r.get("ran") else f"out of memory ({how})"
                    out.append(head + f"| | | | | | {res} | | | | | |")
                elif not r.get("compiled"):
                    why = r.get("why", "").replace("|", "/").replace("\n", " ")
                    i = why.find("the run under the cap failed:")
                    short = why[i:i + 260] if i >= 0 else why[:260]
                    out.append(head + f"| does not apply / no plan fits: {short} | | | | | | | | | | |")
                elif "ran" not in r:
                    out.append(head + f"| {r['rounds']} | {r['predicted']} ({r['predicted_in_use']}) | not timed "
                               f"({r.get('skipped', 'killed')}) | | | yes (verify) | | {_f(r['predicted_overhead'])} / "
                               f"{_f(r.get('predicted_overhead_profile'))} / | | | |")
                elif not r.get("ran"):
                    out.append(head + f"| {r['rounds']} | {r['predicted']} | | | | no: {r['oom'][:120]} | | | | | |")
                else:
                    pl = r.get("placement") if isinstance(r.get("placement"), dict) else {}
                    same = f" (same plan as {r['same_plan_as']})" if r.get("same_plan_as") else ""
                    cgo = r.get("measured_overhead_cuda_graph")
                    out.append(head + f"| {r['rounds']} | {r['predicted']} ({r['predicted_in_use']}) | "
                               f"{r['measured_in_use']}{same} | {r['measured_in_use'] / r['budget']:.3f} | "
                               f"{r['measured_in_use'] / r['predicted']:.3f} | yes | "
                               f"{pl.get('planned', '?')} of {pl.get('calls', '?')} | "
                               f"{_f(r['predicted_overhead'])} / {_f(r.get('predicted_overhead_profile'))} / "
                               f"{r['measured_overhead']:.3f} ({_f(cgo)}) | {1e3 * r['median_seconds']:.1f} | "
                               f"{_cg_cell(r, r['budget'])} | {'match' if r['outputs_match'] else 'DIFFER'} |")
    return "\n".join(out)


def _probe_in_place(device: str) -> list[str]:
    sys.path.insert(0, str(Path(__file__).parent))
    from arena_inplace_probe import BINARY, TERNARY, UNARY, probe
    got = {op: probe(op, device) for op in UNARY + BINARY + list(TERNARY)}
    return sorted(op for op, v in got.items() if v and op not in arena.ALIAS_OPS)


def main() -> None:
    if len(sys.argv) > 2 and sys.argv[1] == "--render":
        print(render(sys.argv[2:]))
        return
    if len(sys.argv) > 2 and sys.argv[1] == "--render-s10":
        print(render_s10(sys.argv[2:]))
        return
    if len(sys.argv) > 2 and sys.argv[1] == "--render-s11":
        print(render_s10(sys.argv[2:], CG_HEAD_S11))
        return
    if len(sys.argv) > 2 and sys.argv[1] == "--render-placement":
        print(render_placement(sys.argv[2:]))
        return
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--models", default="resnet50:32:224x224")
    ap.add_argument("--fractions", default="0.8,0.6,0.5")
    ap.add_argument("--strategies", default="approx,checkmate,lin-greedy")
    ap.add_argument("--time-limit", type=float, default=30.0)
    ap.add_argument("--max-rounds", type=int, default=6)
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--threads", type=int, default=2, help="solver threads per compile job")
    ap.add_argument("--deadline", type=float, default=540.0)
    ap.add_argument("--cudnn", default="HEURISTIC", choices=CUDNN_SETTINGS)
    ap.add_argument("--cudnn-probe", action="store_true")
    ap.add_argument("--one-region", action="store_true", help="DeviceSettings.one_region: the cap as one arena region")
    ap.add_argument("--placement", default="remc", choices=runtime.PLACEMENTS)
    ap.add_argument("--base", default="arena", choices=("arena", "placement"),
                    help="budgets are fractions of checkpoint-all's replayed arena need or of its layout height")
    ap.add_argument("--no-verify", action="store_true", help="compile without running each plan under the cap")
    ap.add_argument("--budgets", help="absolute budgets in bytes (comma-separated) instead of --fractions")
    ap.add_argument("--no-probe", action="store_true")
    ap.add_argument("--small", action="store_true", help="the zoo's test-size models")
    ap.add_argument("--iters", type=int, default=5, help="timed runs per plan and session (after 2 warm-up runs)")
    ap.add_argument("--no-placed-cuda-graph", action="store_true",
                    help="do not try CUDA graph on remc's allocator (gpu_external_alloc: impossible in "
                         "onnxruntime-gpu 1.31, see tools/gpu_cudagraph_stream_probe.py); the arena's is still timed")
    ap.add_argument("--env-cuda-graph", action="store_true",
                    help="also run every plan (and the unmodified graph) with CUDA graph on its compiled layout "
                         "(backends/boundrun: outputs bound at their planned offsets in a buffer of the normal run's "
                         "cap, remc's allocator as the environment allocator)")
    ap.add_argument("--cg-iters", type=int, default=5, help="timed CUDA graph replays per plan (--env-cuda-graph)")
    ap.add_argument("--no-arena-time", action="store_true", help="do not time plans on ONNX Runtime's arena too")
    ap.add_argument("--bound", type=float, default=0.0,
                    help="seconds for each model's proven least-budget bound (simple + LP; 0: not computed)")
    ap.add_argument("--retry-least", action="store_true",
                    help="a strategy with no plan at the budget compiles again at the least need its fit found")
    a = ap.parse_args()
    settings = runtime.DeviceSettings(cudnn_conv_algo_search=a.cudnn, placement=a.placement, one_region=a.one_region)
    arena_settings = dataclasses.replace(settings, placement="arena")
    data: dict = {"onnxruntime": runtime.ort.__version__, "device": a.device, "cudnn": a.cudnn,
                  "one_region": a.one_region, "placement": a.placement, "base": a.base, "models": []}
    out = Path(a.out)

    def save() -> None:
        out.write_text(json.dumps(data, indent=1, default=str))

    if a.cudnn_probe:
        data["cudnn_probe"] = []
        for s in a.models.split(","):
            data["cudnn_probe"] += cudnn_probe(*spec(s, a.small), a.device)
            save()
        return
    kind = a.device.split(":")[0]
    if not a.no_probe:
        arena.IN_PLACE[kind] = frozenset(_probe_in_place(a.device))
    data["in_place"] = sorted(arena.IN_PLACE.get(kind, ()))
    tmp = Path(tempfile.mkdtemp(prefix="remc-ev-"))
    pool = ProcessPoolExecutor(max_workers=max(a.jobs, 1), mp_context=mp.get_context("spawn"))
    for s in a.models.split(","):
        if time.perf_counter() - T0 > a.deadline:
            break
        name, batch, cfg = spec(s, a.small)
        train = zoo.export(name, batch, train=True, **cfg)
        train_path = tmp / f"{name}_{batch}_train.onnx"
        save_model(train, train_path)
        m: dict = {"model": name, "batch": batch, "config": cfg, "rows": []}
        data["models"].append(m)
        full_state = run(compile_pipeline(strategy="checkpoint-all", device=a.device),
                         State(model=train, budget=1 << 60))
        full = predict(full_state.lowered, a.device, settings=arena_settings)
        placed_full = predict(full_state.lowered, a.device, settings=settings)
        base = placed_full.total if a.base == "placement" else full.total
        profile_costs(shaped_model(full_state.graph), device=a.device, settings=settings)  # every signature, cached
        ref = measure(train, a.device, None, settings, iters=a.iters)  # as many runs as each plan: CUDA Dropout draws anew each run
        refres = ref.pop("_result", None)
        m.update(checkpoint_all_predicted=full.total, checkpoint_all_predicted_in_use=full.in_use_total,
                 checkpoint_all_layout=placed_full.total, checkpoint_all_live=placed_full.in_use_total,
                 unmodified_measured_held=ref.get("measured_held"), unmodified_measured_in_use=ref.get("measured_in_use"),
                 unmodified_median_seconds=ref.get("median_seconds"),
                 unmodified_median_seconds_cuda_graph=ref.get("median_seconds_cuda_graph"),
                 seconds=time.perf_counter() - T0)
        cg_ref = None  # the unmodified graph's outputs with CUDA graph: a replay repeats the captured run's masks
        if a.env_cuda_graph:
            m["unmodified_cuda_graph"], cg_ref = env_cuda_graph(str(train_path), a.device, refres.outputs, None,
                                                                a.cg_iters, settings)
        print(json.dumps({k: v for k, v in m.items() if k != "rows"}), flush=True)
        save()
        jobs = []
        bound = pool.submit(compile_job, {"train": str(train_path), "strategy": "least-budget-bound", "budget": None,
                                          "device": a.device, "settings": dataclasses.asdict(settings),
                                          "in_place": data["in_place"], "time_limit": a.bound}) if a.bound else None
        budgets = [(round(b / base, 3), b) for b in map(int, a.budgets.split(","))] if a.budgets else \
            [(f, int(f * base)) for f in map(float, a.fractions.split(","))]
        for f, budget in budgets:
            under = measure(train, a.device, budget, arena_settings, iters=1, cuda_graph=False)
            under.pop("_result", None)
            m["rows"].append({"fraction": f, "budget": budget, "strategy": "unmodified", **under})
            if settings.placed(a.device):
                under = measure(train, a.device, budget, settings, iters=1, cuda_graph=False)
                under.pop("_result", None)
                m["rows"].append({"fraction": f, "budget": budget, "strategy": "unmodified (remc placement)",
                                  **under})
            for strat in a.strategies.split(","):
                jobs.append({"train": str(train_path), "strategy": strat, "budget": budget, "fraction": f,
                             "time_limit": a.time_limit, "device": a.device, "settings": dataclasses.asdict(settings),
                             "verify": not a.no_verify, "in_place": data["in_place"], "max_rounds": a.max_rounds,
                             "threads": a.threads, "lowered": str(tmp / f"{name}_{strat}_{f}.onnx"),
                             "env_cuda_graph": a.env_cuda_graph, "retry_least": a.retry_least})
        save()
        futures = [pool.submit(compile_job, j) for j in jobs]
        for fut in as_completed(futures):  # every compile's row is saved at once, measured below
            try:
                row = fut.result()
            except Exception as e:  # a child that broke: say so in the table
                row = {"fraction": -1, "strategy": "?", "compiled": False, "why": f"{type(e).__name__}: {e}"}
            m["rows"].append(row)
            print(json.dumps({k: v for k, v in row.items() if k != "lowered"}), flush=True)
            save()
        if bound is not None:
            try:
                m.update(least_budget_bound=bound.result()["bound"], least_budget_bound_seconds=bound.result()["bound_seconds"])
            except Exception as e:  # noqa: BLE001 - say so in the file
                m["least_budget_bound_error"] = f"{type(e).__name__}: {e}"[:300]
            save()
        order = {(j["fraction"], j["strategy"]): i for i, j in enumerate(jobs)}
        done: dict[str, dict] = {}  # a lowered graph's digest -> the row that ran it (at the least budget)
        for row in sorted(m["rows"], key=lambda r: (r.get("budget", 0), order.get((r["fraction"], r["strategy"]), -1))):
            if not row.get("compiled"):
                continue
            if time.perf_counter() - T0 > a.deadline:
                row["skipped"] = "deadline"
                continue
            digest = hashlib.sha256(Path(row["lowered"]).read_bytes()).hexdigest()
            if digest in done:  # the same plan ran under a smaller cap: it runs the same under this one
                first = done[digest]
                row.update({k: v for k, v in first.items() if k.startswith(("measured", "median", "ran", "outputs",
                                                                            "worst", "placement", "cg_"))
                            and k != "cg_total_over_budget"},
                           same_plan_as=f"{first['strategy']} at {first['fraction']}")
                if "cg_total" in row:
                    row["cg_total_over_budget"] = row["cg_total"] / row["budget"]
                print(json.dumps({k: v for k, v in row.items() if k != "lowered"}), flush=True)
                save()
                continue
            r = measure(onnx.load(row["lowered"]), a.device, row["budget"], settings, ref=refres,
                        arena_time=not a.no_arena_time, iters=a.iters,
                        cuda_graph=not (a.no_placed_cuda_graph and settings.placed(a.device)))
            r.pop("_result", None)
            row.update(r)
            if a.env_cuda_graph and r.get("ran"):
                row.update(env_cuda_graph(row["lowered"], a.device, cg_ref if cg_ref is not None else refres.outputs,
                                          row["budget"], a.cg_iters, settings)[0])
                base_cg = m.get("unmodified_cuda_graph", {}).get("cg_median_ms")
                if row.get("cg_median_ms") and base_cg:
                    row["measured_overhead_cuda_graph"] = row["cg_median_ms"] / base_cg
            if r.get("ran"):
                done[digest] = row
            print(json.dumps({k: v for k, v in row.items() if k != "lowered"}), flush=True)
            save()
        m["rows"].sort(key=lambda r: (-r["fraction"], not r["strategy"].startswith("unmodified"),
                                      order.get((r["fraction"], r["strategy"]), -1)))
        save()
    pool.shutdown(cancel_futures=True)
    save()


if __name__ == "__main__":
    main()
