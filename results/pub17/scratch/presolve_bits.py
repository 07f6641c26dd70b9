"""HiGHS' presolve alone on the covering MILP of one graph/ratio with presolve_rule_off = MASK: its time and the
reduced size.   python presolve_bits.py GRAPH RATIO MASK [k=v ...]"""
import math, sys, time
import numpy as np
from remc.ir import nodelink
from remc.ir.schedule import checkpoint_all
from remc.backends import highs as hb
from remc.passes import coverbound as cb

g, ratio, mask = sys.argv[1], float(sys.argv[2]), int(sys.argv[3])
dag = nodelink.load_nodelink(g)
budget = math.ceil(checkpoint_all(dag).peak(dag) * ratio)
cm = cb.build_cover(dag, budget, depth=1, max_columns=None, kept=False)
h, clock = hb._load_highs(cm.model, True, 1, 1e-6)
h.setOptionValue("presolve_rule_off", mask)
for kv in sys.argv[4:]:
    k, v = kv.split("=")
    cur = h.getOptionValue(k)[1]
    h.setOptionValue(k, (v.lower() in ("1", "true")) if isinstance(cur, bool) else v if isinstance(cur, str) else type(cur)(eval(v)))
c0 = time.process_time()
st = h.presolve()
lp = h.getPresolvedLp()
print(f"mask {mask} {sys.argv[4:]} presolve cpu {time.process_time()-c0:.2f} s -> {lp.num_col_} cols {lp.num_row_} rows ({st})", flush=True)
