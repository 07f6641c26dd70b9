import math, threading, time, sys
from remc.ir.nodelink import load_nodelink
from remc.ir.schedule import checkpoint_all
from remc.passes.coverbound import build_cover
from remc.backends.highs import solve_highs
dag = load_nodelink(sys.argv[1]); budget = math.ceil(checkpoint_all(dag).peak(dag) * float(sys.argv[2]))
cm = build_cover(dag, budget, depth=1, max_columns=30000)
print("cols", cm.model.num_col)
done = threading.Event(); out = {}
def run():
    t = time.perf_counter(); r = solve_highs(cm.model, integral=True, time_limit=20, threads=1, gap=1e-6, isolated=False)
    out["r"] = (r.status, round(time.perf_counter() - t, 2)); done.set()
th = threading.Thread(target=run); th.start()
gaps = []; last = time.perf_counter(); n = 0
while not done.is_set():
    now = time.perf_counter(); gaps.append(now - last); last = now; n += 1
gaps.sort(); print(out, "loop iters", n, "max gaps", [round(g, 3) for g in gaps[-4:]])
