"""lay2.py EVENTS.pkl...: other greedy orders and placement rules on captured events (scratch)."""
import gzip
import pickle
import sys
import time

import numpy as np

from remc.passes import placement as pl


def place(size, start, end, order, rule="best"):
    n = len(size)
    off = np.zeros(n, dtype=np.int64)
    placed = np.zeros(n, dtype=bool)
    for i in order:
        s, e, sz = start[i], end[i], size[i]
        idx = np.flatnonzero(placed & (start < e) & (end > s))
        if len(idx):
            o = off[idx]
            k = np.argsort(o, kind="stable")
            o, tops = o[k], o[k] + size[idx][k]
            reach = np.maximum.accumulate(tops)
            prev = np.concatenate(([0], reach[:-1]))
            gaps = o - prev
            fits = np.flatnonzero(gaps >= sz)
            if len(fits):
                j = fits[np.argmin(gaps[fits])] if rule == "best" else fits[0]
                off[i] = prev[j]
            else:
                off[i] = reach[-1]
        placed[i] = True
    return off


def gravity(size, start, end, off):
    """Re-place each block, lowest first, at the lowest offset free of the others (a compaction pass)."""
    off = off.copy()
    for i in np.argsort(off, kind="stable"):
        s, e, sz = start[i], end[i], size[i]
        idx = np.flatnonzero((start < e) & (end > s))
        idx = idx[idx != i]
        o = off[idx]
        k = np.argsort(o, kind="stable")
        o, tops = o[k], o[k] + size[idx][k]
        reach = np.maximum.accumulate(tops) if len(o) else np.array([], dtype=np.int64)
        prev = np.concatenate(([0], reach[:-1])) if len(o) else np.array([0])
        gaps = o - prev[:len(o)] if len(o) else np.array([])
        fits = np.flatnonzero(gaps >= sz)
        cand = prev[fits[0]] if len(fits) else (reach[-1] if len(o) else 0)
        if cand < off[i]:
            off[i] = cand
    return off


for path in sys.argv[1:]:
    ev = pickle.load(gzip.open(path) if path.endswith(".gz") else open(path, "rb"))
    blocks = pl.blocks_of(ev)
    lb, _ = pl.live_peak(blocks)
    size = np.array([b.size for b in blocks], dtype=np.int64)
    start = np.array([b.start for b in blocks], dtype=np.int64)
    end = np.array([b.end for b in blocks], dtype=np.int64)
    dur = end - start
    print(f"{path}: {len(blocks)} blocks, lb {lb}")
    keys = {"size": (start, -dur, -size), "area": (start, -size, -dur * size), "time": (-size, start),
            "size-start": (-dur, start, -size), "dur": (start, -size, -dur), "end": (-size, end),
            "size-end": (end, -size), "rev-time": (-size, -end)}
    best = None
    for name, key in keys.items():
        order = np.lexsort(key)
        for rule in ("best", "first"):
            c = time.process_time()
            off = place(size, start, end, order, rule)
            h = int((off + size).max())
            g = gravity(size, start, end, off)
            hg = int((g + size).max())
            print(f"  {name:10s} {rule:5s}: +{h / lb - 1:.4%}  gravity +{hg / lb - 1:.4%}  cpu {time.process_time() - c:.2f}",
                  flush=True)
