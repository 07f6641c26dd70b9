"""window_bound on one graph: python wrun.py GRAPH RATIO SECONDS DEPTH WINDOW_COLUMNS ROUNDS"""
import math, resource, sys, time
from remc.backends.highs import HighsBackend
from remc.ir.nodelink import load_nodelink
from remc.ir.schedule import checkpoint_all
from remc.passes.coverbound import build_cover, cut_windows, window_bound

g, r, secs, depth, wc, rounds = sys.argv[1], float(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]), int(sys.argv[6])
if g.endswith(".json"):
    dag = load_nodelink(g)
else:
    sys.path.insert(0, "tools")
    from bench_scale import _graph
    dag = _graph(g, 0, 0)
base = float(dag.cost.sum())
b = math.ceil(r * checkpoint_all(dag).peak(dag))
t = time.time()
cm = build_cover(dag, b, depth=depth, max_columns=None)
w = cut_windows(cm, wc)
print("build", f"{time.time()-t:.1f}s", cm.model.num_col, cm.model.num_row, "windows", len(w.bounds) - 1, "rows cut", int((w.row_win < 0).sum()), flush=True)
del cm, w
lam = None
if len(sys.argv) > 7 and sys.argv[7] == "lam":
    from remc.passes.bounds import gap_bound
    t = time.time()
    gb = gap_bound(dag, b, iterations=1000, deadline=time.perf_counter() + 40, strong=False, nested=False)
    lam = gb.lam
    print(f"gap_bound +{100*(gb.bound/base-1):.5f}% in {time.time()-t:.1f}s strong {gb.strong} nested {gb.nested}", flush=True)
cb = window_bound(dag, b, HighsBackend(), time_limit=secs, threads=1, depth=depth, window_columns=wc, rounds=rounds, lam=lam)
rss = max(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss) / 1024
print(f"{g.split('/')[-1][:24]} {r} d{depth} w{wc} r{rounds} window +{100*(cb.bound/base-1):.5f}% {cb.status} {cb.note} {cb.seconds:.1f}s cols {cb.columns} rss {rss:.0f}MiB", flush=True)
