"""Small layered DAGs where every eviction setting runs past FIRST_PASS_ROWS rows a unit and the search still fits."""
import math, sys
sys.path.insert(0, "/work/wt/any18/tests")
from test_evict import _layered
from remc.ir.schedule import checkpoint_all
from remc.passes import evict
for n in (24, 30, 40, 60):
    for seed in range(12):
        dag = _layered(n, 4, seed)
        for ratio in (0.6, 0.7, 0.8):
            B = int(ratio * checkpoint_all(dag).peak(dag))
            rows = []
            for w, c, net in evict.VARIANTS:
                r = evict.EvictRun(dag, B, weight=w, closure=c, net=net); r.advance(None)
                rows.append((r.result is not None, r.rows / n))
            if any(f for f, _ in rows) or not any(x > evict.FIRST_PASS_ROWS for _, x in rows):
                continue
            s = evict.EvictSearch(dag, B)
            s.feasible(math.inf, lambda r: setattr(s, "found", r.result) if r.result is not None else None)
            print(n, seed, ratio, [round(x, 1) for _, x in rows], "search", s.found is not None, s.rows, flush=True)
