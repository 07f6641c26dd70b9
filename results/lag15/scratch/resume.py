"""gap_bound cold for T1 s, then resumed for T2 s (with and without the schedule's cost as target):
python resume.py MODEL RATIO T1 T2 OVER_PCT"""
import math, pickle, sys, time
from remc.ir.schedule import checkpoint_all
from remc.passes.bounds import gap_bound
g, r, t1, t2, over = sys.argv[1], float(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4]), float(sys.argv[5])
dag = pickle.load(open(f"/tmp/lag15/{g}.pkl", "rb"))
base = float(dag.cost.sum()); b = int(r * checkpoint_all(dag).peak(dag))
pct = lambda x: f"+{100*(x/base-1):.5f}%"
t = time.perf_counter()
gb = gap_bound(dag, b, iterations=2000, deadline=time.perf_counter() + t1)
print(f"{g} {r} cold {t1}s: {pct(gb.bound)} kind {gb.kind} it {gb.iterations} ({time.perf_counter()-t:.1f}s)", flush=True)
for up in (None, base * (1 + over / 100)):
    t = time.perf_counter()
    gr = gap_bound(dag, b, iterations=10**9, deadline=time.perf_counter() + t2, upper=up, resume=gb)
    print(f"  resume {t2}s upper {up and pct(up)}: {pct(gr.bound)} it +{gr.iterations-gb.iterations} ({time.perf_counter()-t:.1f}s)", flush=True)
