"""Parallel columns and rows of the covering MILP (one pass, exact up to 1e-9 after scaling by the first entry),
by kind of column/row.   python parallel.py GRAPH RATIO"""
import math, sys
from collections import Counter, defaultdict
import numpy as np
from remc.ir import nodelink
from remc.ir.schedule import checkpoint_all
from remc.passes import coverbound as cb

g, ratio = sys.argv[1], float(sys.argv[2])
dag = nodelink.load_nodelink(g)
budget = math.ceil(checkpoint_all(dag).peak(dag) * ratio)
cm = cb.build_cover(dag, budget, depth=1, max_columns=None, kept=False)
M = cm.model
A = M.A.scipy().tocsc()
npair = cm.pairs
kind = np.array(["pair"] * M.num_col, dtype=object)
nres = (M.num_col - npair) // 2
kind[npair:npair + nres] = "res"
kind[npair + nres:] = "comp"
print("cols", M.num_col, "pairs", npair, "res", nres, "over", cm.over, "rows", M.num_row, "units", dag.n)
sig = defaultdict(list)
for j in range(M.num_col):
    s, e = A.indptr[j], A.indptr[j + 1]
    rows, vals = A.indices[s:e], A.data[s:e]
    if len(vals) == 0:
        key = ("empty",)
    else:
        sc = vals[0]
        key = (tuple(rows), tuple(np.round(vals / sc, 9)), round(M.col_cost[j] / sc, 12))
    sig[key].append(j)
dup = [v for v in sig.values() if len(v) > 1]
print("parallel column groups", len(dup), "columns in them", sum(len(v) for v in dup),
      Counter(tuple(sorted(Counter(kind[v]).items())) for v in dup).most_common(5))
R = A.tocsr()
rsig = defaultdict(list)
for i in range(M.num_row):
    s, e = R.indptr[i], R.indptr[i + 1]
    cols, vals = R.indices[s:e], R.data[s:e]
    sc = abs(vals[0])
    rsig[(tuple(cols), tuple(np.round(vals / sc, 9)))].append(i)
rd = [v for v in rsig.values() if len(v) > 1]
print("parallel row groups", len(rd), "rows in them", sum(len(v) for v in rd))
# column degree stats per kind
deg = np.diff(A.indptr)
for k in ("pair", "res", "comp"):
    print(k, "degree histogram", sorted(Counter(deg[kind == k]).items())[:10])
