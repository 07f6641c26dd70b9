"""approx and checkmate, side by side in one process, on budgets where the heuristics miss (issue #12 item 5):
the 40-unit random layered DAG of tests/test_feasible.py (``t40:6:3``: tests/test_evict.py's generator, n=40,
width 6, seed 3) or a node-link file, at a ratio of checkpoint-all's peak (Moccasin's protocol: ceil).
Prints one line per strategy: status, overhead, peak, wall seconds, and where the schedule came from.

    nice -n 10 python tools/hard_budgets.py t40:6:3 --ratio 0.8 --strategies approx,checkmate --time-limit 30
    nice -n 10 python tools/hard_budgets.py results/s12b/bench_moccasin_graphs/random_layered_n140_w0.3_nlv0.75_ed0.2_scd0.14_seed12.json \
        --ratio 0.8 --time-limit 60

Run it with another checkout's Python (e.g. main's virtual environment) for a before/after on the same
machine: it imports remc from whatever environment runs it.
"""
from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))


def _graph(spec: str):
    from remc.ir.nodelink import load_nodelink
    if spec.startswith("t") and ":" in spec and not Path(spec).exists():
        from test_evict import _layered
        n, w, seed = (int(x) for x in spec[1:].split(":"))
        return _layered(n, w, seed)
    return load_nodelink(spec)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("graph", help="tN:W:SEED (tests' layered generator) or a node-link JSON file")
    ap.add_argument("--ratio", type=float, default=0.8)
    ap.add_argument("--strategies", default="approx,checkmate")
    ap.add_argument("--time-limit", type=float, default=30.0)
    ap.add_argument("--threads", type=int, default=1)
    a = ap.parse_args()
    import remc
    from remc.backends.strategies import make_options, solve
    from remc.ir.schedule import checkpoint_all
    dag = _graph(a.graph)
    peak = checkpoint_all(dag).peak(dag)
    budget = math.ceil(a.ratio * peak) if a.graph.endswith(".json") else int(a.ratio * peak)
    print(f"remc from {Path(remc.__file__).parent.parent}; {a.graph}: {dag.n} units, checkpoint-all {peak} B, "
          f"budget {budget} B", flush=True)
    for name in a.strategies.split(","):
        t = time.perf_counter()
        try:
            s = solve(name, dag, budget, make_options(name, time_limit=a.time_limit, threads=a.threads))
            r = s.report
            ex = r.extras
            src = ex.get("rule") or ex.get("from")
            print(f"{name}: {r.status}, {100 * (s.cost(dag) / dag.total_cost - 1):+.2f}%, peak {s.peak(dag)} B, "
                  f"{time.perf_counter() - t:.1f} s; from {src}; feasibility: {ex.get('feasibility_milp') or ex.get('feasibility', '-')}",
                  flush=True)
        except Exception as e:  # noqa: BLE001 (the line says what failed)
            print(f"{name}: {type(e).__name__}: {str(e)[:300]} ({time.perf_counter() - t:.1f} s)", flush=True)


if __name__ == "__main__":
    main()
