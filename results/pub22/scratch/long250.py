"""Which side is loose on a case: the incumbent (C=2 model from the stage search, cached), then cpsat_bound's rounds
with a cutoff at the incumbent less GAP of its overhead, quick=QUICK_ROUNDS, up to ROUNDS rounds, SECONDS in all, 1 worker,
each round printed: long250.py GRAPH RATIO SECONDS [GAP] [ROUNDS]"""
import math
import pickle
import sys
import time
from pathlib import Path

import remc.backends.cpsat as cpsat
from remc.ir.nodelink import load_nodelink
from remc.ir.schedule import checkpoint_all

path, ratio, secs = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
gap = float(sys.argv[4]) if len(sys.argv) > 4 else 0.005
rounds = int(sys.argv[5]) if len(sys.argv) > 5 else 40
dag = load_nodelink(path)
budget = math.ceil(checkpoint_all(dag).peak(dag) * ratio)
base = dag.total_cost
cache = Path(f"/tmp/pub22/opt_{Path(path).stem}_{ratio}.pkl")
c0, t0 = time.process_time(), time.perf_counter()
if cache.exists():
    best = pickle.loads(cache.read_bytes())
else:
    from remc.backends.cpsat import _stage_search_hint, solve_cpsat
    hint = _stage_search_hint(dag, budget, None)
    print("stage", hint.cost(dag), f"{time.process_time() - c0:.1f} cpu", flush=True)
    best = solve_cpsat(dag, budget, cpsat.CpSatOptions(time_limit=120, threads=1, copies=2, presolve=False, stall=0.5),
                       hint=hint)
    cache.write_bytes(pickle.dumps(best))
print(Path(path).stem[:40], ratio, "incumbent", best.cost(dag), f"+{100 * (best.cost(dag) / base - 1):.4f}%",
      f"{time.process_time() - c0:.1f} cpu", flush=True)
ob = cpsat._bound_round


def br(dag, budget, copies, *a, **k):
    c = time.process_time()
    out = ob(dag, budget, copies, *a, **k)
    b = out[0].bound
    print(f"  round inst {sum(copies)} {out[0].status} bound {b:.1f} (+{100 * (b / base - 1):.4f}%) grow {sorted(out[1])} "
          f"{time.process_time() - c:.1f} cpu, {time.perf_counter() - t0:.0f} s", flush=True)
    return out


cpsat._bound_round = br
target = best.cost(dag) - gap * max(best.cost(dag) - base, 0.0)
print("target", target, flush=True)
c = time.process_time()
res = cpsat.cpsat_bound(dag, budget, cpsat.CpSatOptions(time_limit=secs, threads=1, copies=2, presolve=False),
                        hint=best, stop_at=target, quick=cpsat.QUICK_ROUNDS, rounds=rounds)
print("end", res.status, res.bound, f"+{100 * (res.bound / base - 1):.4f}%", f"{time.process_time() - c:.1f} cpu",
      None if res.schedule is None else res.schedule.cost(dag), flush=True)
