"""The retention-gap bound before (nested=False) and with nested drops on a fine graph (fine_graphs.CUTS):

    nice -n 15 python results/sched12/scripts/nested_bound.py CUT RATIO
"""
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from fine_graphs import fine_dag  # noqa: E402

from remc.ir.schedule import checkpoint_all  # noqa: E402
from remc.passes.bounds import gap_bound  # noqa: E402

cut, ratio = sys.argv[1], float(sys.argv[2])
dag = fine_dag(cut)
budget = int(ratio * checkpoint_all(dag).peak(dag))
base = dag.cost.sum()
for nested in (False, True):
    t = time.perf_counter()
    g = gap_bound(dag, budget, iterations=2000, nested=nested)
    print(cut, ratio, "nested" if nested else "before", f"{100 * (g.bound / base - 1):+.4f}%",
          f"{time.perf_counter() - t:.1f}s", "stages over", g.stages_over, "nested won", g.nested)
