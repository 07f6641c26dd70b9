# approx and checkmate CPU of test_refine.py::test_random_training_dags_solvers_pass_the_validator, per case:
#   cd tests && python ../results/lead18/refine_test_cpu.py SEED REFINE_EVALS
import sys, time, numpy as np
sys.path.insert(0, '.')
from test_baselines import random_training_dag, shuffled_order
from remc.ir.schedule import checkpoint_all
from remc.backends.strategies import solve_approx, solve_milp
from remc.ir.errors import InfeasibleError
seed = int(sys.argv[1])
rng = np.random.default_rng(100 + seed)
tot = {}
for k in range(24):
    dag = random_training_dag(rng)
    if k % 3 == 0:
        dag = shuffled_order(dag, rng)
    for frac in (0.85, 0.7):
        budget = int(frac * checkpoint_all(dag).peak(dag))
        solvers = [("approx", lambda: solve_approx(dag, budget, refine_evals=int(sys.argv[2])))]
        if k % 4 == 0:
            solvers.append(("checkmate", lambda: solve_milp(dag, budget, time_limit=60)))
        for name, solve in solvers:
            t = time.process_time(); w = time.perf_counter()
            try:
                s = solve(); st = s.report.get("status")
            except InfeasibleError:
                st = "infeasible"
            dt = time.process_time() - t; dw = time.perf_counter() - w
            tot[name] = tot.get(name, 0) + dw
            print(k, frac, dag.n, name, st, f"cpu {dt:.1f} wall {dw:.1f}", flush=True)
print(tot)
