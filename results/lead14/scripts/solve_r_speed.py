import sys, time, numpy as np
sys.path.insert(0, "/work/wt/lead/tools"); sys.path.insert(0, "/work/wt/lead/tests")
from remc.ir import schedule as sc
from _milp_dags import layered_dag
def old_solve_r(dag, S):
    n = dag.n; S = np.asarray(S, dtype=bool); R = np.eye(n, dtype=bool); R[:-1] |= S[1:] & ~S[:-1]; preds = dag.preds
    for t in range(n):
        row, have = R[t], S[t]
        for k in range(t, -1, -1):
            if row[k]:
                p = preds[k]; row[p[~have[p]]] = True
    return R
rng = np.random.default_rng(0)
for trial in range(300):
    n = int(rng.integers(2, 60))
    dag = layered_dag(n, int(rng.integers(1, 6)), int(rng.integers(1000)))
    S = np.tril(rng.random((dag.n, dag.n)) < rng.random(), -1)
    assert (old_solve_r(dag, S) == sc.solve_r(dag, S)).all()
from bench_scale import _graph
dag = _graph("resnet50", 0, 0)
S = sc.checkpoint_all(dag).S
for name, f in (("old", old_solve_r), ("new", sc.solve_r)):
    t = time.perf_counter(); R = f(dag, S & (rng.random(S.shape) < 0.9)); print(name, time.perf_counter() - t)
print("ok")
from remc.passes.strategies import solve_baseline_strategy
from remc.ir.schedule import checkpoint_all
from remc.backends.strategies import make_options
b = int(0.85 * checkpoint_all(dag).peak(dag))
s = solve_baseline_strategy("lin-sqrtn", dag, b, make_options("lin-sqrtn"))
print("computed per row", s.R.sum() / dag.n)
for name, f in (("old", old_solve_r), ("new", sc.solve_r)):
    t = time.perf_counter(); R = f(dag, s.S); print(name, time.perf_counter() - t, (R == s.R).all())
