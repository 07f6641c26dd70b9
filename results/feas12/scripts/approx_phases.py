"""approx on a random layered DAG with its progress events printed (phase, seconds): where the time goes.
Usage: python results/bound11/scripts/approx_phases.py N SEED RATIO LIMIT"""
import sys, time
sys.path.insert(0, 'tools')
from layered import layered_dag
from remc.backends.strategies import make_options, solve
from remc.ir.schedule import checkpoint_all
n, seed, ratio, limit = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4])
dag = layered_dag(n, 10, seed); budget = int(ratio * checkpoint_all(dag).peak(dag)); base = float(dag.cost.sum())
t0 = time.perf_counter()
say = lambda e: print(f"{time.perf_counter() - t0:7.1f} s  {e.phase:18s} best {e.incumbent} bound {e.bound}", flush=True)
try:
    s = solve("approx", dag, budget, make_options("approx", time_limit=limit, threads=1), progress=say)
    print(f"{time.perf_counter() - t0:7.1f} s  done: +{100 * (s.report.cost / base - 1):.2f}% ({s.report.extras.get('rule')})")
except Exception as e:  # noqa: BLE001
    print(f"{time.perf_counter() - t0:7.1f} s  {type(e).__name__}: {str(e)[:200]}")
