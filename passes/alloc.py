"""Register-style static memory allocation: every virtual register of a plan gets a byte offset in one arena.

A plan's registers are buffers of known size (M_v of the unit they hold, from the plan's unit table) and
known lifetime: from ``%r = compute v`` at statement c to ``deallocate %r`` at statement d (program order,
stages flattened), or to the end of the plan when never deallocated. A unit's workspace (W_v) is a buffer
of its own that lives only while its compute statement runs, beside the unit's inputs and its output. Two
buffers may share bytes exactly when their lifetimes are disjoint. Packing them into the smallest arena is
offline dynamic storage allocation (NP-hard); ``allocate`` uses greedy placements, each putting one buffer
at a time into a hole left by the already placed buffers whose lifetimes overlap its own:

- ``greedy-by-size``: largest first (ties: longer lifetime first), each in the smallest hole that fits,
  as TFLite's and ONNX Runtime's static planners do; ``greedy-by-size-first-fit``: the lowest hole instead;
- ``greedy-by-breadth``: the buffers of the most crowded statements (largest live bytes over the buffer's
  lifetime) first, then by size (TFLite's "greedy by breadth");
- ``online``: program order, as a best-fit heap allocator would place them at run time;
  ``online-two-ended``: the same with the live peak as a ceiling: the space between the top buffer and the
  ceiling is a hole, filled from the ceiling down, so buffers that meet alternate between the two ends
  (exact on chains, where every placement from below can lose up to a third);
- ``squeaky-wheel`` (Joslin and Clements, 1999): rounds of first fit by priority, starting from the sizes;
  after each round the buffers that end above the live peak get 1.5 times their priority and move forward.

``best`` (the default) runs the one-pass heuristics, then the squeaky wheel, keeps the smallest arena and
stops at the first placement that reaches ``live_peak``, which no placement can beat. Each pass is
quadratic in the number of buffers, vectorized: about 0.15 s for 10^4 statements, so ``best`` takes up to
about 3 s there (less when it reaches the live peak early).

Offsets and sizes are multiples of ``alignment``. The arena holds activations only: the plan's constant
overhead (graph inputs, parameters and kept outputs, ``plan.constant``) lives outside it. ``live_peak`` is
the largest sum of aligned live bytes at any statement, the running unit's workspace included: the lower
bound for any arena of these aligned sizes. With ``alignment=1`` it equals the simulated peak minus
``plan.constant`` (``passes.validate.simulate``). ``fragmentation = arena_size / live_peak - 1`` is the
placement's loss against that bound; both count aligned sizes, so alignment padding is not in it.
"""
from __future__ import annotations

import bisect
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from remc.ir.errors import PlanError, RemcError
from remc.ir.plan import Compute, Plan, quote, where
from remc.ir.sizes import format_size


@dataclass(frozen=True, eq=False)
class Allocation:
    """Byte offsets in one activation arena for every register (and every workspace) of a plan."""

    offsets: dict[int, int]
    """Register -> byte offset of its buffer in the arena (0 for empty registers)."""
    sizes: dict[int, int]
    """Register -> bytes reserved for it: the unit's M_v rounded up to the alignment."""
    workspace_offsets: dict[int, int]
    """Register of a compute statement -> offset of the unit's workspace while that statement runs; only
    computes of units with a workspace (W_v > 0) appear."""
    workspace_sizes: dict[int, int]
    """Register of a compute statement -> bytes reserved for the workspace (W_v rounded up)."""
    arena_size: int
    """Bytes of the arena: the highest end of any buffer. Excludes the plan's constant overhead."""
    live_peak: int
    """Largest sum of aligned live buffer bytes (workspace of the running unit included) at any statement."""
    alignment: int
    """Every offset and size is a multiple of this."""
    method: str
    """The heuristic whose placement this is (see the module docstring)."""

    @property
    def fragmentation(self) -> float:
        """arena_size / live_peak - 1: 0.0 when the arena is as small as the live bytes allow."""
        return self.arena_size / self.live_peak - 1.0 if self.live_peak else 0.0


@dataclass(frozen=True)
class _Buffers:
    """The plan's buffers as arrays: lifetime [start, end) in statement positions, aligned size."""

    start: np.ndarray
    end: np.ndarray
    size: np.ndarray
    keys: list[tuple[str, int]]
    """("reg", r) for a register's buffer, ("ws", r) for the workspace of the compute defining r."""
    n_statements: int


def allocate(plan: Plan, *, alignment: int = 256, method: str = "best", rounds: int = 16) -> Allocation:
    """Give every register and workspace of ``plan`` an offset in one arena (see the module docstring).

    ``method``: "best" (every heuristic of ``HEURISTICS``, then ``rounds`` rounds of the squeaky wheel,
    keeping the smallest arena and stopping as soon as one reaches ``live_peak``), "squeaky-wheel" (its
    rounds alone) or one name of ``HEURISTICS``. PlanError for a malformed plan (a register defined twice,
    deallocated twice or never defined, a unit missing from the unit table).
    """
    if not isinstance(alignment, int) or isinstance(alignment, bool) or alignment < 1:
        raise RemcError(f"allocation alignment must be a positive integer, got {alignment!r}")
    if method not in METHODS:
        raise RemcError(f"unknown allocation method {method!r}; methods are {', '.join(METHODS)}")
    if not isinstance(rounds, int) or rounds < 1:
        raise RemcError(f"allocation rounds must be a positive integer, got {rounds!r}")
    buf = _buffers(plan, alignment)
    breadth = _breadth(buf)
    live_peak = int(breadth.max()) if len(breadth) else 0
    search = _Search(buf, live_peak)
    for name in list(HEURISTICS) if method == "best" else [method] if method in HEURISTICS else []:
        h = HEURISTICS[name]
        offsets = _place(buf, h.order(buf, breadth), first_fit=h.first_fit,
                         ceiling=live_peak if h.two_ended else None)
        if search.keep(name, offsets):
            break
    if method in ("best", "squeaky-wheel"):
        _squeaky_wheel(search, rounds)
    return search.result(alignment)


@dataclass
class _Search:
    """The smallest placement found so far; ``done`` once one is as small as the live peak."""

    buf: _Buffers
    live_peak: int
    arena: int = -1
    offsets: np.ndarray | None = None
    method: str = ""

    @property
    def done(self) -> bool:
        return self.arena == self.live_peak

    def keep(self, method: str, offsets: np.ndarray) -> bool:
        """Record a placement if it is the smallest yet; True when it reaches the live peak."""
        arena = int((offsets + self.buf.size).max()) if len(offsets) else 0
        if self.offsets is None or arena < self.arena:
            self.arena, self.offsets, self.method = arena, offsets, method
        return self.done

    def result(self, alignment: int) -> Allocation:
        assert self.offsets is not None
        return _result(self.buf, self.offsets, self.arena, self.live_peak, alignment, self.method)


def _squeaky_wheel(search: _Search, rounds: int, boost: float = 1.5) -> None:
    """Squeaky-wheel optimization (Joslin and Clements, 1999) of first fit by size: after each round, the
    buffers that end above the live peak have their priority (initially their size) multiplied by
    ``boost``, so the next round places them earlier."""
    buf = search.buf
    priority = buf.size.astype(np.float64)
    for _ in range(rounds):
        if search.done:
            return
        order = np.lexsort((buf.start, -(buf.end - buf.start), -priority))
        offsets = _place(buf, order, first_fit=True, ceiling=None)
        search.keep("squeaky-wheel", offsets)
        priority[offsets + buf.size > search.live_peak] *= boost


def _buffers(plan: Plan, alignment: int) -> _Buffers:
    """Lifetimes and aligned sizes of every register and every non-empty workspace of the plan."""
    units = {u.name: u for u in plan.units}
    rows: list[list[int]] = []  # [start, end, size] per buffer; end -1 until deallocated
    keys: list[tuple[str, int]] = []
    live: dict[int, int] = {}  # register -> index of its buffer
    defined: set[int] = set()
    t = -1
    for t, (s, j, st) in enumerate(plan.statements()):
        if not isinstance(st, Compute):
            if st.reg not in live:
                why = "already deallocated" if st.reg in defined else "not defined"
                raise PlanError(f"{where(s, j)} ({st}): register %{st.reg} is {why}")
            rows[live.pop(st.reg)][1] = t
            continue
        unit = units.get(st.unit)
        if unit is None:
            raise PlanError(f"{where(s, j)} ({st}): unit {quote(st.unit)} is not in the unit table")
        if st.reg in defined:
            raise PlanError(f"{where(s, j)} ({st}): register %{st.reg} is already defined")
        defined.add(st.reg)
        live[st.reg] = len(rows)
        rows.append([t, -1, _round(unit.mem, alignment)])
        keys.append(("reg", st.reg))
        if unit.workspace:
            rows.append([t, t + 1, _round(unit.workspace, alignment)])
            keys.append(("ws", st.reg))
    for b in live.values():
        rows[b][1] = t + 1
    a = np.asarray(rows, np.int64).reshape(-1, 3)
    return _Buffers(a[:, 0].copy(), a[:, 1].copy(), a[:, 2].copy(), keys, t + 1)


def _round(n: int, alignment: int) -> int:
    return -(-int(n) // alignment) * alignment


def _breadth(buf: _Buffers) -> np.ndarray:
    """int64[n_statements]: aligned bytes live at each statement (a compute's workspace included)."""
    delta = np.zeros(buf.n_statements + 1, np.int64)
    np.add.at(delta, buf.start, buf.size)
    np.add.at(delta, buf.end, -buf.size)
    return np.cumsum(delta)[:-1]


def _by_size(buf: _Buffers, breadth: np.ndarray) -> np.ndarray:
    """Largest first; ties by longer lifetime, then earlier start."""
    return np.lexsort((buf.start, -(buf.end - buf.start), -buf.size))


def _by_breadth(buf: _Buffers, breadth: np.ndarray) -> np.ndarray:
    """Buffers live at the most crowded statements first; then largest first, then earlier start."""
    return np.lexsort((buf.start, -buf.size, -_range_max(breadth, buf.start, buf.end)))


def _online(buf: _Buffers, breadth: np.ndarray) -> np.ndarray:
    """Program order (what a best-fit heap allocator sees); a compute's output before its workspace."""
    return np.lexsort((np.arange(len(buf.size)), buf.start))


@dataclass(frozen=True)
class Heuristic:
    """A one-pass placement: an order of the buffers and how a buffer picks its place."""

    order: Callable[[_Buffers, np.ndarray], np.ndarray]
    """(buffers, breadth per statement) -> the order in which buffers are placed."""
    first_fit: bool = False
    """Take the lowest hole that fits instead of the smallest."""
    two_ended: bool = False
    """Treat the live peak as a ceiling: the space between the top buffer and it is a hole, and a buffer
    placed there goes flush against the ceiling (buffers that meet then alternate between the two ends)."""


HEURISTICS: dict[str, Heuristic] = {
    "greedy-by-size": Heuristic(_by_size),
    "greedy-by-size-first-fit": Heuristic(_by_size, first_fit=True),
    "greedy-by-breadth": Heuristic(_by_breadth),
    "online": Heuristic(_online),
    "online-two-ended": Heuristic(_online, two_ended=True),
}
"""The one-pass heuristics by method name, in the order ``best`` tries them."""

METHODS = ("best", *HEURISTICS, "squeaky-wheel")
"""Every value of ``allocate``'s ``method``."""


def _range_max(values: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """max(values[lo[i]:hi[i]]) for every i (all ranges non-empty), by a sparse table."""
    if len(lo) == 0:
        return np.zeros(0, values.dtype)
    table = [values]  # table[j][i] = max(values[i:i + 2**j])
    while (1 << len(table)) <= len(values):
        k = 1 << (len(table) - 1)
        table.append(np.maximum(table[-1][:-k], table[-1][k:]))
    level = np.floor(np.log2(hi - lo)).astype(np.int64)
    out = np.empty(len(lo), values.dtype)
    for j in np.unique(level):
        m = level == j
        row = table[j]
        out[m] = np.maximum(row[lo[m]], row[hi[m] - (1 << j)])
    return out


def _place(buf: _Buffers, order: np.ndarray, *, first_fit: bool, ceiling: int | None) -> np.ndarray:
    """Offsets from placing the buffers one by one in ``order``, each in a hole among the placed buffers
    that are live at the same time (see ``_hole``), or on top of them when no hole fits."""
    offsets = np.zeros(len(order), np.int64)
    placed = np.empty((4, len(order)), np.int64)  # rows lo, hi, start, end of placed buffers, sorted by lo
    k = 0
    for b in order.tolist():
        size = int(buf.size[b])
        if size == 0:
            continue
        s, e = int(buf.start[b]), int(buf.end[b])
        near = placed[:, np.flatnonzero((placed[2, :k] < e) & (placed[3, :k] > s))]
        off = _hole(near[0], near[1], size, first_fit, ceiling)
        i = int(np.searchsorted(placed[0, :k], off, side="right"))
        placed[:, i + 1:k + 1] = placed[:, i:k]
        placed[:, i] = (off, off + size, s, e)
        offsets[b] = off
        k += 1
    return offsets


def _hole(lo: np.ndarray, hi: np.ndarray, size: int, first_fit: bool, ceiling: int | None) -> int:
    """Where a buffer of ``size`` bytes goes among the blocks [lo, hi) (``lo`` ascending): the start of the
    smallest hole that fits (the lowest on ties, or always with ``first_fit``), else the top of the blocks.
    With a ``ceiling``, the space from the top of the blocks up to it is a hole too, filled from the top."""
    if len(lo) == 0:
        return 0
    covered = np.maximum.accumulate(hi)
    top = int(covered[-1])
    starts = np.concatenate(([0], covered[:-1], [top]))
    ends = np.concatenate((lo, [top if ceiling is None else max(ceiling, top)]))
    gap = ends - starts
    fits = np.flatnonzero(gap >= size)
    if len(fits) == 0:
        return top
    j = int(fits[0] if first_fit else fits[np.argmin(gap[fits])])
    if j == len(lo) and ceiling is not None:
        return int(ends[j]) - size
    return int(starts[j])


def _result(buf: _Buffers, offsets: np.ndarray, arena: int, live_peak: int, alignment: int,
            method: str) -> Allocation:
    regs: dict[int, int] = {}
    sizes: dict[int, int] = {}
    ws: dict[int, int] = {}
    ws_sizes: dict[int, int] = {}
    for (kind, reg), off, size in zip(buf.keys, offsets.tolist(), buf.size.tolist()):
        if kind == "reg":
            regs[reg], sizes[reg] = off, size
        else:
            ws[reg], ws_sizes[reg] = off, size
    return Allocation(regs, sizes, ws, ws_sizes, arena, live_peak, alignment, method)


def check_allocation(plan: Plan, alloc: Allocation) -> None:
    """PlanError unless ``alloc`` is a valid placement for ``plan``.

    Replays the plan (independently of the allocator) keeping the live buffers sorted by offset, and checks
    that every register and workspace has an aligned offset, a size holding its unit's bytes and a place
    inside the arena, that no two live buffers share a byte, and that ``live_peak`` is the live-bytes peak.
    """
    units = {u.name: u for u in plan.units}
    live: list[tuple[int, int, str]] = []  # non-empty (offset, end, what), sorted by offset, pairwise disjoint
    where_live: dict[int, tuple[int, int, str]] = {}  # every live register, empty ones included
    in_use = peak = 0
    for s, j, st in plan.statements():
        def fail(why: str) -> PlanError:
            return PlanError(f"allocation: {where(s, j)} ({st}): {why}")

        if not isinstance(st, Compute):
            block = where_live.pop(st.reg, None)
            if block is None:
                raise fail(f"register %{st.reg} is not live")
            if block[1] > block[0]:
                live.pop(bisect.bisect_left(live, block))
            in_use -= block[1] - block[0]
            continue
        unit = units.get(st.unit)
        if unit is None:
            raise fail(f"unit {quote(st.unit)} is not in the unit table")
        what = f"%{st.reg} ({quote(st.unit)})"
        block = _block(alloc, alloc.offsets, alloc.sizes, st.reg, unit.mem, what, fail)
        if st.reg in where_live:
            raise fail(f"register %{st.reg} is already live")
        if block[1] > block[0]:
            _insert(live, block, fail)
        where_live[st.reg] = block
        in_use += block[1] - block[0]
        running = in_use
        if unit.workspace:
            ws = _block(alloc, alloc.workspace_offsets, alloc.workspace_sizes, st.reg, unit.workspace,
                        f"the workspace of {what}", fail)
            _insert(live, ws, fail)
            live.pop(bisect.bisect_left(live, ws))
            running += ws[1] - ws[0]
        peak = max(peak, running)
    if peak != alloc.live_peak:
        raise PlanError(f"allocation: live_peak is {alloc.live_peak} bytes but the plan's live buffers peak at "
                        f"{peak} bytes")


def _block(alloc: Allocation, offsets: dict[int, int], sizes: dict[int, int], reg: int, need: int, what: str,
           fail: Callable[[str], PlanError]) -> tuple[int, int, str]:
    """(offset, end, what) of one buffer, after checking its offset, size, alignment and arena bounds."""
    if reg not in offsets or reg not in sizes:
        raise fail(f"{what} has no offset")
    off, size = offsets[reg], sizes[reg]
    if size < need:
        raise fail(f"{what} gets {size} bytes but needs {need}")
    if off < 0 or off + size > alloc.arena_size:
        raise fail(f"{what} at [{off}, {off + size}) is outside the arena of {alloc.arena_size} bytes")
    if off % alloc.alignment or size % alloc.alignment:
        raise fail(f"{what} at [{off}, {off + size}) is not aligned to {alloc.alignment} bytes")
    return off, off + size, what


def _insert(live: list[tuple[int, int, str]], block: tuple[int, int, str],
            fail: Callable[[str], PlanError]) -> None:
    """Insert a non-empty block into the offset-sorted disjoint list, or fail naming the block it overlaps."""
    i = bisect.bisect_left(live, block)
    for other in live[max(i - 1, 0):i + 1]:
        if other[0] < block[1] and block[0] < other[1]:
            raise fail(f"{block[2]} at [{block[0]}, {block[1]}) overlaps {other[2]} at [{other[0]}, {other[1]}), "
                       f"which is live")
    live.insert(i, block)


def format_allocation(alloc: Allocation) -> str:
    """One line for ``remc plan show``: arena, live peak, fragmentation, heuristic, buffers, alignment."""
    n = len(alloc.offsets) + len(alloc.workspace_offsets)
    return (f"arena {format_size(alloc.arena_size)} ({alloc.arena_size} bytes) for a live peak of "
            f"{format_size(alloc.live_peak)} (fragmentation {100 * alloc.fragmentation:.1f}%), {alloc.method}, "
            f"{n} buffers, {alloc.alignment}-byte alignment, constant overhead outside the arena")
