"""Greedy baselines with 4 knob values, and the stage search from nothing (scratch)."""
import math, sys, time
from remc.ir.nodelink import load_nodelink
from remc.ir.schedule import checkpoint_all
from remc.ir.errors import RemcError
from remc.passes.strategies import solve_baseline_strategy, BaselineOptions
from remc.backends.strategies import _stage_hint
from remc.passes.solver_api import Clock
for path in sys.argv[1:]:
    dag = load_nodelink(path)
    for ratio in (0.8, 0.9):
        budget = math.ceil(checkpoint_all(dag).peak(dag) * ratio)
        row = []
        for name in ("chen-greedy", "ap-greedy", "lin-greedy", "griewank"):
            for mp in (4, 8):
                t = time.perf_counter()
                try:
                    s = solve_baseline_strategy(name, dag, budget, BaselineOptions(max_points=mp, max_slots=mp)); c = s.cost(dag)
                except RemcError:
                    c = None
                row.append(f"{name}/{mp}:{(time.perf_counter()-t)*1000:.0f}ms:{'-' if c is None else f'{c/dag.total_cost-1:+.3%}'}")
        t = time.perf_counter()
        h = _stage_hint(dag, budget, None, Clock(60.0), share=0.05)
        print(path.split('/')[-1][:14], ratio, " ".join(row), f"| stage<-nothing {(time.perf_counter()-t)*1000:.0f}ms {'-' if h is None else f'{h.cost(dag)/dag.total_cost-1:+.3%}'}", flush=True)
