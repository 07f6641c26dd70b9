"""Small layered DAGs (tests' _layered) where, without SETTINGS_GIVE_UP, an eviction setting gets rows past
FIRST_PASS_ROWS a unit before the search's first schedule (by another producer)."""
import math, sys
sys.path.insert(0, "/work/wt/any18/tests")
from test_evict import _layered
from remc.ir.schedule import checkpoint_all
from remc.passes import evict
evict.SETTINGS_GIVE_UP = False
for n in (16, 20, 24, 30):
    for seed in range(10):
        dag = _layered(n, 4, seed)
        for ratio in (0.6, 0.65, 0.7, 0.75, 0.8, 0.85):
            B = int(ratio * checkpoint_all(dag).peak(dag))
            s = evict.EvictSearch(dag, B)
            who = []
            def take(r):
                if r.result is not None and s.found is None:
                    s.found = r.result; who.append(r.name)
            s.feasible(math.inf, take)
            past = [r.rows / n for r in s.runs if r.rows > evict.FIRST_PASS_ROWS * n + 3]
            if s.found is not None and past and "eviction" not in who[0]:
                print(n, seed, ratio, who, [round(x, 1) for x in past], s.rows, flush=True)
