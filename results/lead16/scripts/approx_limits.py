import sys, time
sys.path.insert(0,'tests')
import test_evict as te
from remc.backends.strategies import make_options, solve
from remc.passes import approx as approx_mod
from remc.ir.schedule import checkpoint_all
approx_mod.MAX_LP_COLUMNS=0
dag = te._layered(80, 10, 1)
budget = int(0.8 * checkpoint_all(dag).peak(dag))
for tl in [float(a) if a!='None' else None for a in sys.argv[1:]]:
    t0=time.time()
    s = solve("approx", dag, budget, make_options("approx", time_limit=tl))
    print(tl, f"{time.time()-t0:.1f}s", s.report.status, s.report.cost, s.strategy, {k:v for k,v in s.report.extras.items() if 'search' in k or 'stage' in k}, flush=True)
