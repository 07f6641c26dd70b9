"""lay.py EVENTS.pkl...: remc's layout of captured graph events: each greedy order's height, CP-SAT's (best_layout,
no time limit), against the live lower bound; CPU seconds."""
import gzip
import pickle
import sys
import time

import numpy as np

from remc.backends.placement import best_layout
from remc.passes import placement as pl

for path in sys.argv[1:]:
    ev = pickle.load(gzip.open(path) if path.endswith(".gz") else open(path, "rb"))
    blocks = pl.blocks_of(ev)
    lb, _ = pl.live_peak(blocks)
    print(f"{path}: {len(blocks)} blocks, live lower bound {lb}")
    for o in pl.ORDERS:
        c = time.process_time()
        lay = pl.layout(list(blocks), orders=(o,))
        print(f"  greedy {o:5s}: height {lay.height} (+{lay.height / lb - 1:.4%}) cpu {time.process_time() - c:.2f}")
    c = time.process_time()
    lay = best_layout(ev)
    print(f"  best_layout: height {lay.height} (+{lay.height / lb - 1:.4%}) {lay.order} cpu {time.process_time() - c:.2f}")
    sizes = np.array(sorted((b.size for b in blocks), reverse=True))
    print("  largest blocks (MiB):", [round(s / 2**20, 1) for s in sizes[:12]], "n>=4MiB", int((sizes >= 4 << 20).sum()),
          "n>=16MiB", int((sizes >= 16 << 20).sum()))
