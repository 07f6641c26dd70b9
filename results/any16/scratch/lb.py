"""Budget, checkpoint-all peak, a simple lower bound (max over units of its bytes + its parents' + workspace),
and the span-start peaks. python lb.py GRAPH..."""
import math, sys, time
import numpy as np
from remc.ir.nodelink import load_nodelink
from remc.ir.schedule import checkpoint_all
from remc.passes.stagesearch import StageState, span_start, least_memory_spans
for g in sys.argv[1:]:
    dag = load_nodelink(g)
    ca = checkpoint_all(dag).peak(dag)
    lb = max(int(dag.constant + dag.mem[v] + dag.mem[dag.preds[v]].sum() + dag.workspace[v] + dag.kept_before[v] + dag.kept_first[v]) for v in range(dag.n))
    print(g.split('/')[-1], "n", dag.n, "m", len(dag.edges), "ckpt-all", ca, "0.8x", math.ceil(0.8*ca), "0.9x", math.ceil(0.9*ca), "simple LB", lb, f"({lb/ca:.3f} of ckpt-all)")
    for span in least_memory_spans(dag.n)[-4:]:
        st = StageState(dag, 10**18, span_start(dag, span))
        print("   span", span, "peak", int(st.peak.max()), f"{st.peak.max()/ca:.3f}", "cost", f"{st.total_cost()/dag.cost.sum():.2f}x")
