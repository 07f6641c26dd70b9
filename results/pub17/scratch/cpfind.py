"""CP-SAT's C=2 model from the stage search's schedule until it finds a schedule at the covering MILP's bound (what
checkmate's CP-SAT phase does where that bound is the optimum), under parameter variants: CPU seconds each.
    python cpfind.py GRAPH RATIO VARIANT..."""
import math, sys, time
import remc.backends.cpsat as cpsat
import remc.backends.strategies as strategies
from remc.ir import nodelink
from remc.ir.schedule import checkpoint_all
from remc.passes.solver_api import Clock
from remc.passes.coverbound import cover_bound
from remc.backends.highs import HighsBackend

g, ratio = sys.argv[1], float(sys.argv[2])
dag = nodelink.load_nodelink(g)
budget = math.ceil(checkpoint_all(dag).peak(dag) * ratio)
base = dag.total_cost
hint = strategies._stage_hint(dag, budget, None, Clock(60), share=0.3)
cb = cover_bound(dag, budget, HighsBackend(), time_limit=None, threads=1, depth=1, max_columns=None).bound
print(f"stage search +{100*(hint.cost(dag)/base-1):.3f}%, cover bound +{100*(cb/base-1):.3f}%", flush=True)
orig = cpsat._solver
for var in sys.argv[3:]:
    def solver(cp_model, options, t0, presolve, var=var):
        s = orig(cp_model, options, t0, presolve)
        p = s.parameters
        for kv in var.split(","):
            if kv == "default":
                continue
            k, v = kv.split("=")
            cur = getattr(p, k)
            setattr(p, k, (v.lower() in ("1", "true")) if isinstance(cur, bool) else type(cur)(v))
        return s
    cpsat._solver = solver
    c0, t0 = time.process_time(), time.perf_counter()
    s = cpsat.solve_cpsat(dag, budget, cpsat.CpSatOptions(time_limit=60, threads=1, copies=2, stall=0.5, presolve=False),
                          hint=hint, stop=lambda c: math.isfinite(c) and c - cb <= 1e-9 * c)
    print(f"{var:40s} +{100*(s.cost(dag)/base-1):.3f}% {s.report['solver']} cpu {time.process_time()-c0:.2f} s wall {time.perf_counter()-t0:.2f} s", flush=True)
