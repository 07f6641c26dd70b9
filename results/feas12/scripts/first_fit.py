"""Seconds until evict_search's first schedule within budget (and which producer), on random layered graphs:
python first_fit.py SECONDS N:SEED:RATIO ...   (each case in this process, one after the other)"""
import sys, time; sys.path.insert(0, 'tools')
from layered import layered_dag
from remc.ir.schedule import checkpoint_all
from remc.passes import evict
T = float(sys.argv[1])
first = {}
def wrap(cls):
    real = cls.advance
    def advance(self, until):
        done = real(self, until)
        if self.result is not None and "t" not in first:
            first.update(t=time.perf_counter(), name=getattr(self, "name", "?"), cost=self.result.total_cost())
        return done
    cls.advance = advance
for cls in (evict.EvictRun, evict._RepairRun, evict._LeastMemoryRun):
    wrap(cls)
def no_improve(st, deadline, *a, **k):  # the first fit is what is measured here
    return None
import remc.passes.stagesearch as ss
ss.improve = no_improve
for case in sys.argv[2:]:
    n, seed, ratio = case.split(":")
    dag = layered_dag(int(n), 10, int(seed)); budget = int(float(ratio) * checkpoint_all(dag).peak(dag)); base = dag.cost.sum()
    first.clear(); t0 = time.perf_counter()
    r = evict.evict_search(dag, budget, deadline=t0 + T)
    if "t" in first:
        print(case, f"first fit {first['t'] - t0:.1f} s", first["name"], f"+{100 * (first['cost'] / base - 1):.1f}%", flush=True)
    else:
        print(case, f"no fit in {time.perf_counter() - t0:.1f} s", flush=True)
