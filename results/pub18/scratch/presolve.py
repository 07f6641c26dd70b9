"""checkmate's covering MILP first (as _cover_first calls it: kept rows lazily, 1 thread, this process) with HiGHS'
presolve on and off: bound, status, CPU.   python presolve.py GRAPH|n:seed RATIO"""
import json, math, sys, time, tempfile, os, threading
sys.path.insert(0, "/work/wt/pub18/tools")
import remc.backends.strategies as st
from remc.backends import highs as hb
from remc.ir import nodelink
from remc.ir.schedule import checkpoint_all
from remc.passes.coverbound import cover_bound, cover_schedule

g, ratio = sys.argv[1], float(sys.argv[2])
if ":" in g and not os.path.exists(g):
    import bench_moccasin as bm
    n, seed = map(int, g.split(":"))
    d = bm.random_layered(n, seed)
    g = os.path.join(tempfile.mkdtemp(), d["graph"]["name"] + ".json")
    json.dump(d, open(g, "w"))
dag = nodelink.load_nodelink(g)
budget = math.ceil(checkpoint_all(dag).peak(dag) * ratio)
base = dag.total_cost
pct = lambda c: f"+{100*(c/base-1):.3f}%" if math.isfinite(c) else str(c)
orig = hb._load_highs
mode = {"presolve": "on"}
def load(model, integral, threads, gap):
    h, clock = orig(model, integral, threads, gap)
    if integral:
        h.setOptionValue("presolve", mode["presolve"])
    return h, clock
hb._load_highs = load
out = [os.path.basename(g)[:34], str(ratio), str(dag.n)]
for m in ("on", "off", "on", "off"):
    mode["presolve"] = m
    c0 = time.process_time()
    cb = cover_bound(dag, budget, st._CancellableMip(st._highs(), threading.Event()), time_limit=5, threads=1, depth=1,
                     max_columns=st.COVER_HERE_COLUMNS, kept=True, start=True)
    dec = cover_schedule(dag, budget, cb.start)
    out.append(f"{m}: {pct(cb.bound)} {cb.status} {cb.columns}c {cb.note} {time.process_time()-c0:.2f}s dec {'-' if dec is None else pct(dec.cost(dag))}")
print(" | ".join(out), flush=True)
