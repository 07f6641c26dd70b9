"""Where the gap comes from: each lower bound remc has, side by side, against the best known cost (issue #12
item 2). For a graph and a ratio (budget = ceil(ratio x checkpoint-all's peak), Moccasin's protocol) it
prints, as % over computing every unit once: the covering retention-gap bound, the strong one
(passes/bounds.py), the LP relaxation of eq. (9) at the budget (approx's, dense rows, HiGHS dual simplex,
when it has at most --max-lp-columns columns), and the best known cost given with --best (e.g. a proven
optimum from BENCHMARKS.md). "closes" = bound overhead / best overhead: the share of the overhead the bound
proves (1 = no gap).

    nice -n 10 python tools/bound_sources.py --graph ../moccasin-src/data/random_layered_n100_w0.27_nlv0.75_ed0.2_scd0.14.json \
        --ratio 0.8 --best 2.296
    nice -n 10 python tools/bound_sources.py --layered 1000:2 --ratio 0.9
"""
from __future__ import annotations

import argparse
import json
import math
import resource
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from layered import layered_dag  # noqa: E402

from remc.backends.highs import HighsBackend  # noqa: E402
from remc.ir.nodelink import load_nodelink  # noqa: E402
from remc.ir.schedule import checkpoint_all  # noqa: E402
from remc.passes.approx import _Relaxation  # noqa: E402
from remc.passes.bounds import gap_bound  # noqa: E402
from remc.passes.milp_model import model_columns  # noqa: E402


def _pct(bound: float, base: float) -> float:
    return 100.0 * (bound / base - 1.0)


def measure(dag, ratio: float, best: float | None, lp_seconds: float, max_lp_columns: int, label: str) -> dict:
    base = float(dag.total_cost)
    budget = math.ceil(checkpoint_all(dag).peak(dag) * ratio)
    row: dict = dict(graph=label, n=dag.n, ratio=ratio, budget=budget, best=best)
    for name, strong in (("covering", False), ("strong", True)):
        t = time.perf_counter()
        b = gap_bound(dag, budget, iterations=2000, strong=strong)
        row[name] = _pct(b.bound, base)
        row[f"{name}_s"] = time.perf_counter() - t
    cols = model_columns(dag)
    row["lp_columns"] = cols
    if cols <= max_lp_columns:
        t = time.perf_counter()
        relax = _Relaxation(dag, budget, "tight", HighsBackend(), 1, time.perf_counter() + lp_seconds)
        try:
            sol = relax.at(budget)
            row["lp"] = None if sol is None else _pct(sol.bound, base)
            row["lp_status"] = "optimal" if sol is not None else "infeasible"
        except Exception as e:  # a stopped LP: its proven bound when it has one
            row["lp"] = _pct(e.bound, base) if math.isfinite(getattr(e, "bound", -math.inf)) else None
            row["lp_status"] = str(e)[:80]
        row["lp_s"] = time.perf_counter() - t
    row["max_rss_mib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return row


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--graph", help="a node-link JSON file (Moccasin's dialect)")
    ap.add_argument("--layered", help="N:SEED, tools/layered.py with width 10")
    ap.add_argument("--ratio", type=float, required=True)
    ap.add_argument("--best", type=float, help="best known cost, %% over computing every unit once")
    ap.add_argument("--lp-seconds", type=float, default=120.0)
    ap.add_argument("--max-lp-columns", type=int, default=500_000)
    a = ap.parse_args()
    if a.graph:
        dag, label = load_nodelink(a.graph), Path(a.graph).stem[:40]
    else:
        n, seed = (int(x) for x in a.layered.split(":"))
        dag, label = layered_dag(n, 10, seed), f"layered n={n} seed={seed}"
    row = measure(dag, a.ratio, a.best, a.lp_seconds, a.max_lp_columns, label)
    if a.best:
        for k in ("covering", "strong", "lp"):
            if row.get(k) is not None:
                row[f"{k}_closes"] = row[k] / a.best
    print(json.dumps(row), flush=True)


if __name__ == "__main__":
    main()
