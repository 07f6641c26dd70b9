"""spans.py PKL|G:path RATIO: the least-memory starts alone, span by span: rows, CPU, fit or stuck, peak of the start."""
import math, pickle, sys, time
import numpy as np
from remc.passes.stagesearch import least_memory_spans, span_start, repair_steps, StageState
from remc.ir.schedule import checkpoint_all
a = sys.argv[1]
if a.endswith(".pkl"):
    d = pickle.load(open(a, "rb")); dag, budget = d["dag"], d["budget"]
else:
    from remc.ir.nodelink import load_nodelink
    dag = load_nodelink(a); budget = math.ceil(float(sys.argv[2]) * checkpoint_all(dag).peak(dag))
ca = checkpoint_all(dag).peak(dag)
print(f"n={dag.n} budget {budget} ckpt-all peak {ca} ratio {budget/ca:.3f}")
for span in least_memory_spans(dag.n):
    c = time.process_time()
    st = StageState(dag, budget, span_start(dag, span))
    p0 = int(st.peak.max())
    out = repair_steps(st, time.perf_counter() + 30, None)
    cost = float(st.R.sum(axis=0) @ dag.cost) / dag.cost.sum() - 1 if hasattr(st, "R") else None
    print(f"  span {span:4d}: start peak {p0/budget:.3f}x budget, {out}, rows {st.rows}, cpu {time.process_time()-c:.1f}, end peak {int(st.peak.max())/budget:.3f}x")
    if out == "fit":
        break
