"""Which exact model finds a first schedule within a tight budget sooner: HiGHS on the zero-objective MILP
(passes/feasible.py) or CP-SAT's retention-interval model (backends/cpsat.py) with no objective, stopped at
its first solution (C computations per unit at most). Run on the random layered DAGs of tests/test_evict.py
(small widths, sizes in bytes) at budgets where every heuristic misses: the baselines, the eviction pass and
the least-memory starts (passes/stagesearch.py). Last column: CP-SAT's least-memory model (``cpsat_first``:
capacity a variable above the budget, minimized from checkpoint-all), what the race of passes/feasible.py
runs. All with 1 worker, one after the other, same process.

    nice -n 10 python tools/feasibility_exact.py --sizes 30,40,50 --widths 4,6 --seeds 0-5 --ratios 0.75,0.8 \
        --seconds 30 > results/s12b/feasibility_exact.md
"""
from __future__ import annotations

import argparse
import math
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from test_evict import _layered  # noqa: E402

from remc.backends.cpsat import cpsat_first  # noqa: E402
from remc.backends.highs import HighsBackend  # noqa: E402
from remc.ir.schedule import checkpoint_all  # noqa: E402
from remc.passes.evict import evict_search  # noqa: E402
from remc.passes.feasible import find_feasible  # noqa: E402
from remc.passes.stagesearch import least_memory  # noqa: E402
from remc.passes.strategies import best_baseline  # noqa: E402


def cpsat_hard(dag, budget: int, copies: int, seconds: float) -> tuple[str, float, float | None]:
    """CP-SAT's first schedule with at most ``copies`` computations per unit: (status, seconds, cost)."""
    from ortools.sat.python import cp_model

    from remc.backends.cpsat import _build, _extract

    t0 = time.perf_counter()
    n = dag.n
    g = math.gcd(*(int(x) for x in dag.mem), *(int(x) for x in dag.workspace), 0) or 1
    mem = [int(x) // g for x in dag.mem]
    ws = [int(x) // g for x in dag.workspace]
    cap = (budget - dag.constant) // g
    cps = [1 if dag.no_recompute[v] else max(1, min(copies, n - v)) for v in range(n)]
    m, pres, start, end, serve, level = _build(cp_model, dag, cps, mem, ws, cap, cap)
    s = cp_model.CpSolver()
    s.parameters.max_time_in_seconds = seconds
    s.parameters.num_workers = 1
    s.parameters.stop_after_first_solution = True
    st = s.Solve(m)
    dt = time.perf_counter() - t0
    if st in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        sched = _extract(s, dag, cps, pres, start, serve)
        if sched.peak(dag) <= budget:
            return "found", dt, sched.cost(dag)
        return "over budget (bug)", dt, None
    return s.StatusName(st).lower(), dt, None


def _range(text: str) -> list[int]:
    if "-" in text:
        a, b = text.split("-")
        return list(range(int(a), int(b) + 1))
    return [int(x) for x in text.split(",")]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="40")
    ap.add_argument("--widths", default="6")
    ap.add_argument("--seeds", default="0-5")
    ap.add_argument("--ratios", default="0.8")
    ap.add_argument("--seconds", type=float, default=30.0)
    ap.add_argument("--copies", default="2,3", help="hard-capacity CP-SAT models to run ('' for none)")
    a = ap.parse_args()
    copies = _range(a.copies) if a.copies else []
    print("| n | width | seed | ratio | budget | HiGHS zero-objective MILP | "
          + " | ".join(f"CP-SAT C={c}" for c in copies) + " | CP-SAT least memory (C=3) |")
    print("|---|---|---|---|---|---|" + "---|" * (len(copies) + 1))
    for n in _range(a.sizes):
        for w in _range(a.widths):
            for seed in _range(a.seeds):
                dag = _layered(n, w, seed)
                for ratio in (float(r) for r in a.ratios.split(",")):
                    budget = int(ratio * checkpoint_all(dag).peak(dag))
                    if best_baseline(dag, budget) is not None or evict_search(dag, budget) is not None \
                            or least_memory(dag, budget)[0] is not None:
                        continue  # a heuristic fits: not a case for the exact phase
                    f = find_feasible(dag, budget, HighsBackend(), time_limit=a.seconds, threads=1)
                    cells = [f"{f.status} {f.seconds:.1f} s"
                             + ("" if f.schedule is None else f" (+{f.schedule.cost(dag) / dag.total_cost - 1:.0%})")]
                    for c in copies:
                        st, dt, cost = cpsat_hard(dag, budget, c, a.seconds)
                        cells.append(f"{st} {dt:.1f} s" + ("" if cost is None else f" (+{cost / dag.total_cost - 1:.0%})"))
                    t = time.perf_counter()
                    lm = cpsat_first(dag, budget, a.seconds, threading.Event())
                    cells.append(f"{'found' if lm is not None else 'none'} {time.perf_counter() - t:.1f} s"
                                 + ("" if lm is None else f" (+{lm.cost(dag) / dag.total_cost - 1:.0%})"))
                    print(f"| {n} | {w} | {seed} | {ratio:g} | {budget} | " + " | ".join(cells) + " |", flush=True)


if __name__ == "__main__":
    main()
