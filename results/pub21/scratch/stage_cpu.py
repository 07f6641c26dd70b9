"""CPU seconds and result of checkmate's stage search hint (backends/cpsat._stage_search_hint, no deadline) on
graphs at a ratio: stage_cpu.py RATIO GRAPH..."""
import math
import sys
import time

from remc.backends.cpsat import _stage_search_hint
from remc.ir.nodelink import load_nodelink
from remc.ir.schedule import checkpoint_all

ratio = float(sys.argv[1])
for path in sys.argv[2:]:
    dag = load_nodelink(path)
    budget = math.ceil(checkpoint_all(dag).peak(dag) * ratio)
    c = time.process_time()
    h = _stage_search_hint(dag, budget, None)
    print(f"{path.split('/')[-1][:48]:48s} {ratio} cost {h.cost(dag) if h else None} {time.process_time() - c:.2f} cpu",
          flush=True)
