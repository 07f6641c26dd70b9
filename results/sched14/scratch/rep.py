"""The repair from checkpoint-all and the least-memory run, counted: python rep.py GRAPH RATIO"""
import math, sys, time
from remc.ir.nodelink import load_nodelink
from remc.ir.schedule import checkpoint_all
from remc.passes.stagesearch import StageState, repair_steps
from remc.passes.evict import _LeastMemoryRun
g, ratio = sys.argv[1], float(sys.argv[2])
dag = load_nodelink(g)
budget = math.ceil(ratio * checkpoint_all(dag).peak(dag))
base = float(dag.cost.sum())
t = time.perf_counter()
st = StageState(dag, budget, checkpoint_all(dag).S)
out = repair_steps(st, time.perf_counter() + 60)
print("repair", out, f"{time.perf_counter()-t:.1f}s rows={st.rows}", f"+{100*(st.total_cost()/base-1):.2f}%", flush=True)
t = time.perf_counter()
lm = _LeastMemoryRun(dag, budget)
lm.advance(time.perf_counter() + 60)
print("least", lm.done, f"{time.perf_counter()-t:.1f}s rows={lm.rows}", lm.result is not None and f"+{100*(lm.result.total_cost()/base-1):.2f}%")
