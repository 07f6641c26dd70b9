"""warmcost.py PKL LIMIT [FRACTIONS...]: approx on a captured solve for LIMIT s, then its schedule repaired
(repair_start, no deadline) to each fraction of its own live peak: rows, CPU, cost (a fit round's warm start)."""
import pickle
import sys
import time

from remc.backends.strategies import make_options, solve
from remc.passes import stagesearch as ss

d = pickle.load(open(sys.argv[1], "rb"))
dag, B = d["dag"], d["budget"]
c = time.process_time()
s = solve("approx", dag, B, make_options("approx", time_limit=float(sys.argv[2])))
peak = int(s.peak(dag))
print(f"approx {sys.argv[2]} s: cost {s.cost(dag) / dag.total_cost:.5f} peak {peak} (budget {B}) cpu {time.process_time() - c:.1f}",
      flush=True)
for f in [float(x) for x in sys.argv[3:]] or [0.995]:
    b = int(peak * f)
    st = ss.StageState(dag, b, s.S)
    r0, c = st.rows, time.process_time()
    ok = ss.repair(st, None)
    print(f"  repair to {f} of its peak ({b}): {'fit' if ok else 'stuck'} rows {st.rows - r0} cpu {time.process_time() - c:.2f} "
          f"cost {st.total_cost() / dag.total_cost:.5f}", flush=True)
