"""Peak traced memory of Refiner.repair from checkpoint-all over the budget: python refine_mem.py N SEED RATIO EVALS"""
import sys, time, tracemalloc
sys.path.insert(0, "/work/wt/any13/tools")
from layered import layered_dag
from remc.ir.schedule import checkpoint_all
from remc.passes.refine import Refiner
n, seed, ratio, evals = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4])
dag = layered_dag(n, 10, seed)
budget = int(ratio * checkpoint_all(dag).peak(dag))
r = Refiner(dag, budget, max_evals=evals)
p = r.evaluate(checkpoint_all(dag).S)
tracemalloc.start()
t = time.perf_counter()
q = r.repair(p)
cur, peak = tracemalloc.get_traced_memory()
print(f"n={n} evals={r.evals} fit={q is not None and q.peak <= budget} cost={None if q is None else q.cost} "
      f"peak traced {peak / 2**20:.0f} MiB, {time.perf_counter() - t:.1f} s")
