"""The covering MILP of one published graph at one ratio, in this process, 1 thread, with HiGHS' log on: where its
time goes (presolve, root LP, cuts, nodes).   python coverlog.py GRAPH RATIO [kept 0/1] [extra HiGHS opts k=v ...]"""
import math, sys, time
import numpy as np
from remc.ir import nodelink
from remc.ir.schedule import checkpoint_all
from remc.backends import highs as hb
from remc.passes import coverbound as cb

g, ratio = sys.argv[1], float(sys.argv[2])
kept = len(sys.argv) > 3 and sys.argv[3] == "1"
extra = dict(kv.split("=") for kv in sys.argv[4:])
dag = nodelink.load_nodelink(g)
budget = math.ceil(checkpoint_all(dag).peak(dag) * ratio)
base = float(dag.cost.sum())
orig = hb._load_highs
def load(model, integral, threads, gap):
    h, clock = orig(model, integral, threads, gap)
    h.setOptionValue("output_flag", True)
    h.setOptionValue("log_to_console", True)
    for k, v in extra.items():
        try:
            cur = h.getOptionValue(k)[1]
            h.setOptionValue(k, (v.lower() in ('1','true')) if isinstance(cur, bool) else type(cur)(eval(v)) if not isinstance(cur, str) else v)
        except Exception:
            h.setOptionValue(k, v)
    return h, clock
hb._load_highs = load
c0 = time.process_time(); t0 = time.perf_counter()
r = cb.cover_bound(dag, budget, hb.HighsBackend(), time_limit=None, threads=1, depth=1, max_columns=None, kept=kept)
print(f"bound +{100 * (r.bound - base) / base:.4f}% {r.status} cols {r.columns} wall {time.perf_counter()-t0:.2f} s cpu {time.process_time()-c0:.2f} s {r.note}")
