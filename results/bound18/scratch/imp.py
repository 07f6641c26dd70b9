"""improve variants from the eviction pass's schedule (saved once): python imp.py NAME RATIO T VARIANT
VARIANT: cap (as main), nocap, old (session 14's repair inside improve, no sweep), loopold, loop (improve in slices of 10 s, clean and rebuild between), loopnocap"""
import math, os, pickle, sys, time
import numpy as np
import remc.passes.stagesearch as ss
from remc.passes.evict import evict_search
from remc.passes.milp_model import clean
from remc.ir.schedule import checkpoint_all
name, ratio, T, var = sys.argv[1], float(sys.argv[2]), float(sys.argv[3]), sys.argv[4]
dag = pickle.load(open(f"/tmp/bound18/{name}.pkl", "rb"))
base = float(dag.cost.sum()); budget = math.ceil(ratio * checkpoint_all(dag).peak(dag))
pct = lambda c: f"+{100 * (c / base - 1):.5f}%"
f = f"/tmp/bound18/{name}_{ratio}_evict.pkl"
if not os.path.exists(f):
    _imp = ss.improve; ss.improve = lambda *a, **k: None
    r = evict_search(dag, budget, deadline=time.perf_counter() + 60)
    pickle.dump((r[0], r[1]), open(f, "wb")); ss.improve = _imp
R, S = pickle.load(open(os.environ.get("START", f), "rb"))
if "nocap" in var or "old" in var:
    ss.IMPROVE_CANDIDATES = None
if "old" in var:
    ss.FREE_KEEPS_FIRST = False; ss.REPAIR_CHUNK = 0; ss.SWAP_CANDIDATES = 0
for kv in os.environ.get("SET", "").split():
    k, v = kv.split("="); setattr(ss, k, None if v == "None" else int(v))
SLICE = float(os.environ.get("SLICE", 10))
t0 = time.perf_counter(); end = t0 + T
st = ss.StageState(dag, budget, S)
print(var, "start", pct(st.total_cost()), flush=True)
while time.perf_counter() < end:
    sl = end if not var.startswith("loop") else min(end, time.perf_counter() + SLICE)
    ("old" in var or ss.improve(st, sl, repairs=False)); ss.improve(st, sl)
    c = st.total_cost()
    R2, S2 = clean(dag, st.R, st.S)
    c2 = float(R2.sum(axis=0) @ dag.cost)
    print(f"{time.perf_counter() - t0:6.1f}s improve {pct(c)} clean {pct(c2)}", flush=True)
    if not var.startswith("loop"):
        break
    if "old" in var and c2 >= c - 1e-9 and os.environ.get("STOP"):
        break
    if c2 < c - 1e-9:
        st = ss.StageState(dag, budget, S2)
