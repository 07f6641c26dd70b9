"""Where the gap is at ONNX-node granularity: on a cut-down fine graph (fine_graphs.CUTS), approx's
schedule, the best proven result of a long solve (checkmate, or the cpsat strategy), and the retention-gap
bound, each as % over computing each unit once. One JSON line per (cut, ratio) to stdout.

    nice -n 10 python results/sched12/scripts/gap_where.py CUT RATIO [--approx 60] [--long 300] [--long-strategy checkmate]
"""
from __future__ import annotations

import argparse
import json
import resource
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from fine_graphs import fine_dag  # noqa: E402

from remc.backends.strategies import make_options, solve  # noqa: E402
from remc.ir.schedule import check, checkpoint_all, memory_profile  # noqa: E402
from remc.passes.bounds import gap_bound  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("cut")
    ap.add_argument("ratio", type=float)
    ap.add_argument("--approx", type=float, default=60)
    ap.add_argument("--long", type=float, default=300)
    ap.add_argument("--long-strategy", default="checkmate")
    ap.add_argument("--settings", nargs="*", default=[])
    a = ap.parse_args()
    dag = fine_dag(a.cut)
    budget = int(a.ratio * checkpoint_all(dag).peak(dag))
    base = float(dag.cost.sum())
    pct = lambda c: 100 * (c / base - 1)  # noqa: E731
    row = dict(cut=a.cut, units=dag.n, ratio=a.ratio, budget=budget)
    t0 = time.perf_counter()
    gb = gap_bound(dag, budget, iterations=2000).bound
    row.update(gap_bound_pct=pct(gb), gap_bound_s=time.perf_counter() - t0)
    for name, strat, tl in (("approx", "approx", a.approx), ("long", a.long_strategy, a.long)):
        if tl <= 0:
            continue
        t0 = time.perf_counter()
        try:
            s = solve(strat, dag, budget, make_options(strat, time_limit=tl, threads=1))
        except Exception as e:  # noqa: BLE001
            row[name] = dict(error=f"{type(e).__name__}: {str(e)[:200]}")
            continue
        assert not check(dag, s.R, s.S) and memory_profile(dag, s.R, s.S).max() <= budget
        r = s.report
        cost = r.cost if r.cost is not None else s.cost(dag)
        bnd = r.bound if r.bound is not None else base
        row[name] = dict(strategy=strat, status=r.status, cost_pct=pct(cost), bound_pct=pct(bnd),
                         bound_source=r.bound_source, gap=r.gap, s=time.perf_counter() - t0,
                         rule=r.extras.get("rule", r.extras.get("from")))
        print(json.dumps(row), file=sys.stderr, flush=True)
    row["max_rss_mib"] = max(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
                             resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss) / 1024
    print(json.dumps(row), flush=True)


if __name__ == "__main__":
    main()
