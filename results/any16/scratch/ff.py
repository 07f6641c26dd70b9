"""evict_search's first schedule within budget: CPU seconds and rows to it. python ff.py GRAPH RATIO [ROW_SPARSE_FROM]"""
import math, sys, time
from remc.ir.nodelink import load_nodelink
from remc.ir.schedule import checkpoint_all
from remc.passes import evict, stagesearch as ss
if len(sys.argv) > 3 and hasattr(ss, "ROW_SPARSE_FROM"):
    ss.ROW_SPARSE_FROM = int(sys.argv[3])
g, ratio = sys.argv[1], float(sys.argv[2])
dag = load_nodelink(g); B = math.ceil(ratio * checkpoint_all(dag).peak(dag))
c0 = time.process_time(); first = []
class Stop(Exception): pass
def on_best(c):
    first.append((time.process_time() - c0, c)); raise Stop
try:
    evict.evict_search(dag, B, deadline=time.perf_counter() + float(sys.argv[4] if len(sys.argv) > 4 else 120), on_best=on_best)
except Stop:
    pass
print(g.split('/')[-1], ratio, "first fit", f"cpu {first[0][0]:.1f} s +{100*(first[0][1]/dag.cost.sum()-1):.1f}%" if first else f"none in cpu {time.process_time()-c0:.1f}", flush=True)
