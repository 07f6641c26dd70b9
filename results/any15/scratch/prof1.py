import cProfile, pstats, math, sys, time
from remc.ir.nodelink import load_nodelink
from remc.ir.schedule import checkpoint_all
from remc.passes import evict
dag = load_nodelink(sys.argv[1]); budget = math.ceil(float(sys.argv[2]) * checkpoint_all(dag).peak(dag))
w, c, net = evict.VARIANTS[int(sys.argv[3])]
r = evict.EvictRun(dag, budget, weight=w, closure=c, net=net)
cProfile.run("r.advance(None)", "/tmp/any15-prof")
pstats.Stats("/tmp/any15-prof").sort_stats("tottime").print_stats(12)
