"""cProfile of checkmate's stage search hint (backends/cpsat._stage_search_hint) on one graph: prof_stage.py GRAPH RATIO"""
import cProfile
import math
import pstats
import sys
import time

from remc.backends.cpsat import _stage_search_hint
from remc.ir.nodelink import load_nodelink
from remc.ir.schedule import checkpoint_all

dag = load_nodelink(sys.argv[1])
budget = math.ceil(checkpoint_all(dag).peak(dag) * float(sys.argv[2]))
c = time.process_time()
pr = cProfile.Profile()
pr.enable()
h = _stage_search_hint(dag, budget, None)
pr.disable()
print("cost", h.cost(dag), "cpu", round(time.process_time() - c, 2))
pstats.Stats(pr).sort_stats("tottime").print_stats(25)
