"""cpsat_bound's rounds from the optimum (cached by proof.py) with QUICK_GROW_NEW off and on: CPU seconds."""
import math
import pickle
import sys
import time
from pathlib import Path

import remc.backends.cpsat as cpsat
from remc.ir.nodelink import load_nodelink
from remc.ir.schedule import checkpoint_all

path, ratio = sys.argv[1], float(sys.argv[2])
dag = load_nodelink(path)
budget = math.ceil(checkpoint_all(dag).peak(dag) * ratio)
cache = Path(f"/tmp/pub19/opt_{Path(path).stem}_{ratio}.pkl")
if cache.exists():
    best = pickle.loads(cache.read_bytes())
else:
    from remc.backends.strategies import make_options, solve
    best = solve("checkmate", dag, budget, make_options("checkmate", time_limit=120))
    cache.write_bytes(pickle.dumps(best))
print(Path(path).stem, ratio, "best", best.report.status, f"+{100 * (best.cost(dag) / dag.total_cost - 1):.3f}%", flush=True)
ob = cpsat._bound_round
log = []


def br(dag, budget, copies, *a, **k):
    out = ob(dag, budget, copies, *a, **k)
    log.append(f"{sum(copies)}:{out[0].status[:4]}:{out[0].seconds:.1f}s")
    return out


cpsat._bound_round = br
for rep in range(int(sys.argv[3]) if len(sys.argv) > 3 else 1):
    for flag in (False, True):
        cpsat.QUICK_GROW_NEW = flag
        log.clear()
        c = time.process_time()
        res = cpsat.cpsat_bound(dag, budget, cpsat.CpSatOptions(time_limit=60, threads=1, copies=2, presolve=False),
                                hint=best, stop_at=best.cost(dag), quick=cpsat.QUICK_ROUNDS)
        print(f"  QUICK_GROW_NEW={flag}: {res.status} {res.bound:g} {time.process_time() - c:.2f} cpu  rounds {' '.join(log)}", flush=True)
