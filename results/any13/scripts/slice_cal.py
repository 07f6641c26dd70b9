"""Seconds per eviction step and per repair move (slice calibration): python slice_cal.py N SEED RATIO"""
import sys, time
sys.path.insert(0, "tools")
from layered import layered_dag
from remc.ir.schedule import checkpoint_all
from remc.passes.evict import EvictRun, _LeastMemoryRun, _RepairRun, VARIANTS
n, seed, ratio = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])
dag = layered_dag(n, 10, seed)
budget = int(ratio * checkpoint_all(dag).peak(dag))
for w, c, net in VARIANTS[:2]:
    r = EvictRun(dag, budget, weight=w, closure=c, net=net)
    t = time.perf_counter(); r.advance(None, steps=500); print(f"evict {w},{c},{net}: 500 steps {time.perf_counter()-t:.3f}s done={r.done}")
r = _RepairRun(dag, budget)
t = time.perf_counter(); r.advance(None, moves=20); print(f"repair: 20 moves {time.perf_counter()-t:.3f}s done={r.done}")
l = _LeastMemoryRun(dag, budget)
t = time.perf_counter(); l.advance(None, moves=1); print(f"least: first span build+1 move {time.perf_counter()-t:.3f}s")
t = time.perf_counter(); l.advance(None, moves=20); print(f"least: 20 moves {time.perf_counter()-t:.3f}s done={l.done}")
