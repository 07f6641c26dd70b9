"""``remc run``: run a (lowered) graph on ONNX Runtime; measured vs predicted peak and cost."""
from __future__ import annotations

import argparse
import dataclasses
import json
from typing import Any

from .ir.errors import RuntimeFailure
from .ir.sizes import format_size


def run_graph(model: str, *, device: str = "cpu", compare: str | None = None, plan: str | None = None,
              iters: int = 10, mem_limit: int | None = None, seed: int = 0, use_plan_budget: bool = True,
              batch: int | None = None, settings: Any = None, cuda_graph: bool = False) -> dict[str, Any]:
    """Run ``model`` (and ``compare``, the reference, on the same inputs); the report as a dict.

    ``mem_limit`` is the memory the graph may use in all, like a compile budget: the session's arena is
    capped at it less the bytes the graph holds outside the arena (fed inputs; on CPU the initializers used
    in place: ``runtime.outside_bytes``). With a ``plan`` and no ``mem_limit`` the plan's budget is the cap
    (unless ``use_plan_budget`` is False). ``measured_peak`` is the profiler's ``mem_in_use_peak`` plus the
    bytes outside the arena, ``predicted_peak`` the replayed arena's (``remc.fit.predict``) on the same
    terms; ``predicted_held`` the least cap the replay runs under (under a cap, the CPU arena is one region
    of the whole cap, so the bytes it holds are the cap). The report carries
    an ``error`` when the outputs differ from the reference. ``batch`` binds a symbolic batch dimension of
    the inputs of both graphs (ModelError naming the input when one is dynamic and ``batch`` is None).

    On CUDA with remc's placement (``settings``, a ``backends.runtime.DeviceSettings``; the default there) a
    capped run allocates from one buffer of the cap (less the bytes outside it) at the addresses of remc's
    layout: ``measured_peak`` is the buffer's high-water mark plus the bytes outside, ``predicted_peak`` the
    layout's height plus the same. On CPU remc's placement drives ONNX Runtime's C library (``backends.capi``)
    the same way. Without a cap on CPU the session is the one predicted, sized to the predicted need
    (``cap_from_prediction``: remc's buffer of the layout's height, or with placement 'arena' a one-region
    arena of the replayed need), so measured equals predicted there too; without a cap on CUDA ONNX Runtime's
    arena holds the tensors.

    ``cuda_graph`` (CUDA): the graph is also run with CUDA graph capture and replay (``rep['cuda_graph']``). On
    remc's placement that run uses the same layout and cap as the normal one, its graph outputs bound at their
    planned offsets in remc's buffer (``backends.boundrun``), so its measured bytes (buffer in use plus the same
    bytes outside) are checked against the same prediction; on ONNX Runtime's arena it is a second session with
    ``enable_cuda_graph``. RuntimeFailure when the graph cannot be captured.
    """
    from .backends import runtime
    from .fit import predict
    from .ir.onnx_io import load_model
    settings = settings or runtime.DEFAULT_SETTINGS
    if cuda_graph and not device.startswith("cuda"):
        raise RuntimeFailure("--cuda-graph needs --device cuda (CUDA graph captures the GPU's kernels)")
    if device.startswith("cuda"):
        runtime.require_cuda()
    # an op with no kernel here: one line naming it (and ONNX Runtime's late expansion of function ops
    # into their bodies happens here, in the file's order, as compile does)
    proto = runtime.inline_function_ops(_bound(load_model(model, with_data=True), batch), device)
    rep: dict[str, Any] = {"model": str(model), "device": device, "predicted_peak": None, "predicted_cost": None,
                           "outputs_match": None, "budget": None}
    if plan:
        from .plancheck import check_plan_matches_model
        rep["plan_matches_model"] = check_plan_matches_model(plan, model)
        rep.update(_predicted(plan, compare, device))
        if mem_limit is None and use_plan_budget:
            mem_limit = rep["budget"]
    cap = runtime.arena_cap(proto, device, mem_limit) if mem_limit is not None else None
    sized = cap is None and not device.startswith("cuda")
    if sized:
        # no cap on CPU: the session is the one remc predicts (remc's buffer, or ONNX Runtime's arena as one
        # region), of the size it predicts; ONNX Runtime's default arena would hold other bytes
        placed = settings.placed(device)
        pred = predict(proto, device, settings=settings if placed else dataclasses.replace(settings, placement="arena"))
        cap = pred.arena
    else:
        placed = cap is not None and settings.placed(device)
        pred = predict(proto, device, cap=cap, settings=settings if placed else
                       dataclasses.replace(settings, placement="arena"))
    # remc's placement: the layout's height is the need (what the buffer's high-water mark will be)
    rep.update(predicted_peak=pred.total if placed else pred.in_use_total,
               predicted_held=pred.total, predicted_in_use=pred.in_use_total, outside_arena=pred.outside,
               mem_limit=mem_limit, placement="remc" if placed else "arena")
    rep["arena_cap"] = cap
    rep["cap_from_prediction"] = sized
    if placed and pred.layout is not None:  # the offsets the compile stored in the model, or derived here
        rep["layout_source"] = "stored in the model" if pred.layout.stored else "derived here"
        if pred.layout_note:
            rep["layout_note"] = pred.layout_note
    feeds = runtime.random_inputs(proto, seed)
    try:
        res = runtime.measure(proto, device, feeds=feeds, iters=iters, mem_limit=cap, settings=settings)
    except runtime.OutOfMemory as e:  # say what the least cap is
        what = "remc's layout's height" if placed else "the replayed arena's least cap"
        raise runtime.OutOfMemory(f"{e}; this graph needs {pred.total} bytes ({what} plus {pred.outside} outside "
                                  f"it): --mem-limit {pred.total} runs it", e.requested, e.available, e.limit,
                                  e.node) from e
    if res.placement is not None:
        rep["placement_stats"] = res.placement
    out = res.outside_bytes
    held = None if res.held_peak is None else res.held_peak + out
    in_use = None if res.measured_peak is None else res.measured_peak + out
    # under a cap the CPU arena is one region of the cap and CUDA's last region is cut to it: bytes held say
    # little, bytes in use are the peak
    rep.update(measured_peak=in_use, measured_held=held, measured_in_use=in_use,
               arena_peak=res.measured_peak, peak_method=res.method, median_seconds=res.median_seconds,
               input_bytes=res.input_bytes, initializer_bytes=res.initializer_bytes)
    if cuda_graph and placed:
        rep["cuda_graph"] = _cuda_graph_placed(proto, pred, cap, feeds, iters, settings, res.outputs)
        rep["median_seconds_cuda_graph"] = rep["cuda_graph"]["median_seconds"]
    elif device.startswith("cuda") and (cuda_graph or not placed):
        # ONNX Runtime's arena (remc's placement takes CUDA graph only through --cuda-graph: backends.boundrun)
        try:
            cg = runtime.measure(proto, device, feeds=feeds, iters=iters, mem_method=None, mem_limit=cap,
                                 cuda_graph=True, settings=settings)
            rep["median_seconds_cuda_graph"] = cg.median_seconds
        except RuntimeFailure as e:
            if cuda_graph:
                raise RuntimeFailure(f"CUDA graph could not be captured on ONNX Runtime's arena: {e}") from e
            rep["cuda_graph_error"] = str(e)
    if compare:
        ref_proto = _bound(load_model(compare, with_data=True), batch)
        rep.update(_randomness(ref_proto))
        ref = runtime.measure(ref_proto, device, feeds=feeds, iters=iters, settings=settings)
        ok, worst = runtime.compare_outputs(res.outputs, ref.outputs, rtol=runtime.default_rtol(device))
        rep.update(outputs_match=ok, compare_worst=worst,
                   reference_peak=None if ref.held_peak is None else ref.held_peak + ref.outside_bytes,
                   reference_median_seconds=ref.median_seconds,
                   measured_overhead=res.median_seconds / ref.median_seconds if ref.median_seconds else None)
        if not ok:
            rep["error"] = f"outputs differ from {compare}: {worst}"
            if rep["unseeded_random_nodes"] and set(rep["random_outputs"]) & set(res.outputs):
                rep["error"] += (f"; {len(rep['unseeded_random_nodes'])} random node(s) have no seed attribute "
                                 f"(e.g. {rep['unseeded_random_nodes'][0]!r}), so every session draws other "
                                 "numbers: rebuild the training graph with remc grad")
    return rep


def _cuda_graph_placed(proto: Any, pred: Any, cap: int, feeds: Any, iters: int, settings: Any,
                       outputs: dict[str, Any]) -> dict[str, Any]:
    """The graph run with CUDA graph on remc's placement: the layout ``pred`` holds (the one the normal run used),
    a buffer of ``cap``, every graph output bound at its planned offset in it (``backends.boundrun``); measured
    = the buffer's bytes in use + the bytes the normal run holds outside it (+ outputs bound outside, if any)."""
    from .backends import boundrun, runtime
    try:
        r = boundrun.run_bound(proto, pred.layout, cap, feeds, device="cuda", cuda_graph=True, iters=iters,
                               cudnn_conv_algo_search=settings.cudnn_conv_algo_search)
    except runtime.OutOfMemory as e:
        raise runtime.OutOfMemory(f"{e}; with CUDA graph: --mem-limit {pred.total} runs it", e.requested,
                                  e.available, e.limit, e.node) from e
    ok, worst = runtime.compare_outputs(r.outputs, outputs, rtol=runtime.default_rtol("cuda"))
    return {"median_seconds": r.median_seconds, "measured_peak": r.held + pred.outside + r.outside_outputs,
            "predicted_peak": pred.total, "buffer_in_use": r.held, "high_water": r.high_water,
            "outputs_bound": r.bound, "outputs_bound_outside_bytes": r.outside_outputs, "planned": r.planned,
            "fallback": r.fallback, "requests": r.calls, "passes": r.passes, "requests_per_run": r.requests_per_run,
            "outputs_match_normal_run": ok, "compare_worst": worst}


def _replays(per_call: list[int]) -> str:
    """Where a CUDA-graph run's allocations happened, per ``Run`` call."""
    later = sum(per_call[1:])
    return (f"{per_call[0] if per_call else 0} in the first Run call (warm-up runs and capture), "
            f"{'none' if later == 0 else later} in the {len(per_call) - 1} replays")


def _bound(model: Any, batch: int | None) -> Any:
    """``model`` with its symbolic batch dimension bound to ``batch``; ModelError (with the --batch hint) when
    an input is dynamic and ``batch`` is None."""
    from .ir.onnx_io import bind_batch
    inits = {t.name for t in model.graph.initializer}
    dynamic = any(not d.HasField("dim_value") or d.dim_value <= 0 for vi in model.graph.input if vi.name not in inits
                  for d in vi.type.tensor_type.shape.dim)
    return bind_batch(model, batch) if batch is not None or dynamic else model


def _randomness(model: Any) -> dict[str, Any]:
    """Which outputs of the reference depend on random nodes, and which random nodes lack a seed."""
    from .passes.random_ops import random_outputs, unseeded_random_nodes
    rnd = random_outputs(model)
    return {"random_outputs": sorted(rnd), "random_nodes": sorted({n for ns in rnd.values() for n in ns}),
            "unseeded_random_nodes": unseeded_random_nodes(model)}


def _predicted(plan_path: str, graph: str | None, device: str) -> dict[str, Any]:
    """The plan's predicted peak and cost; checked against ``graph`` (the training graph it was made for)
    when given, else by its own structure only (``plan_checked`` says which)."""
    from .ir.plan import read_plan
    from .passes.validate import simulate
    from .plancheck import check_plan
    plan = read_plan(plan_path)
    sim = check_plan(plan, graph, device=plan.device) if graph else simulate(plan)
    ideal = sum(u.cost for u in plan.units)
    return {"predicted_peak": sim.peak, "predicted_cost": sim.cost,
            "predicted_overhead": sim.cost / ideal if ideal else None, "budget": plan.budget,
            "plan_checked": graph}


def _check_mem_limit(rep: dict[str, Any], mem_limit: int) -> None:
    """RuntimeFailure unless the run stayed within ``mem_limit`` in all (a guard: the arena cap enforces it)."""
    peak = rep.get("measured_peak")
    if peak is None:
        raise RuntimeFailure(f"cannot check --mem-limit on {rep['device']}: the run's peak was not measured")
    if peak > mem_limit:
        raise RuntimeFailure(f"--mem-limit {format_size(mem_limit)} was not enforced on {rep['device']}: the "
                             f"run reached {format_size(peak)} ({peak} bytes)")
    cg = (rep.get("cuda_graph") or {}).get("measured_peak")
    if cg is not None and cg > mem_limit:
        raise RuntimeFailure(f"--mem-limit {format_size(mem_limit)} was not enforced with CUDA graph: the run "
                             f"reached {format_size(cg)} ({cg} bytes)")


def run_command(args: argparse.Namespace) -> int:
    from pathlib import Path

    from .outputs import check_readable
    for path in (args.model, args.compare, args.plan):
        if path is not None:
            check_readable(Path(path))
    from .cli import device_settings
    rep = run_graph(args.model, device=args.device, compare=args.compare, plan=args.plan, iters=args.iters,
                    mem_limit=args.mem_limit, use_plan_budget=not getattr(args, "no_cap", False),
                    batch=getattr(args, "batch", None),
                    settings=device_settings(args), cuda_graph=getattr(args, "cuda_graph", False))
    if args.json:
        print(json.dumps(rep, indent=2, default=float))
    else:
        print(format_run(rep))
    if rep.get("error"):
        raise RuntimeFailure(rep["error"])
    if args.mem_limit is not None:
        _check_mem_limit(rep, args.mem_limit)
    return 0


def format_run(rep: dict[str, Any]) -> str:
    lines = [f"{rep['model']} on {rep['device']}: median {1e3 * rep['median_seconds']:.2f} ms per iteration"]
    if rep.get("median_seconds_cuda_graph") is not None:
        lines[0] += f" ({1e3 * rep['median_seconds_cuda_graph']:.2f} ms with CUDA graph capture)"
    elif rep.get("cuda_graph_error"):
        lines[0] += " (CUDA graph capture failed on ONNX Runtime's arena)"
    cap = rep.get("mem_limit")
    budget = rep.get("budget")
    if rep["measured_peak"] is not None and rep.get("placement") == "remc":
        st = rep.get("placement_stats") or {}
        lines.append(f"  memory: measured {format_size(rep['measured_peak'])} ({rep['measured_peak']} bytes: remc's "
                     f"buffer's high-water mark plus {format_size(rep['outside_arena'])} outside it) vs predicted "
                     f"{format_size(rep['predicted_peak'])} ({rep['predicted_peak']} bytes: its layout's height); "
                     f"{st.get('planned', 0)} allocations at their planned address, {st.get('fallback', 0)} by best fit"
                     + (f"; layout {rep['layout_source']}" if rep.get("layout_source") else ""))
        if rep.get("layout_note"):
            lines.append(f"  note: {rep['layout_note']}")
    elif rep["measured_peak"] is not None:
        lines.append(f"  memory: measured {format_size(rep['measured_peak'])} ({rep['measured_peak']} bytes) vs "
                     f"predicted {format_size(rep['predicted_peak'])} ({rep['predicted_peak']} bytes), "
                     f"{format_size(rep['outside_arena'])} of it outside the arena ({rep['peak_method']}); the "
                     f"replayed arena needs a cap of {format_size(rep['predicted_held'])} ({rep['predicted_held']} "
                     f"bytes)")
    cg = rep.get("cuda_graph")
    if cg:
        lines.append(f"  with CUDA graph: measured {format_size(cg['measured_peak'])} ({cg['measured_peak']} bytes: "
                     f"remc's buffer in use, {cg['outputs_bound']} outputs bound at their planned offsets in it, plus "
                     f"the same {format_size(rep['outside_arena'])} outside) vs predicted "
                     f"{format_size(cg['predicted_peak'])} ({cg['predicted_peak']} bytes); {cg['planned']} of "
                     f"{cg['requests']} allocations at their planned address, {_replays(cg['requests_per_run'])}; "
                     f"outputs {'match' if cg['outputs_match_normal_run'] else 'DIFFER from'} the run without CUDA "
                     "graph")
    if rep["measured_peak"] is not None:
        where = "remc's buffer" if rep.get("placement") == "remc" else "a one-region arena"
        lim = [f"budget {format_size(budget)}" if budget is not None else "",
               f"ran under a cap of {format_size(cap)}" if cap is not None else
               f"no cap given: ran in {where} sized to the predicted need ({rep['predicted_held']} bytes in all)"
               if rep.get("cap_from_prediction") else "no cap"]
        lines.append("  " + ", ".join(x for x in lim if x))
    if rep.get("predicted_cost") is not None:
        lines.append(f"  predicted cost {rep['predicted_cost']:.4g} ({rep['predicted_overhead']:.3f}x of ideal); "
                     + (f"plan checked against {rep['plan_checked']}" if rep.get("plan_checked")
                        else "plan not checked against its graph (give --compare with the training graph)")
                     + ("" if rep.get("plan_matches_model") is not False else
                        "; the model records no plan (not written by remc compile): the plan gives the cap only"))
    if rep.get("outputs_match") is not None:
        lines.append(f"  outputs {'match' if rep['outputs_match'] else 'DIFFER from'} the reference "
                     f"({rep['compare_worst']}); time overhead {rep['measured_overhead']:.3f}x")
        if rep.get("random_outputs"):
            n_un = len(rep["unseeded_random_nodes"])
            seeded = f"{n_un} of them without a seed" if n_un else "all seeded"
            lines.append(f"  {len(rep['random_outputs'])} of the outputs depend on {len(rep['random_nodes'])} "
                         f"random node(s), {seeded}: {', '.join(rep['random_outputs'][:6])}"
                         f"{' ...' if len(rep['random_outputs']) > 6 else ''}")
    return "\n".join(lines)
