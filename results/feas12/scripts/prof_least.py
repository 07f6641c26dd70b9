"""Profile the least-memory starts (or the repair from checkpoint-all) alone: python prof_least.py N SEED RATIO least|repair"""
import cProfile, pstats, sys, time
sys.path.insert(0, 'tools')
from layered import layered_dag
from remc.ir.schedule import checkpoint_all
from remc.passes import evict
n, seed, ratio, which = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3]), sys.argv[4]
dag = layered_dag(n, 10, seed); budget = int(ratio * checkpoint_all(dag).peak(dag)); base = dag.cost.sum()
pr = cProfile.Profile(); t = time.perf_counter(); pr.enable()
r = evict._LeastMemoryRun(dag, budget) if which == "least" else evict._RepairRun(dag, budget)
r.advance(time.perf_counter() + 200)
pr.disable()
print(which, None if r.result is None else round(100 * (r.result.total_cost() / base - 1), 2), f"{time.perf_counter()-t:.1f} s")
pstats.Stats(pr).sort_stats("tottime").print_stats(16)
