"""When each phase of checkmate's portfolio ends, on one node-link graph at one budget ratio (of the file's own
topological-order peak, Moccasin's protocol): the baselines, approx before CP-SAT, CP-SAT's C=2 model and each
bound round, the local search, and the result with the notes of its report.

    nice -n 10 python tools/checkmate_phases.py "../moccasin-src/data/MobileNet (MLSys)_512_(224, 224, 3)_train_nx.json" \
        --ratio 0.8 --time-limit 60
"""
from __future__ import annotations

import argparse
import math
import time

import remc.backends.cpsat as cpsat
import remc.backends.strategies as strategies
from remc.backends.strategies import make_options, solve
from remc.ir.nodelink import load_nodelink
from remc.ir.schedule import checkpoint_all


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("graph")
    p.add_argument("--ratio", type=float, default=0.8)
    p.add_argument("--time-limit", type=float, default=60.0)
    args = p.parse_args()
    dag = load_nodelink(args.graph)
    budget = math.ceil(checkpoint_all(dag).peak(dag) * args.ratio)
    base = dag.total_cost
    t0 = time.perf_counter()

    def timed(module, name: str) -> None:
        f = getattr(module, name)

        def wrapper(*a, **k):
            try:
                out = f(*a, **k)
            except Exception as e:
                print(f"{time.perf_counter() - t0:6.1f} s  {name} raised {type(e).__name__}: {e}", flush=True)
                raise
            print(f"{time.perf_counter() - t0:6.1f} s  {name} done", flush=True)
            return out
        setattr(module, name, wrapper)

    for name in ("best_baseline", "_stage_hint", "_approx_first", "cpsat_phase", "_refine"):
        timed(strategies, name)
    for name in ("solve_cpsat", "_bound_round"):
        timed(cpsat, name)
    s = solve("checkmate", dag, budget, make_options("checkmate", time_limit=args.time_limit))
    r = s.report
    print(f"{time.perf_counter() - t0:6.1f} s  checkmate {r.status}: +{100 * (s.cost(dag) / base - 1):.3f}%, gap "
          f"{100 * r.gap:.2f}% (bound from {r.bound_source})")
    for key in ("stage_search", "cover_bound", "cover_schedule", "approx", "cp_sat", "refine", "milp"):
        print(f"          {key}: {r.extras.get(key)}")


if __name__ == "__main__":
    main()
