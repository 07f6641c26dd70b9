"""remc's MILP (eq. (9), HiGHS) on a pickled piece at RATIO for T s, from approx's schedule (A s): does it prove it?
python milp_piece.py PIECE RATIO A T"""
import json, math, pickle, sys
from remc.backends.strategies import make_options, solve, solve_milp
from remc.ir.schedule import checkpoint_all
from remc.passes.milp_model import model_columns
name, ratio, A, T = sys.argv[1], float(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4])
dag = pickle.load(open(f"/tmp/lag15/{name}.pkl", "rb"))
base = float(dag.cost.sum()); budget = math.ceil(ratio * checkpoint_all(dag).peak(dag))
a = solve("approx", dag, budget, make_options("approx", time_limit=A, threads=1))
r = solve_milp(dag, budget, incumbent=a, time_limit=T, threads=1).report
print(json.dumps(dict(piece=name, n=dag.n, ratio=ratio, columns=model_columns(dag), approx=100 * (a.cost(dag) / base - 1),
                      status=r.status, milp=100 * (r.cost / base - 1), bound=100 * (r.bound / base - 1), gap=r.gap,
                      source=r.bound_source, seconds=r.seconds)), flush=True)
