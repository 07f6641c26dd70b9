"""Each eviction setting (evict.VARIANTS) run alone on a graph at a ratio: rows per unit, CPU s, fit or not.
python evset.py RATIO WALL_CAP GRAPH... (a GRAPH 'L:N:SEED' is tools/layered.py's layered_dag(N, 10, SEED))"""
import math, sys, time
sys.path.insert(0, "/work/wt/any18/tools")
from remc.ir.nodelink import load_nodelink
from remc.ir.schedule import checkpoint_all
from remc.passes import evict
ratio, cap = float(sys.argv[1]), float(sys.argv[2])
for g in sys.argv[3:]:
    if g.startswith("L:"):
        from layered import layered_dag
        _, n, seed = g.split(":"); dag = layered_dag(int(n), 10, int(seed)); name = g
    else:
        dag = load_nodelink(g); name = g.split("/")[-1][:40]
    B = math.ceil(ratio * checkpoint_all(dag).peak(dag))
    out = []
    for w, c, net in evict.VARIANTS:
        r = evict.EvictRun(dag, B, weight=w, closure=c, net=net)
        c0 = time.process_time()
        r.advance(time.perf_counter() + cap)
        cpu = time.process_time() - c0
        tag = "FIT" if r.result is not None else ("fail" if r.done else "cut")
        out.append(f"{tag} {r.rows / dag.n:.1f}r/u {cpu:.1f}s" + (f" +{100*(r.result.total_cost()/dag.cost.sum()-1):.0f}%" if r.result is not None else ""))
    print(f"{name} {ratio} n={dag.n}: " + " | ".join(out), flush=True)
