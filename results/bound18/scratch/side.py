"""Which side is loose on a piece: checkmate (C s, the portfolio as the user runs it), then remc's exact MILP (eq. (9),
HiGHS, gap 0) from checkmate's schedule for T s. python side.py PIECE RATIO C T"""
import json, math, pickle, sys
from remc.backends.strategies import make_options, solve, solve_milp
from remc.ir.schedule import check, checkpoint_all
from remc.passes.milp_model import model_columns
name, ratio, C, T = sys.argv[1], float(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4])
dag = pickle.load(open(f"/tmp/bound18/{name}.pkl", "rb"))
base = float(dag.cost.sum()); budget = math.ceil(ratio * checkpoint_all(dag).peak(dag))
pct = lambda x: 100 * (x / base - 1)
row = dict(piece=name, n=dag.n, ratio=ratio, budget=budget, columns=model_columns(dag))
c = solve("checkmate", dag, budget, make_options("checkmate", time_limit=C, threads=1))
assert not check(dag, c.R, c.S) and c.peak(dag) <= budget
r = c.report
row.update(cm_status=r.status, cm=pct(r.cost), cm_bound=pct(r.bound), cm_source=r.bound_source, cm_gap=r.gap,
           cm_s=round(r.seconds, 1))
print(json.dumps(row), flush=True)
pickle.dump((c.R, c.S), open(f"/tmp/bound18/{name}_{ratio}_cm.pkl", "wb"))
m = solve_milp(dag, budget, incumbent=c, time_limit=T, threads=1, gap=0.0).report
row.update(milp_status=m.status, milp=pct(m.cost), milp_bound=pct(m.bound), milp_source=m.bound_source, milp_gap=m.gap,
           milp_s=round(m.seconds, 1))
print(json.dumps(row), flush=True)
