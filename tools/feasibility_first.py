"""Feasibility first (issue #12 item 5): on random layered DAGs (tools/layered.py) at tight budgets, which
phase of approx's stage search finds a schedule within the budget at all. Per case, side by side in one
process: the best baseline, the eviction pass over its settings and the stage search's repair from
checkpoint-all (what approx ran before), and the least-memory starts (``stagesearch.least_memory``: values
kept only shortly before their reads, repaired), each with ``--seconds``. Also the proven lower bound on the
least budget (``simple_lower_bound``) and the least peak seen. Run with nice, write the table to a file:

    nice -n 10 python tools/feasibility_first.py --sizes 100,150,250 --seeds 1,2,3,4 --ratios 0.8,0.7 \
        --seconds 20 > results/feasibility_first.md
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from layered import layered_dag  # noqa: E402

from remc.ir.schedule import checkpoint_all  # noqa: E402
from remc.passes.evict import VARIANTS, evict_schedule  # noqa: E402
from remc.passes.milp_model import simple_lower_bound  # noqa: E402
from remc.passes.stagesearch import StageState, least_memory, repair  # noqa: E402
from remc.passes.strategies import best_baseline  # noqa: E402


def _pct(cost: float, base: float) -> str:
    return f"+{100 * (cost / base - 1):.1f}%"


def case(n: int, seed: int, ratio: float, seconds: float) -> str:
    """One table row."""
    dag = layered_dag(n, 10, seed)
    base = float(dag.cost.sum())
    budget = int(ratio * checkpoint_all(dag).peak(dag))
    t0 = time.perf_counter()
    bl = best_baseline(dag, budget, deadline=t0 + seconds)
    bl_txt = "none" if bl is None else _pct(bl.cost(dag), base)
    t0 = time.perf_counter()
    old, end = None, t0 + seconds
    for w, c, net in VARIANTS:
        st = evict_schedule(dag, budget, deadline=end, weight=w, closure=c, net=net)
        if st is not None and (old is None or st.total_cost() < old.total_cost()):
            old = st
    rep = StageState(dag, budget, checkpoint_all(dag).S)
    if repair(rep, end) and (old is None or rep.total_cost() < old.total_cost()):
        old = rep
    t_old = time.perf_counter() - t0
    t0 = time.perf_counter()
    new, least = least_memory(dag, budget, deadline=t0 + seconds)
    t_new = time.perf_counter() - t0
    return (f"| {n} | {seed} | {ratio} | {budget} | {simple_lower_bound(dag)} | {bl_txt} | "
            f"{'none' if old is None else _pct(old.total_cost(), base)} ({t_old:.1f} s) | "
            f"{'none' if new is None else _pct(new.total_cost(), base)} ({t_new:.1f} s) | {least} |")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="100,150,250")
    ap.add_argument("--seeds", default="1,2,3,4")
    ap.add_argument("--ratios", default="0.8,0.7")
    ap.add_argument("--seconds", type=float, default=20.0)
    a = ap.parse_args()
    print("| n | seed | ratio | budget | proven least-budget bound | best baseline | eviction + repair "
          "(before) | least-memory starts (new) | least peak seen |")
    print("|---|---|---|---|---|---|---|---|---|")
    for n in (int(x) for x in a.sizes.split(",")):
        for seed in (int(x) for x in a.seeds.split(",")):
            for ratio in (float(x) for x in a.ratios.split(",")):
                print(case(n, seed, ratio, a.seconds), flush=True)


if __name__ == "__main__":
    main()
