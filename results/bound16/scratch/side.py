"""Which side is loose on a ResNet50 fine piece small enough for CP-SAT: the Lagrangian (2000 iterations), approx alone
(A s) and checkmate (C s) on the pickled piece at RATIO. python side.py PIECE RATIO A C"""
import json, math, pickle, sys, time
from remc.backends.strategies import make_options, solve
from remc.ir.schedule import check, checkpoint_all
from remc.passes.bounds import gap_bound
name, ratio, A, C = sys.argv[1], float(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4])
dag = pickle.load(open(f"/tmp/bound16/{name}.pkl", "rb"))
base = float(dag.cost.sum()); budget = math.ceil(ratio * checkpoint_all(dag).peak(dag))
pct = lambda x: 100 * (x / base - 1)
row = dict(piece=name, n=dag.n, ratio=ratio, budget=budget)
t = time.perf_counter(); gb = gap_bound(dag, budget, iterations=2000)
row.update(lag=pct(gb.bound), lag_kind=gb.kind, lag_s=round(time.perf_counter() - t, 1))
a = solve("approx", dag, budget, make_options("approx", time_limit=A, threads=1))
row.update(approx=pct(a.report.cost), approx_s=round(a.report.seconds, 1))
c = solve("checkmate", dag, budget, make_options("checkmate", time_limit=C, threads=1))
assert not check(dag, c.R, c.S) and c.peak(dag) <= budget
r = c.report
row.update(cm_status=r.status, cm=pct(r.cost), cm_bound=pct(r.bound), cm_source=r.bound_source, cm_gap=r.gap,
           cm_s=round(r.seconds, 1))
print(json.dumps(row), flush=True)
