"""cpsat_bound's rounds as checkmate's CP-SAT phase runs them (1 worker, presolve off, quick=QUICK_ROUNDS, cutoff at
the optimum), from the optimum (cached from one checkmate run), under variants set by module constants:
proof.py GRAPH RATIO REPS VARIANT...   VARIANT: 'default' or 'NAME=VALUE,NAME=VALUE' of backends.cpsat constants."""
import math
import pickle
import sys
import time
from pathlib import Path

import remc.backends.cpsat as cpsat
from remc.ir.nodelink import load_nodelink
from remc.ir.schedule import checkpoint_all

path, ratio, reps = sys.argv[1], float(sys.argv[2]), int(sys.argv[3])
variants = sys.argv[4:] or ["default"]
dag = load_nodelink(path)
budget = math.ceil(checkpoint_all(dag).peak(dag) * ratio)
cache = Path(f"/tmp/pub21/opt_{Path(path).stem}_{ratio}.pkl")
if cache.exists():
    best = pickle.loads(cache.read_bytes())
else:
    # the C=2 model's optimum from the stage search (as checkmate's CP-SAT phase has it), no stall, 1 worker
    from remc.backends.cpsat import _stage_search_hint, solve_cpsat
    hint = _stage_search_hint(dag, budget, None)
    best = solve_cpsat(dag, budget, cpsat.CpSatOptions(time_limit=60, threads=1, copies=2, presolve=False, stall=0.5), hint=hint)
    cache.write_bytes(pickle.dumps(best))
base = dag.total_cost
print(Path(path).stem[:40], ratio, "best", best.report.status, best.cost(dag), f"+{100 * (best.cost(dag) / base - 1):.3f}%", flush=True)
ob = cpsat._bound_round
log = []


def br(dag, budget, copies, *a, **k):
    c = time.process_time()
    out = ob(dag, budget, copies, *a, **k)
    log.append(f"{sum(copies)}:{out[0].status[:4]}:{time.process_time() - c:.2f}")
    return out


cpsat._bound_round = br
params: dict = {}  # VARIANT 'P:name=value': a CP-SAT parameter of every bound round
_solver = cpsat._solver


def solver_with_params(*a, **k):
    s = _solver(*a, **k)
    for key, val in params.items():
        setattr(s.parameters, key, val)
    return s


cpsat._solver = solver_with_params
defaults = {}
for rep in range(reps):
    for var in variants:
        for k, v in defaults.items():
            setattr(cpsat, k, v)
        params.clear()
        if var.startswith("P:"):
            for kv in var[2:].split(","):
                k, v = kv.split("=")
                params[k] = eval(v)
        elif var != "default":
            for kv in var.split(","):
                k, v = kv.split("=")
                defaults.setdefault(k, getattr(cpsat, k))
                setattr(cpsat, k, eval(v))
        log.clear()
        c = time.process_time()
        gap = 0.0
        target = best.cost(dag) - gap * max(best.cost(dag) - base, 0.0)
        res = cpsat.cpsat_bound(dag, budget, cpsat.CpSatOptions(time_limit=600, threads=1, copies=2, presolve=False),
                                hint=best, stop_at=target, quick=cpsat.QUICK_ROUNDS)
        print(f"  {var:40s} {res.status} {res.bound:g} {time.process_time() - c:6.2f} cpu  rounds {' '.join(log)}", flush=True)
