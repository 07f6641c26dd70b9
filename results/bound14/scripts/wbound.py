"""The retention-gap Lagrangian (passes/bounds.py) beside the covering MILP cut into windows (passes/coverbound.py
``window_bound``, gap costs split by the Lagrangian's multipliers) on one graph at one ratio: a JSON line.

    python results/bound14/scripts/wbound.py GRAPH RATIO SECONDS [--depth 1] [--columns 12000] [--out F]

GRAPH: a node-link JSON file, or a zoo model name (paper size, ONNX-node granularity, as tools/bench_scale.py).
Budget = ceil(ratio x checkpoint-all's peak in the file's order). The Lagrangian: 2000 iterations, at most 60 s.
Max RSS: this process or its HiGHS children, whichever peaked higher.
"""
from __future__ import annotations

import argparse
import json
import math
import resource
import sys
import time
from pathlib import Path

from remc.backends.highs import HighsBackend
from remc.ir.nodelink import load_nodelink
from remc.ir.schedule import checkpoint_all
from remc.passes.bounds import gap_bound
from remc.passes.coverbound import build_cover, cut_windows, window_bound


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("graph")
    ap.add_argument("ratio", type=float)
    ap.add_argument("seconds", type=float)
    ap.add_argument("--depth", type=int, default=1)
    ap.add_argument("--columns", type=int, default=12000)
    ap.add_argument("--out", default=None)
    a = ap.parse_args()
    if a.graph.endswith(".json"):
        dag = load_nodelink(a.graph)
    else:
        sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "tools"))
        from bench_scale import _graph
        dag = _graph(a.graph, 0, 0)
    base = float(dag.cost.sum())
    budget = math.ceil(a.ratio * checkpoint_all(dag).peak(dag))
    row: dict = dict(graph=a.graph.split("/")[-1], n=dag.n, ratio=a.ratio, depth=a.depth, columns=a.columns)
    t = time.perf_counter()
    gb = gap_bound(dag, budget, iterations=2000, deadline=time.perf_counter() + 60)
    row.update(lag=100 * (gb.bound / base - 1), lag_s=time.perf_counter() - t,
               lag_kind="nested" if gb.nested else "strong" if gb.strong else "covering")
    cm = build_cover(dag, budget, depth=a.depth, max_columns=None)
    if cm is not None and not cm.infeasible:
        win = cut_windows(cm, a.columns)
        row.update(model_columns=cm.model.num_col, windows=len(win.bounds) - 1, rows_cut=int((win.row_win < 0).sum()),
                   rows=cm.model.num_row)
        del cm, win
    t = time.perf_counter()
    wb = window_bound(dag, budget, HighsBackend(), time_limit=a.seconds, threads=1, depth=a.depth,
                      window_columns=a.columns, lam=gb.lam, max_columns=None)
    row.update(win=100 * (wb.bound / base - 1) if math.isfinite(wb.bound) else None, win_s=time.perf_counter() - t,
               win_status=wb.status, win_note=wb.note)
    row["rss_mib"] = max(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
                         resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss) / 1024
    line = json.dumps(row)
    print(line, flush=True)
    if a.out:
        with open(a.out, "a") as f:
            f.write(line + "\n")


if __name__ == "__main__":
    main()
