"""ff.py with the CPU seconds and rows of each producer of evict_search up to the first fit."""
import math, sys, time, collections
from remc.passes import evict
acc = collections.defaultdict(float)
for cls in (evict.EvictRun, evict._RepairRun, evict._LeastMemoryRun):
    def mk(orig, name):
        def adv(self, *a, **k):
            c = time.process_time()
            try:
                return orig(self, *a, **k)
            finally:
                acc[name] += time.process_time() - c
        return adv
    cls.advance = mk(cls.advance, cls.__name__)
import atexit
atexit.register(lambda: print({k: round(v, 1) for k, v in acc.items()}))
exec(open(__file__.replace("ff_by.py", "ff.py")).read())
