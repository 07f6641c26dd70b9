"""by.py's measure on the graphs of test_evict's wall-clock tests: _layered(80, 10, 1) and _layered(200, 10, 2) at 0.8."""
import math, sys, time
sys.path.insert(0, "/work/wt/any18/tests")
from test_evict import _layered
from remc.ir.schedule import checkpoint_all
from remc.passes import evict
for n, w, seed in ((80, 10, 1), (200, 10, 2)):
    dag = _layered(n, w, seed); B = int(0.8 * checkpoint_all(dag).peak(dag))
    s = evict.EvictSearch(dag, B); who = []
    def take(r):
        if r.result is not None and s.found is None:
            s.found = r.result; who.append(r.name)
    c0 = time.process_time()
    s.feasible(time.perf_counter() + 300, take)
    print(n, w, seed, "fit" if s.found is not None else "none", f"cpu {time.process_time() - c0:.2f} s rows {s.rows}", who, flush=True)
