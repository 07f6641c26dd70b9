"""Time and peak RSS of each stage of `remc compile`, as cmd_compile runs them (one fit round).

Prints one line per stage: seconds, the process's RSS after it and its peak RSS so far (MiB). The arena
fit's ``predict`` is split into its steps (kernel memory, graph events, least limit, replay). Example:

    nice -n 10 python tools/compile_stages.py r50_b32.onnx --budget 2GiB --strategy approx --time-limit 30
"""
from __future__ import annotations

import argparse
import dataclasses
import resource
import tempfile
import time
from pathlib import Path

from remc.backends import runtime
from remc.backends.scratch import kernel_memory
from remc.cli import _size, resolve_cost
from remc.ir.onnx_io import save_model
from remc.passes.arena import graph_events, least_limit, replay
from remc.passes.strategies import STRATEGIES
from remc.pipeline import State, compile_pipeline, run


def _rss_mib() -> tuple[float, float]:
    """Current and peak RSS of this process, MiB."""
    with open("/proc/self/statm") as f:
        cur = int(f.read().split()[1]) * resource.getpagesize()
    return cur / 2**20, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("model")
    ap.add_argument("--budget", required=True, type=_size)
    ap.add_argument("--strategy", default="approx", choices=STRATEGIES)
    ap.add_argument("--granularity", default="fine")
    ap.add_argument("--cost", default="auto")
    ap.add_argument("--time-limit", type=float, default=30.0)
    a = ap.parse_args()
    from remc.backends.strategies import make_options
    opts = make_options(a.strategy, time_limit=a.time_limit)
    total = time.perf_counter()

    def line(name: str, secs: float) -> None:
        cur, peak = _rss_mib()
        print(f"{name:<16} {secs:8.2f} s  rss {cur:8.0f} MiB  peak {peak:8.0f} MiB", flush=True)

    passes = compile_pipeline(cost=resolve_cost(a.cost, "cpu"), granularity=a.granularity, strategy=a.strategy,
                              options=opts)
    state = State(model=a.model, budget=a.budget)
    run(passes, state, on_pass=lambda p, st: line(p.name, st.timings[p.name]))
    t0 = time.perf_counter()
    km = kernel_memory(state.lowered, "cpu")
    line("fit:kernel-mem", time.perf_counter() - t0)
    t0 = time.perf_counter()
    ev = graph_events(state.lowered, "cpu", km)
    line("fit:events", time.perf_counter() - t0)
    cfg = runtime.arena_config("cpu")
    t0 = time.perf_counter()
    need = least_limit(ev, cfg)
    line("fit:least-limit", time.perf_counter() - t0)
    t0 = time.perf_counter()
    replay(ev, dataclasses.replace(cfg, limit=need))
    line("fit:replay", time.perf_counter() - t0)
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory() as d:
        save_model(state.lowered, Path(d) / "out.onnx", data_dir=Path(a.model).parent)
    line("save", time.perf_counter() - t0)
    line("total", time.perf_counter() - total)
    print(f"arena need {need} bytes, budget {a.budget}, live peak {state.sim.peak if state.sim else None}")


if __name__ == "__main__":
    main()
