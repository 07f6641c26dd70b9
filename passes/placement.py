"""Static tensor placement: an address for every allocation of a lowered graph in one buffer.

ONNX Runtime's BFC arena decides where each tensor lives as the run goes, and recomputation fragments it:
plans whose live bytes fit a budget replayed at up to 1.6x it on the CUDA arena (issue 11). remc can
instead decide the addresses itself, as OLLA and Coop do: the allocation and free sequence a lowered
graph makes on a device is known in advance (``passes.arena.graph_events``), so every allocation gets
an offset in one buffer such that no two tensors whose lifetimes overlap overlap in address. The buffer
needs the layout's ``height`` (bytes from its start to the highest end), never less than ``lower_bound``,
the largest sum of live bytes at any moment.

The layout is dynamic storage allocation (NP-hard in general). ``layout`` uses the greedy heuristic of
TFLite's and OLLA's planners: blocks in decreasing order of size (then of lifetime length, and in order
of time, keeping the lowest), each at the best-fitting gap among the already placed blocks whose lifetimes
overlap its own (the smallest gap that holds it, else on top of them). Sizes are rounded up to 256 bytes,
so every offset is 256-byte aligned.

The sequence (``Layout.sequence``): session creation (initializers, alive to the end), then one run: per
node its temporaries (CPU ``Where``), outputs, first-run-only kept buffers, scratch (allocated and freed
inside the node), then frees; the run's remaining outputs are freed when it ends. Later runs make the same
requests less the kept buffers, so one layout serves every run. Pure: imports nothing of ONNX Runtime.
"""
from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from .arena import GraphEvents, rounded

CREATE, RUN = "create", "run"


@dataclass(frozen=True)
class Block:
    """One allocation: ``size`` bytes (256-rounded) alive over event times [start, end)."""

    size: int
    start: int
    end: int
    phase: str
    """``CREATE`` (session creation) or ``RUN``."""
    first_run_only: bool = False
    """Kept by a kernel from its first run (not requested again by later runs)."""
    what: str = ""
    request: int = -1
    """When it is requested (event time; -1: ``start``). A buffer kept from the first run is requested at its
    node but occupies its place from the run's start on: a later run reuses the offsets from its start."""


@dataclass(frozen=True)
class Layout:
    """An offset per block, and what the buffer must hold."""

    blocks: tuple[Block, ...]
    offsets: tuple[int, ...]
    height: int
    """Bytes from the buffer's start to the highest block end."""
    lower_bound: int
    """Largest sum of live bytes at one time: no layout is lower."""
    peak_what: str = ""
    order: str = ""
    """Which greedy order gave this layout."""
    upper_bound_only: bool = False
    """The greedy layout where CP-SAT's improvement was skipped for lack of time (``backends.placement.
    best_layout``): the run's layout is at most this high."""
    stored: bool = False
    """Read from a compiled model (``layout_from_text``), not computed here."""

    def sequence(self, phase: str, first_run: bool = True) -> list[tuple[int, int]]:
        """(size, offset) of the allocations of ``phase`` in request order (later runs: no kept buffers)."""
        return [(b.size, o) for b, o in sorted(zip(self.blocks, self.offsets), key=lambda bo: _when(bo[0]))
                if b.phase == phase and (first_run or not b.first_run_only)]


    def scratch_flags(self, phase: str, first_run: bool = True) -> list[bool]:
        """Per entry of ``sequence(phase, first_run)``: whether it is a kernel's scratch (its bytes are the
        kernel's measured peak of temporaries, which it may request as several buffers)."""
        return [b.what.startswith("scratch of ") for b, _ in sorted(zip(self.blocks, self.offsets),
                                                                    key=lambda bo: _when(bo[0]))
                if b.phase == phase and (first_run or not b.first_run_only)]


def _when(b: Block) -> int:
    return b.start if b.request < 0 else b.request


def blocks_of(events: GraphEvents, include_initializers: bool = True) -> list[Block]:
    """The allocations of session creation and one run of ``events``, in request order, with lifetimes."""
    t = 0
    out: list[Block] = []
    open_: dict[int, tuple[int, int, str, str, bool]] = {}  # id -> (size, start, phase, what, first_only)
    forever: list[tuple[int, int, str, str, bool]] = []
    nid = 0

    def alloc(size: int, phase: str, what: str, first_only: bool = False, keep: bool = False) -> int | None:
        nonlocal t, nid
        if size <= 0:
            return None
        rec = (rounded(size), t, phase, what, first_only)
        t += 1
        if keep:
            forever.append(rec)
            return None
        nid += 1
        open_[nid] = rec
        return nid

    def free(i: int | None) -> None:
        nonlocal t
        if i is None:
            return
        size, start, phase, what, first_only = open_.pop(i)
        out.append(Block(size, start, t, phase, first_only, what))
        t += 1

    if include_initializers:
        for s in events.initializer_sizes:
            alloc(s, CREATE, "initializer", keep=True)
        shared = events.prepack_shared or (False,) * len(events.prepack_sizes)
        for s, again in zip(events.prepack_sizes, shared):
            if again:  # packed, then freed: the kernel shares the first node's copy
                free(alloc(s, CREATE, "pre-packed weight (shared)"))
            else:
                alloc(s, CREATE, "pre-packed weight", keep=True)
    run_start = t
    live: dict[str, int | None] = {}
    for ne in events.nodes:
        if ne.requests:  # the kernel's measured requests, each with its own lifetime
            sizes = dict(ne.allocs)
            temps: list[int | None] = []
            for r in ne.requests:
                if r[0] == "o":
                    live[r[1]] = alloc(sizes[r[1]], RUN, r[1])
                elif r[0] == "a":
                    temps.append(alloc(r[1], RUN, f"temporary of {ne.node}", first_only=bool(r[2])))
                elif r[0] == "f":
                    free(temps[r[1]])
                    temps[r[1]] = None
                elif r[0] == "k":
                    alloc(r[1], RUN, f"kept by {ne.node}", first_only=True, keep=True)
            for tmp in temps:
                free(tmp)
            for key in ne.frees:
                free(live.pop(key, None))
            continue
        pre = [alloc(b, RUN, f"temporary of {ne.node}") for b in ne.before]
        for key, size in ne.allocs:
            live[key] = alloc(size, RUN, key)
        if ne.persistent:
            alloc(ne.persistent, RUN, f"kept by {ne.node}", first_only=True, keep=True)
        for s in ne.scratch:
            free(alloc(s, RUN, f"scratch of {ne.node}"))
        for p in reversed(pre):
            free(p)
        for key in ne.frees:
            free(live.pop(key, None))
    for i in list(open_):
        free(i)
    end = t + 1
    out += [Block(s, run_start if fo else st, end, ph, fo, w, st) for s, st, ph, w, fo in forever]
    out.sort(key=_when)  # request order
    return out


def live_peak(blocks: list[Block] | tuple[Block, ...]) -> tuple[int, str]:
    """Largest sum of live block sizes at one time, and the block allocated when it was reached."""
    if not blocks:
        return 0, ""
    ev = sorted([(b.start, 1, b.size, b.what) for b in blocks] + [(b.end, 0, -b.size, "") for b in blocks])
    cur, best, what = 0, 0, ""
    for _, _, d, w in ev:  # at equal times frees (0) come before allocations (1)
        cur += d
        if cur > best:
            best, what = cur, w
    return best, what


ORDERS = ("size", "area", "time", "size-first-fit")
"""The greedy orders ``layout`` tries, keeping the lowest. ``size-first-fit``: the 'size' order, each block at the
lowest gap that holds it rather than the smallest: on a torchvision Swin-T training step (3561 blocks, most of
them 9 MiB) best fit left the layout 3.44% above the live lower bound in its best order, first fit 1.06%; on
the unmodified graph 1.85% against 0.65% (``results/any20``)."""
FIRST_FIT = frozenset({"size-first-fit"})
"""The orders placed by first fit (``_place``)."""


def _place(size: np.ndarray, start: np.ndarray, end: np.ndarray, order: np.ndarray,
           fixed: Mapping[int, int] | None = None, first_fit: bool = False) -> np.ndarray:
    """Greedy placement of the blocks in ``order`` (around the blocks of ``fixed``, index -> offset, already in
    place): each at the smallest gap that holds it (best fit) or, ``first_fit``, at the lowest one; else on top
    of the placed blocks whose lifetimes overlap its own. Their offsets."""
    n = len(size)
    off = np.zeros(n, dtype=np.int64)
    placed = np.zeros(n, dtype=bool)
    for i, at in (fixed or {}).items():
        off[i], placed[i] = at, True
    for i in order:
        if placed[i]:
            continue
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
                j = fits[0] if first_fit else fits[np.argmin(gaps[fits])]
                off[i] = prev[j]
            else:
                off[i] = reach[-1]
        placed[i] = True
    return off


def layout(events: GraphEvents | list[Block], orders: tuple[str, ...] = ORDERS) -> Layout:
    """A layout of ``events`` (or of given blocks): the lowest of the greedy ``orders`` (module docstring)."""
    blocks = tuple(events if isinstance(events, list) else blocks_of(events))
    lb, what = live_peak(blocks)
    if not blocks:
        return Layout((), (), 0, 0, "", "")
    size = np.array([b.size for b in blocks], dtype=np.int64)
    start = np.array([b.start for b in blocks], dtype=np.int64)
    end = np.array([b.end for b in blocks], dtype=np.int64)
    keys = {"size": (start, -(end - start), -size), "area": (start, -size, -(end - start) * size),
            "time": (-size, start)}
    keys["size-first-fit"] = keys["size"]
    best: tuple[int, np.ndarray, str] | None = None
    for name in orders:
        order = np.lexsort(keys[name])
        off = _place(size, start, end, order, first_fit=name in FIRST_FIT)
        h = int((off + size).max())
        if best is None or h < best[0]:
            best = (h, off, name)
        if h == lb:
            break
    assert best is not None
    return Layout(blocks, tuple(int(x) for x in best[1]), best[0], lb, what, best[2])


def place_around(lay: Layout, fixed: Mapping[int, int], order: str) -> Layout:
    """``lay``'s blocks with those of ``fixed`` (index -> 256-aligned offset, not overlapping each other) where
    it says, the rest placed around them by the greedy best fit in the 'size' order; ``order`` names it."""
    blocks = lay.blocks
    size = np.array([b.size for b in blocks], dtype=np.int64)
    start = np.array([b.start for b in blocks], dtype=np.int64)
    end = np.array([b.end for b in blocks], dtype=np.int64)
    off = _place(size, start, end, np.lexsort((start, -(end - start), -size)), fixed)
    return Layout(blocks, tuple(int(x) for x in off), int((off + size).max()), lay.lower_bound, lay.peak_what, order)


def overlaps(lay: Layout) -> list[tuple[int, int]]:
    """Pairs of blocks (indices) that are alive at the same time and overlap in address: none for a valid layout."""
    b, o = lay.blocks, lay.offsets
    order = sorted(range(len(b)), key=lambda i: b[i].start)
    bad = []
    active: list[int] = []
    for i in order:
        active = [j for j in active if b[j].end > b[i].start]
        for j in active:
            if o[i] < o[j] + b[j].size and o[j] < o[i] + b[i].size:
                bad.append((j, i))
        active.append(i)
    return bad


# ---------------------------------------------------------------------------------------------------
# A layout carried by a compiled model
# ---------------------------------------------------------------------------------------------------

LAYOUT_KEY = "remc.layout"
"""The compiled model's metadata entry that carries its layout (``layout_to_text``)."""
LAYOUT_FORMAT = 1


def layout_to_text(lay: Layout, tag: str) -> str:
    """``lay`` as one JSON line for a model's metadata: every block's size, lifetime, phase and request time with
    its offset, and ``tag`` (what the layout was computed for: device, ONNX Runtime version, settings)."""
    import json
    return json.dumps({"format": LAYOUT_FORMAT, "tag": tag, "height": lay.height, "order": lay.order,
                       "blocks": [[b.size, b.start, b.end, b.phase, int(b.first_run_only), b.request, o]
                                  for b, o in zip(lay.blocks, lay.offsets)]}, separators=(",", ":"))


def layout_from_text(text: str, blocks: tuple[Block, ...] | list[Block], tag: str) -> tuple[Layout | None, str]:
    """The stored layout ``text`` for ``blocks`` (this run's, from its own events) when it is for ``tag`` and its
    blocks are exactly these (size, lifetime, phase, request time) and no two live blocks overlap, else
    (None, why not). The blocks (with their names) are this run's, the offsets and height the stored ones."""
    import json
    try:
        d = json.loads(text)
        stored = [(int(s), int(a), int(e), str(ph), bool(f), int(r), int(o)) for s, a, e, ph, f, r, o in d["blocks"]]
        fmt, stored_tag, height = d.get("format"), d.get("tag"), int(d["height"])
    except (ValueError, KeyError, TypeError) as exc:
        return None, f"the stored layout cannot be read ({exc})"
    if fmt != LAYOUT_FORMAT:
        return None, f"the stored layout has format {fmt}, this remc reads {LAYOUT_FORMAT}"
    if stored_tag != tag:
        return None, f"the stored layout is for {stored_tag}, this run is {tag}"
    mine = [(b.size, b.start, b.end, b.phase, b.first_run_only, b.request) for b in blocks]
    if len(mine) != len(stored):
        return None, f"the stored layout has {len(stored)} allocations, this run's events {len(mine)}"
    for k, (m, s) in enumerate(zip(mine, stored)):
        if m != s[:6]:
            return None, (f"allocation {k} ({blocks[k].what or '?'}) differs: stored {s[:6]}, this run's events {m} "
                          "(kernel memory measured differently here?)")
    offsets = tuple(s[6] for s in stored)
    lb, what = live_peak(list(blocks))
    lay = Layout(tuple(blocks), offsets, height, lb, what, str(d.get("order", "")), stored=True)
    if any(o < 0 or o % 256 or o + b.size > height for b, o in zip(blocks, offsets)) or overlaps(lay):
        return None, "the stored layout is not valid for these allocations"
    return lay, ""


# ---------------------------------------------------------------------------------------------------
# Graph outputs bound inside the buffer (CUDA graph replay on the compiled layout)
# ---------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class BoundOutputs:
    """A layout split for a run that binds graph outputs at their planned offsets (``bind_outputs``)."""

    layout: Layout
    """The layout less the bound outputs' blocks: the requests the allocator still sees, every other block at its
    planned offset; height and lower bound those of the whole layout (the buffer is the same)."""
    at: dict[str, tuple[int, int]]
    """Graph output -> (offset, 256-rounded bytes) of its block in the layout: where the caller binds it."""
    outside: tuple[str, ...]
    """Graph outputs the layout has no block for (in no allocation of the run: an output ONNX Runtime does not
    allocate on this device, or one that is a graph input or initializer): bound outside the buffer."""

    def extent(self) -> int:
        """The highest end of a bound output's range (0: none): the buffer holds at least this much."""
        return max((o + s for o, s in self.at.values()), default=0)


def bind_outputs(lay: Layout, outputs: list[str] | tuple[str, ...]) -> BoundOutputs:
    """Where each of ``outputs`` (the graph's outputs) lies in ``lay``, and ``lay`` without those blocks.

    A graph output's block is its run-phase allocation named after it (``blocks_of``: a node output's block
    carries the value's name); it lives from its producer to the end of the run. A caller that binds the output
    at that offset (IOBinding with a tensor over the buffer) makes ONNX Runtime write it there instead of
    requesting it, so the allocator's request sequence drops exactly those requests and keeps every other
    request's planned offset: the compiled layout, and its height, unchanged. Before the producer runs other
    blocks may use that range, as in the layout. ValueError for a name that two blocks carry."""
    names = set(outputs)
    at: dict[str, tuple[int, int]] = {}
    keep_b: list[Block] = []
    keep_o: list[int] = []
    for b, o in zip(lay.blocks, lay.offsets):
        if b.phase == RUN and b.what in names and not b.first_run_only:
            if b.what in at:
                raise ValueError(f"graph output {b.what!r} has two allocations in the layout")
            at[b.what] = (int(o), int(b.size))
            continue
        keep_b.append(b)
        keep_o.append(o)
    rest = dataclasses.replace(lay, blocks=tuple(keep_b), offsets=tuple(keep_o))
    return BoundOutputs(rest, at, tuple(n for n in outputs if n not in at))
