"""Other greedy orders and local moves for remc's layout (passes/placement.py) of pickled events
(tools/layout_any_cpu.py): size only, first fit, random adjacent swaps, moving the block at the top earlier.

    python tools/layout_orders.py /tmp/gpuexp/ev_unet_1428169260.pkl
"""
# ruff: noqa: E401, E701, E702, I001, B007
import pickle, time, sys
import numpy as np
from remc.passes.placement import blocks_of, layout, live_peak, _place
ev = pickle.load(open(sys.argv[1], "rb"))
blocks = blocks_of(ev)
lb, _ = live_peak(blocks)
size = np.array([b.size for b in blocks]); start = np.array([b.start for b in blocks]); end = np.array([b.end for b in blocks])
print(len(blocks), "lb", lb)
t = time.time(); lay = layout(ev); print("layout", lay.height, lay.order, time.time() - t)
def h(order): off = _place(size, start, end, order); return int((off + size).max())
big = size >= 64 << 20
print("big blocks", big.sum(), "big temps", sum(1 for b, g in zip(blocks, big) if g and b.what.startswith("temporary")))
# order: by size desc only
t=time.time(); print("size only", h(np.argsort(-size, kind="stable")), time.time()-t)
# greedy by breadth: nodes by their live sum (time of peak)
rng = np.random.default_rng(0)
best = lay.height
base = np.lexsort((start, -(end - start), -size))
for it in range(30):
    o = base.copy()
    # perturb: swap some adjacent pairs
    for _ in range(20):
        i = rng.integers(0, len(o) - 1); o[i], o[i+1] = o[i+1], o[i]
    v = h(o)
    best = min(best, v)
print("random perturb best", best)

def place_first_fit(order):
    n = len(size); off = np.zeros(n, dtype=np.int64); placed = np.zeros(n, bool)
    for i in order:
        s, e, sz = start[i], end[i], size[i]
        idx = np.flatnonzero(placed & (start < e) & (end > s))
        if len(idx):
            o = off[idx]; k = np.argsort(o, kind="stable"); o, tops = o[k], o[k] + size[idx][k]
            reach = np.maximum.accumulate(tops); prev = np.concatenate(([0], reach[:-1])); gaps = o - prev
            fits = np.flatnonzero(gaps >= sz)
            off[i] = prev[fits[0]] if len(fits) else reach[-1]
        placed[i] = True
    return off
print("first fit size order", int((place_first_fit(base) + size).max()))
# iterated: move the critical block (highest top) earlier
o = list(base); best = h(np.array(o)); best_o = o[:]
t = time.time()
for it in range(300):
    off = _place(size, start, end, np.array(o)); tops = off + size
    crit = int(np.argmax(tops)); H = int(tops.max())
    if H < best: best, best_o = H, o[:]
    # blocks overlapping the critical one in time, that lie below it: move crit one step ahead of the block just below it
    pos = o.index(crit)
    if pos == 0: break
    j = max(0, pos - 1 - int(rng.integers(0, 5)))
    o.insert(j, o.pop(pos))
print("iterated critical", best, time.time() - t)
