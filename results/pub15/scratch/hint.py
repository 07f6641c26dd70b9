"""checkmate's CP-SAT phase (cpsat_phase, 1 worker) from the stage search's schedule cut at DEADLINE seconds of
wall (inf: its local optimum): CPU of each part.   python hint.py GRAPH RATIO DEADLINE"""
import math
import sys
import time

from remc.backends.cpsat import cpsat_phase, load_cp_model
from remc.backends.strategies import _CoverBeside, _stage_hint
from remc.ir.nodelink import load_nodelink
from remc.ir.schedule import checkpoint_all
from remc.passes.solver_api import Clock

load_cp_model()
dag = load_nodelink(sys.argv[1])
budget = math.ceil(checkpoint_all(dag).peak(dag) * float(sys.argv[2]))
base = float(dag.total_cost)
d = float(sys.argv[3])
c0 = time.process_time()
clock = Clock(60 if math.isinf(d) else d / 0.36)
st = _stage_hint(dag, budget, None, clock, share=0.36)
c1 = time.process_time()
beside = _CoverBeside(dag, budget, Clock(60), time.process_time() - 1.0)
best, bound, note = cpsat_phase(dag, budget, incumbent=st, gap=1e-4, threads=1, seconds=50, external=beside.bound)
beside.stop()
c2 = time.process_time()
print(f"deadline {d}: stage +{(st.cost(dag)/base-1)*100:.3f}% cpu {c1-c0:.2f}; cp-sat cpu {c2-c1:.2f} -> "
      f"+{(best.cost(dag)/base-1)*100:.3f}% bound +{(bound/base-1)*100:.3f}%; {note[:150]}")
