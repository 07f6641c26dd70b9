"""knee.py PKL BUDGET...: the stage search's feasibility phase (EvictSearch.feasible, 600 s deadline) on a captured
solve's dag at each budget: rows and CPU to its first schedule, the producer, the cost."""
import gzip
import pickle
import sys
import time

from remc.passes.evict import EvictSearch

d = pickle.load(gzip.open(sys.argv[1]) if sys.argv[1].endswith(".gz") else open(sys.argv[1], "rb"))
dag = d["dag"]
for b in [int(float(x)) for x in sys.argv[2:]]:
    s = EvictSearch(dag, b)
    c = time.process_time()

    def take(r, s=s):
        if r.result is not None and s.found is None:
            s.found, s.how = r.result, r.name
    s.feasible(time.perf_counter() + 600, take)
    f = s.found
    print(f"budget {b}: {'none' if f is None else s.how} rows {s.rows} cpu {time.process_time() - c:.2f}"
          + ("" if f is None else f" cost {f.total_cost() / dag.total_cost:.4f}"), flush=True)
