"""The window bound (passes/windowbound.py) beside the retention-gap bound (passes/bounds.py) on one graph:
random layered DAGs (tools/layered.py) or zoo models at ONNX-node granularity, budget = ratio x the
checkpoint-all peak (as tools/bench_scale.py). Prints one JSON line per bound:

    nice -n 10 python tools/window_bound.py layered 1000 2 0.8 --seconds 120 [--mip] [--columns 40000]
    nice -n 10 python tools/window_bound.py gpt2 0 0 0.8 --seconds 120

Bounds as % over computing every unit once; each bound gets ``--seconds`` (the retention gaps: 2000
iterations or that time)."""
from __future__ import annotations

import argparse
import json
import resource
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("kind")
    ap.add_argument("size", type=int)
    ap.add_argument("seed", type=int)
    ap.add_argument("ratio", type=float)
    ap.add_argument("--seconds", type=float, default=120.0)
    ap.add_argument("--mip", action="store_true", help="each window as a MILP (its dual bound at the limit)")
    ap.add_argument("--columns", type=int, default=None, help="columns per window (default MAX_WINDOW_COLUMNS)")
    ap.add_argument("--window-seconds", type=float, default=20.0)
    a = ap.parse_args()
    from bench_scale import _graph

    from remc.backends.highs import HighsBackend
    from remc.ir.schedule import checkpoint_all
    from remc.passes.bounds import gap_bound
    from remc.passes.windowbound import MAX_WINDOW_COLUMNS, cut_windows, window_lp_bound
    dag = _graph(a.kind, a.size, a.seed)
    budget = int(a.ratio * checkpoint_all(dag).peak(dag))
    base = float(dag.cost.sum())
    name = f"layered n={a.size} seed={a.seed}" if a.kind == "layered" else f"{a.kind} (fine)"
    row = dict(graph=name, units=dag.n, ratio=a.ratio, budget=budget)
    t0 = time.perf_counter()
    gb = gap_bound(dag, budget, iterations=2000, deadline=t0 + a.seconds)
    print(json.dumps(dict(row, bound="retention gaps", bound_pct=100 * (gb.bound / base - 1),
                          seconds=time.perf_counter() - t0)), flush=True)
    wins = cut_windows(dag, a.columns or MAX_WINDOW_COLUMNS)
    t0 = time.perf_counter()
    wb = window_lp_bound(dag, budget, HighsBackend(), deadline=t0 + a.seconds, windows=wins, integral=a.mip,
                         window_seconds=a.window_seconds)
    rss = max(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
    print(json.dumps(dict(row, bound="windows " + ("MILP" if a.mip else "LP"), bound_pct=100 * (wb.bound / base - 1),
                          seconds=wb.seconds, windows=wb.windows, solved=wb.solved, gained=wb.gained, widest=wb.columns,
                          gains=[(x, y, round(100 * (g - o) / base, 6)) for x, y, g, o in wb.per_window][:8],
                          max_rss_mib=rss / 1024)), flush=True)


if __name__ == "__main__":
    main()
