import math
import pickle
import sys

from mapcheck import mapcheck

from remc.ir.nodelink import load_nodelink
from remc.ir.schedule import checkpoint_all

path, ratio, pkl = sys.argv[1], float(sys.argv[2]), sys.argv[3]
dag = load_nodelink(path)
budget = math.ceil(checkpoint_all(dag).peak(dag) * ratio)
s = pickle.load(open(pkl, "rb"))
print("peak", s.peak(dag), "budget", budget)
for d in (1, 2, 4):
    cm, x, bad, ax, obj, overhead, info = mapcheck(dag, budget, s.R, s.S, d)
    print(d, "cols", cm.model.num_col, "rows", cm.model.num_row if hasattr(cm.model, "num_row") else len(ax), "violated", len(bad), "obj", obj, "overhead", overhead)
