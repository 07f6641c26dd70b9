"""Each least-memory span of GRAPH at RATIO: initial peak, repair (capped and not) result and rows."""
import math, sys, time
from remc.ir.nodelink import load_nodelink
from remc.ir.schedule import checkpoint_all
from remc.passes.stagesearch import StageState, repair_steps, least_memory_spans, span_start
g, ratio = sys.argv[1], float(sys.argv[2]); caps = [None if c == "all" else int(c) for c in sys.argv[3].split(",")]
dag = load_nodelink(g)
budget = math.ceil(ratio * checkpoint_all(dag).peak(dag)); base = dag.cost.sum()
for span in least_memory_spans(dag.n):
    S = span_start(dag, span)
    for cap in caps:
        st = StageState(dag, budget, S); p0 = st.peak.max(); c0 = st.total_cost()
        t = time.perf_counter(); out = repair_steps(st, time.perf_counter() + 30, cap=cap)
        print(span, cap, f"peak0/budget={p0/budget:.3f} cost0=+{100*(c0/base-1):.0f}%", out, f"{time.perf_counter()-t:.1f}s rows={st.rows}", f"+{100*(st.total_cost()/base-1):.1f}%", flush=True)
