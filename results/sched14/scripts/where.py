"""Where the gap is: one strategy on one node-link graph at one ratio, a JSON line (cost, bound, source, wall, RSS).

    python results/gap13/scripts/where.py GRAPH RATIO STRATEGY SECONDS [--threads 1] [--gap G] [--out F]
"""
from __future__ import annotations

import argparse
import json
import math
import resource
import time

from remc.backends.strategies import make_options, solve
from remc.ir.nodelink import load_nodelink
from remc.ir.schedule import check, checkpoint_all, memory_profile


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("graph")
    ap.add_argument("ratio", type=float)
    ap.add_argument("strategy")
    ap.add_argument("seconds", type=float)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--gap", type=float, default=None)
    ap.add_argument("--copies", type=int, default=None)
    ap.add_argument("--out", default=None)
    a = ap.parse_args()
    dag = load_nodelink(a.graph)
    budget = math.ceil(a.ratio * checkpoint_all(dag).peak(dag))
    base = float(dag.cost.sum())
    row = dict(graph=a.graph.split("/")[-1], n=dag.n, ratio=a.ratio, budget=budget, strategy=a.strategy,
               seconds=a.seconds)
    kw = dict(time_limit=a.seconds, threads=a.threads)
    if a.gap is not None:
        kw["gap"] = a.gap
    if a.copies is not None:
        kw["copies"] = a.copies
    t0 = time.perf_counter()
    try:
        s = solve(a.strategy, dag, budget, make_options(a.strategy, **kw))
        row["wall"] = time.perf_counter() - t0
        rep = s.report
        assert not check(dag, s.R, s.S) and memory_profile(dag, s.R, s.S).max() <= budget
        row.update(status=rep.status, cost=rep.cost, over=100 * (rep.cost / base - 1),
                   bound=rep.bound, bound_over=None if rep.bound is None else 100 * (rep.bound / base - 1),
                   gap=rep.gap, source=rep.bound_source, gap_bound=rep.extras.get("gap_bound"),
                   rule=str(rep.extras.get("rule", rep.extras.get("from")))[:80])
    except Exception as e:  # noqa: BLE001
        row.update(status="error", error=f"{type(e).__name__}: {str(e)[:200]}")
    row.setdefault("wall", time.perf_counter() - t0)
    row["rss_mib"] = max(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
                         resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss) / 1024
    line = json.dumps(row)
    print(line, flush=True)
    if a.out:
        with open(a.out, "a") as f:
            f.write(line + "\n")


if __name__ == "__main__":
    main()
