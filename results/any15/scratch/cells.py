"""Per eviction setting: rows, cells (the units of each row's R: sum of len(P) in _row_peak) and CPU.
python cells.py GRAPH RATIO"""
import math, sys, time
import numpy as np
from remc.ir.nodelink import load_nodelink
from remc.ir.schedule import checkpoint_all
from remc.passes import evict, stagesearch
orig = stagesearch.StageState._row_peak
def rp(self, t, row):
    self.cells = getattr(self, "cells", 0) + int(np.count_nonzero(row))
    return orig(self, t, row)
stagesearch.StageState._row_peak = rp
g, ratio = sys.argv[1], float(sys.argv[2])
dag = load_nodelink(g)
budget = math.ceil(ratio * checkpoint_all(dag).peak(dag))
print(g.split('/')[-1], ratio, "n", dag.n)
for w, c, net in evict.VARIANTS:
    r = evict.EvictRun(dag, budget, weight=w, closure=c, net=net)
    c0 = time.process_time()
    r.advance(time.perf_counter() + 60)
    cpu = time.process_time() - c0
    cells = getattr(r._st, "cells", 0)
    print(f"  ({w},{c},{net}): fit={r.result is not None} rows={r.rows} ({r.rows/dag.n:.1f}/unit) cells={cells} ({cells/dag.n:.0f}/unit) cpu {cpu:.2f}s  ms/row {1000*cpu/r.rows:.3f} us/cell {1e6*cpu/max(cells,1):.1f}", flush=True)
