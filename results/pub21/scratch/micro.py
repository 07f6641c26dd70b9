import math, time, numpy as np
from remc.ir.nodelink import load_nodelink
from remc.ir.schedule import checkpoint_all
from remc.passes import stagesearch
from remc.passes.stagesearch import StageState
dag = load_nodelink("/work/wt/moccasin-src/data/random_layered_n100_w0.27_nlv0.75_ed0.2_scd0.14.json")
rng = np.random.default_rng(0)
S = checkpoint_all(dag).S & (rng.random((dag.n, dag.n)) < 0.7)
st = StageState(dag, 10**12, S)
rows = [(t, st.R[t]) for t in range(dag.n)]
print("mean |P|", np.mean([r.sum() for _, r in rows]))
for units in (0, 10**9):
    stagesearch.ROW_LIST_UNITS = units
    c = time.process_time()
    for _ in range(50):
        for t, r in rows:
            st._row_peak(t, r)
    print("peak", units, (time.process_time() - c) / (50 * len(rows)) * 1e6, "us")
c = time.process_time()
for _ in range(50):
    for t in range(dag.n):
        st._row_r(t)
print("row_r", (time.process_time() - c) / (50 * dag.n) * 1e6, "us")
