import sys, time, dataclasses
import numpy as np
sys.path.insert(0, 'tests')
from _milp_dags import correct_schedules, exhaustive_optimum, least_peak, random_dag, training_graph
from remc.ir.schedule import memory_profile, checkpoint_all
def old_table(dag):
    rows = [(int(memory_profile(dag, R, S).max()), float(R.sum(axis=0) @ dag.cost)) for R, S in correct_schedules(dag)]
    return rows
rng = np.random.default_rng(int(sys.argv[1]))
pairs = 0; t_old = t_new = 0
for k in range(int(sys.argv[2])):
    kind = k % 4
    if kind == 0: dag = random_dag(int(rng.integers(3, 7)), rng, p=0.5, no_recompute=True, workspace=True, constant=3)
    elif kind == 1: dag = random_dag(int(rng.integers(3, 7)), rng, p=0.4)
    elif kind == 2: dag = training_graph(2, rng, workspace=True)
    else:
        dag = random_dag(5, rng, p=0.5)
        kept = rng.integers(0, 4, dag.n) * (rng.random(dag.n) < 0.5)
        dag = dataclasses.replace(dag, kept=kept, kept_first=(kept * rng.random(dag.n)).astype(np.int64))
    t0 = time.time(); rows = old_table(dag); t_old += time.time() - t0
    lp_old = min(p for p, _ in rows)
    t0 = time.time(); lp_new = least_peak(dag); t_new += time.time() - t0
    assert lp_old == lp_new, (k, lp_old, lp_new)
    for budget in range(max(p for p, _ in rows) + 1, lp_old - 2, -1):
        o = [c for p, c in rows if p <= budget]
        o = min(o) if o else None
        t0 = time.time(); nw = exhaustive_optimum(dag, budget); t_new += time.time() - t0
        assert (o is None and nw is None) or (o is not None and nw is not None and abs(o - nw) <= 1e-9 * max(1, abs(o))), (k, budget, o, nw)
        pairs += 1
print('ok', pairs, 'pairs', f'old {t_old:.1f}s new {t_new:.1f}s')
