import time, numpy as np
from remc.ir.nodelink import load_nodelink
from remc.ir.schedule import checkpoint_all
from remc.passes import stagesearch
from remc.passes.stagesearch import StageState
dag = load_nodelink("/work/wt/moccasin-src/data/random_layered_n500_w0.36_nlv0.75_ed0.2_scd0.14.json")
rng = np.random.default_rng(0)
for dens in (0.9, 0.7, 0.5, 0.3):
    S = checkpoint_all(dag).S & (rng.random((dag.n, dag.n)) < dens)
    st = StageState(dag, 10**12, S)
    for lo, hi in ((0, 30), (30, 60), (60, 100), (100, 200), (200, 500)):
        rows = [(t, st.R[t]) for t in range(dag.n) if lo <= st.R[t].sum() < hi]
        if len(rows) < 20: continue
        out = []
        for units in (0, 10**9):
            stagesearch.ROW_LIST_UNITS = units
            c = time.process_time()
            for _ in range(5):
                for t, r in rows:
                    st._row_peak(t, r)
            out.append((time.process_time() - c) / (5 * len(rows)) * 1e6)
        print(dens, f"|P| in [{lo},{hi})", len(rows), "numpy %.0f us, lists %.0f us" % tuple(out))
