"""Does ONNX Runtime's memory pattern (its own tensor placement) let a remc plan run under a tight arena cap?

For each zoo model (test size), the checkpoint-all graph (the unmodified graph, lowered) and approx plans at
the given fractions of checkpoint-all's replayed need are run on CPU in four session settings (``make_session``
``mem_pattern`` / ``mem_reuse``: ``--/--`` is remc's default). For each it prints:

- ``prof1``: the profiler's ``mem_in_use_peak`` over the first run (arena bytes, capped session at 1 TiB so
  the env arena is the one measured, as ``tools/arena_check.py`` does);
- ``blk2``: bytes in use before the second run's first node, less the first run's baseline: the pattern
  block the second run's execution frame allocated (0: no pattern used);
- ``prof2``: largest bytes in use after a node in the second run (no kernel scratch inside a node);
- ``base``: bytes in use before the first run's first node (weights ONNX Runtime pre-packed at session init);
- ``cap1``: least CPU arena cap (bisected, ``--res`` bytes) under which one run in a fresh session succeeds;
- ``cap2``: least cap under which two runs in one session succeed (the second run is the first one a
  pattern can serve); ``cap2s``: the same with arena shrinkage after each run
  (RunOptions ``memory.enable_memory_arena_shrinkage=cpu:0``), which frees the first run's empty regions;
- ``blk2@cap2``: ``blk2`` of two profiled runs under the cap ``cap2`` (0: the second run fell back to
  allocating each tensor, as ONNX Runtime does when the pattern block does not fit; ``oom``: this repeat ran
  out of memory under the cap its probe fit);
- ``cap1r``: ``cap1`` with one arena region of the whole cap (``OrtArenaCfg`` ``initial_chunk_size_bytes`` =
  cap and growth by powers of two, as ``runtime.register_cuda_arena`` does on CUDA;
  kSameAsRequested ignores the initial chunk size), so frees coalesce instead of staying split across
  regions: placement by the BFC arena's best fit inside one block, for comparison;
- ``capblk``: least cap under which two runs succeed and the second one runs from the pattern block
  (``blk2`` > 0 under that cap); settings without a pattern show ``-``;
- remc's side, once per graph: the plan's live peak (``sim.peak``, constants included), the replayed
  arena's least limit (``predict().arena``) and in-use peak, the bytes outside the arena, and ``outs``: the
  bytes of the graph outputs (ONNX Runtime allocates them outside the pattern block).

    python tools/mem_pattern_probe.py [--models resnet50,unet,mobilenet_v2] [--fractions 0.8,0.6] [--res 16384]
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import tempfile
from collections.abc import Callable, Mapping

import numpy as np
import onnx
import onnxruntime as ort

from remc import zoo
from remc.backends import runtime
from remc.backends.strategies import make_options
from remc.fit import predict
from remc.ir.errors import RemcError
from remc.ir.onnx_types import static_types
from remc.pipeline import State, compile_pipeline, run, stages

SETTINGS = ((False, False), (True, False), (True, True), (False, True))
"""(mem_pattern, mem_reuse) pairs; the first is remc's default."""

BIG = 1 << 40


def _label(pattern: bool, reuse: bool) -> str:
    return ("pat" if pattern else "--") + "/" + ("reuse" if reuse else "--")


def _runs(model: onnx.ModelProto, feeds: Mapping[str, np.ndarray], limit: int, pattern: bool, reuse: bool,
          runs: int, shrink: bool, profile_dir: str | None = None, one_region: bool = False) -> ort.InferenceSession:
    """A session under an arena cap of ``limit`` that has run ``runs`` times (raises OutOfMemory); regions of
    the requested size unless ``one_region`` (``runtime.register_cpu_arena``)."""
    sess = runtime.make_session(model, "cpu", mem_limit=limit, mem_pattern=pattern, mem_reuse=reuse,
                                arena_extend=None if one_region else "kSameAsRequested",
                                profile=profile_dir is not None,
                                profile_prefix=os.path.join(profile_dir, "ort") if profile_dir else None)
    runner = runtime.Runner(sess, feeds, "cpu", mem_limit=limit)
    ro = ort.RunOptions()
    if shrink:
        ro.add_run_config_entry("memory.enable_memory_arena_shrinkage", "cpu:0")
    for _ in range(runs):
        runner(ro)
    return sess


def least_cap(fits: Callable[[int], bool], res: int, start: int = 1 << 20) -> int:
    """Least limit (within ``res``) for which ``fits`` holds, by doubling then bisection."""
    lo, hi = 0, start
    while not fits(hi):
        lo, hi = hi, hi * 2
        if hi > BIG:
            raise RemcError("no cap up to 1 TiB fits")
    while hi - lo > res:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if fits(mid) else (mid, hi)
    return hi


def _fits(model, feeds, pattern, reuse, runs, shrink, one_region: bool = False) -> Callable[[int], bool]:
    def f(limit: int) -> bool:
        try:
            _runs(model, feeds, limit, pattern, reuse, runs, shrink, one_region=one_region)
            return True
        except runtime.OutOfMemory:
            return False
    return f


def _fits_block(model, feeds, reuse) -> Callable[[int], bool]:
    def f(limit: int) -> bool:
        try:
            return profile_two_runs(model, feeds, True, reuse, limit)["blk2"] > 0
        except runtime.OutOfMemory:
            return False
    return f


def profile_two_runs(model, feeds, pattern: bool, reuse: bool, limit: int = BIG) -> dict[str, int]:
    """Profiler stats of two runs in one session under an arena cap of ``limit`` (default: effectively none)."""
    tmp = tempfile.mkdtemp(prefix="remc-mp-")
    try:
        sess = _runs(model, feeds, limit, pattern, reuse, 2, False, profile_dir=tmp)
        with open(sess.end_profiling()) as f:
            events = json.load(f)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    nodes = sorted((e for e in events if e.get("cat") == "Node" and str(e.get("name", "")).endswith("_kernel_time")
                    and "mem_in_use_peak" in e.get("args", {})), key=lambda e: e["ts"])
    half = len(nodes) // 2
    r1, r2 = nodes[:half], nodes[half:]
    a1, a2 = r1[0]["args"], r2[0]["args"]
    base1 = int(a1["mem_bytes_in_use"]) - int(a1.get("mem_in_use_delta", 0))
    start2 = int(a2["mem_bytes_in_use"]) - int(a2.get("mem_in_use_delta", 0))
    return {"prof1": max(int(e["args"]["mem_in_use_peak"]) for e in r1),
            "blk2": start2 - base1,
            "prof2": max(int(e["args"]["mem_bytes_in_use"]) for e in r2),
            "base": base1}


def graphs(name: str, fractions: list[float], time_limit: float) -> list[tuple[str, onnx.ModelProto, State]]:
    """(label, lowered graph, pipeline state) for checkpoint-all and approx at each fraction."""
    cfg = dict(zoo.small_config(name))
    b = cfg.pop("batch")
    train = zoo.export(name, b, train=True, **cfg)
    full = run(compile_pipeline(strategy="checkpoint-all", device="cpu"), State(model=train, budget=1 << 60))
    total = predict(full.lowered, "cpu").total
    out = [("checkpoint-all", full.lowered, full)]
    for frac in fractions:
        passes = compile_pipeline(strategy="approx", device="cpu", options=make_options("approx", time_limit=time_limit))
        st = run(stages(passes, last="units"), State(model=train))
        st.budget = int(frac * total)
        try:
            run(stages(passes, first="schedule"), st)
        except RemcError as e:
            print(f"# {name} approx@{frac}: {e}", flush=True)
            continue
        out.append((f"approx@{frac}", st.lowered, st))
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--models", default="resnet50,unet,mobilenet_v2")
    ap.add_argument("--fractions", default="0.8,0.6")
    ap.add_argument("--res", type=int, default=16 << 10)
    ap.add_argument("--time-limit", type=float, default=20.0)
    a = ap.parse_args()
    fr = [float(x) for x in a.fractions.split(",")]
    kib = 1 << 10
    print(f"# KiB; onnxruntime {ort.__version__} CPU; caps bisected to {a.res // kib} KiB")
    print("| model | graph | budget | live peak | replay arena | replay in-use | outside | outs | setting | base | prof1 | blk2 "
          "| prof2 | cap1 | cap2 | cap2s | cap1r | blk2@cap2 | capblk |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for name in a.models.split(","):
        for label, low, st in graphs(name, fr, a.time_limit):
            p = predict(low, "cpu")
            feeds = runtime.random_inputs(low, 0)
            types = static_types(low)
            outs = sum(types[o.name].nbytes for o in low.graph.output)
            budget = "-" if label == "checkpoint-all" else f"{st.budget // kib}"
            for pattern, reuse in SETTINGS:
                pr = profile_two_runs(low, feeds, pattern, reuse)
                caps = [least_cap(_fits(low, feeds, pattern, reuse, runs, shrink), a.res)
                        for runs, shrink in ((1, False), (2, False), (2, True))]
                caps.append(least_cap(_fits(low, feeds, pattern, reuse, 1, False, one_region=True), a.res))
                try:
                    under = str(profile_two_runs(low, feeds, pattern, reuse, caps[1])["blk2"] // kib) if pattern else "-"
                except runtime.OutOfMemory:
                    under = "oom"  # the cap's probe fit, this profiled repeat did not (runs are not bit-exact in memory)
                blk = str(least_cap(_fits_block(low, feeds, reuse), a.res) // kib) if pattern else "-"
                print(f"| {name} | {label} | {budget} | {int(st.sim.peak) // kib} | {p.arena // kib} | "
                      f"{p.in_use_peak // kib} | {p.outside // kib} | {outs // kib} | {_label(pattern, reuse)} | "
                      f"{pr['base'] // kib} | {pr['prof1'] // kib} | "
                      f"{pr['blk2'] // kib} | {pr['prof2'] // kib} | " + " | ".join(str(c // kib) for c in caps) + f" | {under} | {blk} |",
                      flush=True)


if __name__ == "__main__":
    main()
