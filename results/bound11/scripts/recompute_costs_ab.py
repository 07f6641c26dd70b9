"""A/B of the eviction pass's recompute costs on the same inputs in one process: main's recurrence unit by
unit (e2f6057, loaded from git) against the branch's sparse triangular solve. Inputs: the calls of the first
eviction setting on random layered n=1000 seed 3 at 0.8 for 15 s (every k-th of them).
Usage: python results/bound11/scripts/recompute_costs_ab.py"""
import subprocess, sys, time, types
sys.path.insert(0, 'tools')
import numpy as np
from layered import layered_dag
from remc.ir.schedule import checkpoint_all
from remc.passes import evict
src = subprocess.run(["git", "show", "e2f6057:passes/evict.py"], capture_output=True, text=True, check=True).stdout
old = types.ModuleType("remc.passes._evict_main"); old.__package__ = "remc.passes"
exec(compile(src, "main:passes/evict.py", "exec"), old.__dict__)
dag = layered_dag(1000, 10, 3); budget = int(0.8 * checkpoint_all(dag).peak(dag))
calls, real = [], evict._recompute_costs
def spy(dag_, kept, units, t, parents):
    calls.append((kept.copy(), units.copy(), t)); return real(dag_, kept, units, t, parents)
evict._recompute_costs = spy
evict.evict_schedule(dag, budget, deadline=time.perf_counter() + 15)
evict._recompute_costs = real
calls = calls[::max(1, len(calls) // 300)]
P = evict._parent_matrix(dag)
fns = {"main (unit by unit)": lambda k, u, t: old._recompute_costs(dag, k, t)[0][u],
       "branch (sparse solve)": lambda k, u, t: real(dag, k, u, t, P)[0]}
for name, f in fns.items():
    t0 = time.perf_counter()
    for k, u, t in calls:
        f(k, u, t)
    print(f"{name}: {(time.perf_counter() - t0) / len(calls) * 1e3:.2f} ms a call over {len(calls)} calls", flush=True)
diff = max(float(np.max(np.abs(fns['main (unit by unit)'](k, u, t) - fns['branch (sparse solve)'](k, u, t))
                        / np.maximum(1.0, np.abs(fns['main (unit by unit)'](k, u, t))))) for k, u, t in calls)
print(f"largest relative difference of the values: {diff:.3g}")
