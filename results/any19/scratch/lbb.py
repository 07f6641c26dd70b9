"""lbb.py GRAPH RATIO LIMIT: the LP least-budget bound (least_budget_bound) against the protocol's budget."""
import math, sys, time, os
from remc.ir.nodelink import load_nodelink
from remc.ir.schedule import checkpoint_all
from remc.backends.strategies import least_budget_bound
from remc.passes.milp_model import simple_lower_bound, model_columns
dag = load_nodelink(sys.argv[1]); ratio = float(sys.argv[2])
B = math.ceil(ratio * checkpoint_all(dag).peak(dag))
t, c = time.perf_counter(), time.process_time()
print(f"{os.path.basename(sys.argv[1])} n={dag.n} cols {model_columns(dag)} budget {B} simple LB {simple_lower_bound(dag)} ({simple_lower_bound(dag)/B:.3f}x) load {os.getloadavg()[0]:.1f}", flush=True)
lb = least_budget_bound(dag, time_limit=float(sys.argv[3]))
print(f"  LP least budget {lb} = {lb/B:.4f}x budget: {'INFEASIBLE (proven)' if lb > B else 'not proven'}; wall {time.perf_counter()-t:.1f} cpu {time.process_time()-c:.1f}", flush=True)
