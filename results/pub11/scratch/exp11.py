import sys, time
sys.path.insert(0, __import__("os").path.dirname(__file__))
from exp import case, hint_of, pct
import remc.backends.cpsat as cp
cp.STALL_MIN = float(sys.argv[1])
for spec in sys.argv[2:]:
    name, r = spec.split(":")
    dag, budget = case(name, float(r))
    h = hint_of(dag, budget)
    t1 = time.perf_counter()
    best, b, note = cp.cpsat_phase(dag, budget, incumbent=h, gap=1e-4, threads=2, seconds=42)
    print(f"stallmin={sys.argv[1]} {name}:{r} {time.perf_counter()-t1:.1f}s {pct(dag,best.cost(dag))} bound {pct(dag,b)} [{note}]", flush=True)
