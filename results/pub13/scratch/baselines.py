"""Each baseline's time and cost, then the stage search from the best baseline vs from each cheap one (scratch)."""
import math, sys, time
from remc.ir.nodelink import load_nodelink
from remc.ir.schedule import checkpoint_all
from remc.ir.errors import RemcError
from remc.passes.strategies import _BY_SPEED, solve_baseline_strategy, BaselineOptions, LARGE_GRAPH, GREEDY_POINTS
from remc.backends.strategies import _stage_hint
from remc.passes.solver_api import Clock
for path in sys.argv[1:]:
    dag = load_nodelink(path)
    for ratio in (0.8, 0.9):
        budget = math.ceil(checkpoint_all(dag).peak(dag) * ratio)
        opts = BaselineOptions(max_points=GREEDY_POINTS if dag.n > LARGE_GRAPH else None)
        row = []
        best = {}
        for name in _BY_SPEED:
            t = time.perf_counter()
            try:
                s = solve_baseline_strategy(name, dag, budget, opts); c = s.cost(dag); best[name] = s
            except RemcError:
                c = None
            row.append(f"{name}:{(time.perf_counter()-t)*1000:.0f}ms:{'-' if c is None else f'{c/dag.total_cost-1:+.3%}'}")
        out = []
        for name in ["all"] + [k for k in best if k in ("checkpoint-all", "chen-sqrtn", "ap-sqrtn", "lin-sqrtn")]:
            inc = min(best.values(), key=lambda s: s.cost(dag)) if name == "all" and best else best.get(name)
            t = time.perf_counter()
            h = _stage_hint(dag, budget, inc, Clock(60.0))
            out.append(f"stage<-{name}: {(time.perf_counter()-t)*1000:.0f}ms {'-' if h is None else f'{h.cost(dag)/dag.total_cost-1:+.3%}'}")
        print(path.split('/')[-1][:14], ratio, dag.n, " ".join(row)); print("    ", " | ".join(out), flush=True)
