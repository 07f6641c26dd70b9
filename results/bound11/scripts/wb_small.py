"""Small graphs: the exact optimum (remc's MILP, optimal) beside the retention-gap bound and the window bound
(LP and MILP windows of 3 and 6 stages, and one window over every stage as an LP = eq. (9)'s LP relaxation).
Bounds as % over computing each unit once. Usage: python results/bound11/scripts/wb_small.py"""
import sys
sys.path.insert(0, 'tests'); sys.path.insert(0, 'tools')
import numpy as np
from _milp_dags import training_graph
from layered import layered_dag
from remc.backends.highs import HighsBackend
from remc.backends.strategies import solve_milp
from remc.ir.schedule import checkpoint_all
from remc.passes.bounds import gap_bound
from remc.passes.windowbound import cut_windows, window_lp_bound
rng = np.random.default_rng(7)
H = HighsBackend()
graphs = [(f"training L={L}", training_graph(L, rng, skips=((0, L - 2), (1, L - 3)))) for L in (8, 10, 12)]
graphs += [(f"layered n={n} seed={s}", layered_dag(n, 10, s)) for n, s in ((30, 0), (40, 1), (40, 2))]
print("| graph | units | ratio | optimum | retention gaps | windows LP 3 | windows MILP 3 | windows MILP 6 | eq. (9) LP |")
print("|---|---|---|---|---|---|---|---|---|")
for name, dag in graphs:
    base = float(dag.cost.sum())
    pct = lambda v: f"+{100 * (v / base - 1):.2f}%"
    for ratio in (0.7, 0.8, 0.9):
        budget = int(ratio * checkpoint_all(dag).peak(dag))
        try:
            s = solve_milp(dag, budget, time_limit=60)
        except Exception as e:  # noqa: BLE001
            print(f"| {name} | {dag.n} | {ratio} | {type(e).__name__} | | | | | |", flush=True)
            continue
        opt = f"{pct(s.report.cost)}" + ("" if s.report.status == "optimal" else f" ({s.report.status}, bound {pct(s.report.bound)})")
        gb = gap_bound(dag, budget, iterations=2000).bound
        w = [window_lp_bound(dag, budget, H, windows=cut_windows(dag, 10**9, k), integral=i).bound
             for k, i in ((3, False), (3, True), (6, True), (dag.n, False))]
        ok = all(v <= s.report.cost * (1 + 1e-9) for v in [gb, *w]) if s.report.status == "optimal" else "n/a"
        print(f"| {name} | {dag.n} | {ratio} | {opt} | {pct(gb)} | " + " | ".join(pct(v) for v in w) + f" |  <!-- all <= optimum: {ok} -->", flush=True)
