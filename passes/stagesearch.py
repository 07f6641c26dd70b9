"""A local search on S that re-evaluates only the stages a move touches: schedules for graphs whose LP
relaxation is too large to solve in minutes (random layered DAGs of 500-1000 units, ONNX-node granularity).

A schedule is S; R is the least R for it (``solve_r``, row by row: stage t computes t, the values kept for
stage t+1 that are not resident in t, and every non-resident ancestor of those). Row t of R and of the
memory profile depend only on S[t] and S[t+1], so a move that changes S[a..b, i] re-evaluates stages
a-1..b alone (``StageState.try_move``), where ``refine`` evaluates all n stages.

* ``repair``: from checkpoint-all (or a given S), while some stage's peak exceeds the budget: at the stage of
  the highest peak, drop a resident value over its run of stages (the whole run, the part from that stage
  on, or the part up to it); candidates are ranked by bytes removed from stages over budget per unit of cost
  and the best few are evaluated exactly; the move removing the most excess bytes per unit of added cost
  is taken.
* ``improve``: for each recomputation (most expensive first), keep the value resident from its previous
  residency instead, when that fits and costs less.

Both stop at a deadline. The result is checked by the caller in full (``check``, ``memory_profile``).
No-recompute units are never dropped; a move that would recompute one is rejected.
"""
from __future__ import annotations

import functools
import math
import time
from typing import Any

import numpy as np

from ..ir.dag import DAG
from ..ir.schedule import Schedule, check, checkpoint_all, solve_rs, stage_peaks

SPARSE_FROM = 500
"""Least number of units at which the eviction pass and the stage search use SciPy's sparse triangular solves
(``EdgeSystem``; the eviction pass's recurrence below it is a loop over the parents' lists, which gives the same
sums, and rows are walked one unit at a time): faster below it (0.3-0.45 ms a call against 1.7-1.8 ms on segnet
and Moccasin's random layered n = 100; 2.7 ms against 2.4 ms on its n = 1000, 2 loaded cores), and graphs below
it never import scipy.sparse (0.2 s of CPU at the start of a ``remc solve`` whose whole process took 0.6 s on
VGG16)."""


@functools.cache
def _superlu_gstrs() -> Any:
    """SuperLU's triangular solve (SciPy >= 1.12; what scipy.sparse.linalg.spsolve_triangular calls there), imported
    on first use; None on an older SciPy (the callers fall back to their own loops, same values)."""
    try:
        from scipy.sparse.linalg._dsolve._superlu import gstrs
    except ImportError:  # pragma: no cover
        return None
    return gstrs

ROW_SPARSE_FROM = 200
"""Least number of units at which ``StageState._row_r`` finishes a row that reaches past DFS_STEPS units with one
sparse solve (SPARSE_FROM for the eviction pass's sums). Rows that recompute long chains are most of a repair's
work where values are dropped far from the graph's sources: own random layered n = 250 seed 11 at 0.9, the repair
from checkpoint-all to its fit took 3.7 s of CPU with the loop, 2.4 s with the solve (the same rows); a row of a
few units never reaches the solve."""
TOP_K = 6
"""Candidates evaluated exactly per repair step (of those ranked best by the estimate)."""
IMPROVE_CANDIDATES = 30
"""Candidates a repair step inside ``improve`` evaluates after the TOP_K best-ranked ones when none of those helps
(the next ones by the estimate; a repair from scratch evaluates all of them, hundreds at the highest stage at 1000
units). With all of them, ``improve``, which repairs after each move it tries, gained nothing in 90 s from
Moccasin's random layered n = 1000 at 0.8 (+26.1%); with this cap it reached +18.7%
(results/sched14/scratch/imp.py). A repair from checkpoint-all with the cap ends far worse (Moccasin's n = 500 at
0.9: stuck at +713%, where all candidates give +14%)."""
ROW_LIST_UNITS = 48
"""Most units computed in a stage for which ``StageState._row_peak`` walks the stage in Python lists instead of NumPy
calls over every edge (the same integers): its ~20 calls on small arrays cost more than a short loop. Below
ROW_SPARSE_FROM units ``_row_r``'s walk over the ancestors reads lists too."""
DFS_STEPS = 24
"""Units ``StageState._row_r`` visits one by one before it finishes the row with one sparse solve
(``EdgeSystem.ancestors``; at once when the row starts with more than a quarter of that): a row that
recomputes a long chain (random layered n = 1000 at 0.8: hundreds of units) costs one solve, a row of a few
units stays a few steps."""
IMPROVE_ORDER = "chain"
"""Order in which ``improve`` tries recomputations: "chain" (``chain_savings``, most saved first) or "cost"
(costliest unit first; the order before: on random layered n = 1000 a skip edge made one stage recompute
248 units for a value whose own cost ranked it last)."""


class EdgeSystem:
    """The graph's unit lower-triangular system I - A in compressed columns (column p: the diagonal, then p's
    children in order), where A[c, p] = 1 for an edge p -> c whose parent p is not in a given set: forward
    (``solve``) it sums, for each unit, its own value and, recursively, those of its parents outside the set
    (each path once); transposed (``ancestors``) it finds the units a set of units reaches through parents
    outside the set. One SuperLU triangular solve each, on arrays built once: O(units + edges) in C."""

    def __init__(self, dag: DAG) -> None:
        n, E = dag.n, dag.edges
        self.dag, self.n = dag, n
        out = np.bincount(E[:, 0], minlength=n) if len(E) else np.zeros(n, dtype=np.int64)
        self._ptr = np.concatenate([[0], np.cumsum(1 + out)]).astype(np.intc)
        self._rows = np.empty(int(self._ptr[-1]), dtype=np.intc)
        self._rows[self._ptr[:-1]] = np.arange(n)
        first = np.searchsorted(E[:, 0], E[:, 0], "left") if len(E) else np.zeros(0, dtype=np.int64)
        self._pos = self._ptr[E[:, 0]] + 1 + (np.arange(len(E)) - first)
        self._rows[self._pos] = E[:, 1]
        self._par = E[:, 0]
        self._data = np.ones(int(self._ptr[-1]))
        self._uptr = np.zeros(n + 1, dtype=np.intc)

    @staticmethod
    def available() -> bool:
        """Whether this SciPy has the solve (else the callers use their own loops)."""
        return _superlu_gstrs() is not None

    def solve(self, inside: np.ndarray, rhs: np.ndarray, trans: str = "N") -> np.ndarray:
        """x with (I - A) x = rhs ("N") or (I - A)^T x = rhs ("T"), A over the edges whose parent is not in
        ``inside`` (bool[n]); float rhs of shape (n,) or (n, k). Overflow gives inf (or nan, read as inf)."""
        self._data[self._pos] = np.where(inside[self._par], 0.0, -1.0)
        with np.errstate(over="ignore", invalid="ignore"):
            x, info = _superlu_gstrs()(trans, self.n, len(self._data), self._data, self._rows, self._ptr,
                             self.n, 0, np.zeros(0), np.zeros(0, dtype=np.intc), self._uptr,
                             np.array(rhs, dtype=float))
        if info:  # pragma: no cover (a unit diagonal is never singular)
            raise np.linalg.LinAlgError("EdgeSystem: singular")
        return x

    def ancestors(self, start: np.ndarray, have: np.ndarray) -> np.ndarray | None:
        """bool[n]: ``start`` and every unit outside ``have`` with a child in the result (the units a stage
        computes for ``start`` when ``have`` is resident); None where the path counts overflow."""
        y = self.solve(have, start.astype(float), "T")
        if not np.isfinite(y).all():
            return None
        return y > 0


class StageState:
    """S, its least R, and per-stage cost and peak, for one graph and budget."""

    def __init__(self, dag: DAG, budget: int, S: np.ndarray, *, evaluate: bool = True) -> None:
        """``evaluate=False`` leaves R, cost and peak zero (a caller that sets every row itself, as the eviction
        pass does stage by stage)."""
        self.dag, self.budget, self.n = dag, int(budget), dag.n
        self.S = np.array(S, dtype=bool)
        self.R = np.zeros((self.n, self.n), dtype=bool)
        self.peak = np.zeros(self.n, dtype=np.int64)
        self.cost = np.zeros(self.n)
        self._e0, self._e1 = dag.edges[:, 0], dag.edges[:, 1]
        self._emem = dag.mem[self._e0] if len(dag.edges) else np.zeros(0, np.int64)
        self.evals = 0
        self.first_stall: int | None = None
        """``rows`` at the repair's first stall (``_kick_repair``; KICK_SHARE)."""
        self.rows = 0
        """Rows evaluated (``_row_r`` and ``_row_peak`` calls): the search's work, counted, for slices that end at
        the same point whatever the machine's load."""
        self._system: EdgeSystem | None = None
        self._lists: tuple | None = None
        if evaluate:
            for t in range(self.n):
                self._set_row(t)

    # rows ------------------------------------------------------------------------------------------
    def _row_r(self, t: int) -> np.ndarray:
        """Row t of the least R for S: unit t, the values kept for stage t+1 not resident in t, and every
        non-resident ancestor of those (one by one for DFS_STEPS units, then ``EdgeSystem.ancestors``)."""
        dag, S = self.dag, self.S
        self.rows += 1
        row = np.zeros(self.n, dtype=bool)
        row[t] = True
        if t + 1 < self.n:
            row[:t + 1] |= S[t + 1, :t + 1] & ~S[t, :t + 1]
        have = S[t]
        # (SciPy is imported at the first row that reaches the solve: below SPARSE_FROM units, only where one does)
        sparse = self.n >= ROW_SPARSE_FROM
        if sparse and np.count_nonzero(row) > DFS_STEPS // 4 and EdgeSystem.available():
            full = self._edges().ancestors(row, have)
            if full is not None:
                return full
        if not sparse:  # the walk in lists (ROW_LIST_UNITS)
            preds_l = self._as_lists()[0]
            have_l = have.tolist()
            seen = row.tolist()
            stack = np.flatnonzero(row).tolist()
            while stack:
                for p in preds_l[stack.pop()]:
                    if not have_l[p] and not seen[p]:
                        seen[p] = True
                        stack.append(p)
            return np.array(seen, dtype=bool)
        stack = np.flatnonzero(row).tolist()
        preds = dag.preds
        steps = DFS_STEPS if sparse else -1
        while stack:
            if steps == 0:
                full = self._edges().ancestors(row, have) if EdgeSystem.available() else None
                if full is not None:
                    return full
                steps = -1  # overflow or no solve: go on one by one
            steps -= 1
            k = stack.pop()
            for p in preds[k][~have[preds[k]]].tolist():
                if not row[p]:
                    row[p] = True
                    stack.append(p)
        return row

    def _as_lists(self) -> tuple:
        """(parents per unit, M per unit, W per unit) as Python lists, made once."""
        if self._lists is None:
            self._lists = ([q.tolist() for q in self.dag.preds], self.dag.mem.tolist(), self.dag.workspace.tolist())
        return self._lists

    def _edges(self) -> EdgeSystem:
        if self._system is None:
            self._system = EdgeSystem(self.dag)
        return self._system

    def _row_peak(self, t: int, row: np.ndarray) -> int:
        """The largest entry of row t of ``memory_profile`` for R row ``row``, over the computed units only:
        between two of them the profile only frees (so it is at most its value at the one before), before the
        first it is the resident bytes, and after unit t (the last) it is constant."""
        dag, S, n = self.dag, self.S, self.n
        self.rows += 1
        P = np.flatnonzero(row)  # sorted; ends with t
        if len(P) <= ROW_LIST_UNITS:
            return self._row_peak_lists(t, P.tolist())
        s_next = S[t + 1] if t + 1 < n else np.zeros(n, dtype=bool)
        gc = np.zeros(len(P), dtype=np.int64)
        if len(self._e0):
            # edges are sorted by (parent, child): the last computed user of each parent is the last
            # edge of its group among those into computed units
            sel = np.flatnonzero(row[self._e1])
            e0 = self._e0[sel]
            last = np.ones(len(sel), dtype=bool)
            last[:-1] = e0[:-1] != e0[1:]
            free = sel[last & ~s_next[e0]]
            gc = np.bincount(np.searchsorted(P, self._e1[free]), weights=self._emem[free],
                             minlength=len(P)).astype(np.int64)
        base = dag.constant + int(dag.kept_before[t] + dag.mem[S[t]].sum())
        cum_alloc, cum_gc = np.cumsum(dag.mem[P]), np.cumsum(gc)
        U = base + cum_alloc - (cum_gc - gc) + dag.workspace[P]
        U[-1] += dag.kept_first[t]  # unit t's kept outputs while it runs, then all (``schedule.kept_profile``)
        peak = int(U.max())
        if P[0] > 0:
            peak = max(peak, base)
        if t + 1 < n:
            peak = max(peak, int(base + cum_alloc[-1] - cum_gc[-1] + dag.kept[t]))
        return peak

    def _row_peak_lists(self, t: int, P: list[int]) -> int:
        """``_row_peak`` for the computed units ``P`` (sorted, ends with t), in Python lists: each parent of a computed
        unit is freed after its last computed user unless stage t+1 keeps it."""
        dag, S, n = self.dag, self.S, self.n
        preds_l, mem, ws = self._as_lists()
        last = {p: idx for idx, k in enumerate(P) for p in preds_l[k]}  # (the last computed user wins)
        gc = [0] * len(P)
        if last:
            keep = S[t + 1].tolist() if t + 1 < n else None
            for p, idx in last.items():
                if keep is None or not keep[p]:
                    gc[idx] += mem[p]
        base = dag.constant + int(dag.kept_before[t] + dag.mem[S[t]].sum())
        level = base  # resident before P[idx]'s allocation, the frees of the units before it done
        peak = base if P[0] > 0 else -1
        for k, free in zip(P, gc):
            u = level + mem[k] + ws[k]
            if u > peak:
                peak = u
            level += mem[k] - free
        tail = level + gc[-1] + ws[t] + int(dag.kept_first[t])  # unit t (the last) with its own kept outputs
        peak = max(peak, tail)
        if t + 1 < n:
            peak = max(peak, level + int(dag.kept[t]))
        return int(peak)

    def _set_row(self, t: int) -> bool:
        """Re-evaluate stage t; False when it would recompute a no-recompute unit."""
        row = self._row_r(t)
        nr = self.dag.no_recompute
        if nr.any() and (row & nr)[:t].any():
            return False
        self.R[t] = row
        self.cost[t] = float(self.dag.cost[row].sum())
        self.peak[t] = self._row_peak(t, row)
        return True

    # moves -----------------------------------------------------------------------------------------
    def try_move(self, i: int, a: int, b: int, value: bool, accept) -> bool:
        """Set S[a..b, i] to ``value``, re-evaluate stages a-1..b, and keep the change when
        ``accept(old_cost, new_cost, old_peaks, new_peaks, lo)`` (peaks of stages lo..b) says so."""
        self.evals += 1
        lo, hi = max(a - 1, 0), b
        shifted = self._shifted_rows(i, a, b, value)
        mask = np.ones(hi - lo + 1, dtype=bool)
        mask[shifted - lo] = False
        full = lo + np.flatnonzero(mask)  # rows whose R may change: saved and re-evaluated
        old_col = self.S[a:b + 1, i].copy()
        old_R, old_cost, old_peak = self.R[full], self.cost[full], self.peak[lo:hi + 1].copy()
        self.S[a:b + 1, i] = value
        self.peak[shifted] += int(self.dag.mem[i]) if value else -int(self.dag.mem[i])
        ok = all(self._set_row(t) for t in full.tolist())
        # costs of the shifted rows do not change: the sums over ``full`` differ as the totals do
        if ok and accept(float(old_cost.sum()), float(self.cost[full].sum()), old_peak, self.peak[lo:hi + 1]):
            return True
        self.S[a:b + 1, i] = old_col
        self.R[full], self.cost[full], self.peak[lo:hi + 1] = old_R, old_cost, old_peak
        return False

    def _shifted_rows(self, i: int, a: int, b: int, value: bool) -> np.ndarray:
        """Stages t in a..b-1 whose R row a move S[a..b, i] := ``value`` leaves alone and whose peak moves by
        exactly M_i: i flips in both S[t] and S[t+1], is not computed in stage t and no user of i is. There
        i is neither materialized, recomputed nor freed, so every U[t, k] moves by M_i and R[t] stays."""
        if b <= a:
            return np.zeros(0, dtype=np.int64)
        S, R = self.S, self.R
        flips = S[a:b + 1, i] != value
        both = flips[:-1] & flips[1:]
        users = self.dag.succs[i]
        quiet = ~R[a:b, i]
        if len(users):
            quiet &= ~R[a:b][:, users].any(axis=1)
        return a + np.flatnonzero(both & quiet)

    def snapshot(self) -> tuple:
        return self.S.copy(), self.R.copy(), self.cost.copy(), self.peak.copy()

    def restore(self, snap: tuple) -> None:
        self.S, self.R, self.cost, self.peak = (a.copy() for a in snap)

    def excess(self, peaks: np.ndarray) -> int:
        return int(np.maximum(peaks - self.budget, 0).sum())

    def total_cost(self) -> float:
        return float(self.cost.sum())


def _run(col: np.ndarray, t: int) -> tuple[int, int]:
    """The maximal run of True entries of ``col`` containing t (``col[t]`` is True)."""
    before = np.flatnonzero(~col[:t])
    after = np.flatnonzero(~col[t + 1:])
    return (int(before[-1]) + 1 if len(before) else 0), (t + int(after[0]) if len(after) else len(col) - 1)


def repair(st: StageState, deadline: float | None, cap: int | None = None, exhaustive: bool = False) -> bool:
    """Drop residencies until every stage fits the budget (True), or no move helps / time is up (False).

    When no single move at the highest stage lowers the bytes over budget, pairs are tried: each of the
    TOP_K best-ranked moves, followed by the best move at the stage that is then highest. ``cap``,
    ``exhaustive``: see ``repair_steps``."""
    return repair_steps(st, deadline, cap=cap, exhaustive=exhaustive) == "fit"


def repair_steps(st: StageState, deadline: float | None, rows: int | None = None, cap: int | None = None,
                 exhaustive: bool = False, kicks: bool = True) -> str:
    """``repair`` in whole steps: "fit" (every stage within the budget), "stuck" (no move or pair helps),
    "paused" (``st.rows`` reached ``rows``, checked between steps: a caller resumes it later with a higher
    count; the sequence of moves does not depend on where it paused) or "time" (``deadline`` passed, which may
    cut a step short). When none of the TOP_K best-ranked moves helps, a step evaluates the next ``cap`` ones
    (None: all): first the moves among them that keep a value resident, taking the best one that adds no cost
    (FREE_KEEPS_FIRST), then all of them in chunks of REPAIR_CHUNK, the best of the first chunk where one helps;
    then swaps (SWAP_CANDIDATES), then TOP_K x (TOP_K + 1) pairs. ``exhaustive``: the best of all the rest
    instead (no cap, no free keeps first, no chunks, no swaps: session 14's repair, slower a step but its choices
    are the best by the estimate; see ``improve``'s ``exhaustive``)."""
    floor = 1e-9 * max(float(st.dag.cost.sum()), 1.0)
    while st.peak.max() > st.budget:
        if deadline is not None and time.perf_counter() >= deadline:
            return "time"
        if rows is not None and st.rows >= rows:
            return "paused"
        cands = _repair_moves(st, floor)
        rest = cands[TOP_K:] if cap is None or exhaustive else cands[TOP_K:TOP_K + cap]
        if exhaustive:
            if _best_repair(st, cands[:TOP_K], floor) or _best_repair(st, rest, floor, deadline):
                continue
        elif _best_repair(st, cands[:TOP_K], floor) \
                or FREE_KEEPS_FIRST and _best_repair(st, [c for c in rest if c[4]], floor, deadline, free=True) \
                or _first_chunk_repair(st, rest, floor, deadline):
            continue
        if SWAP_CANDIDATES and not exhaustive and _swap_repair(st, floor, deadline):
            continue
        if _pair_repair(st, cands[:TOP_K], floor, deadline):
            continue
        if kicks and KICKS and cap is None and not exhaustive and _kick_repair(st, floor, deadline):
            continue
        return "time" if deadline is not None and time.perf_counter() >= deadline else "stuck"
    return "fit"


KICKS = 12
"""Where a repair from scratch (no ``cap``, not ``exhaustive``) is stuck (no move, swap or pair lowers the bytes over
budget), ``_kick_repair`` tries this many moves at the highest stage that leave the bytes over budget as they are
and lower the cost (most saved first; 0: none), each followed by the repair resumed for up to KICK_ROWS rows."""
SPAN_KICKS = False
"""Whether the least-memory starts' repairs (``evict._LeastMemoryRun``: several starts, most of which are stuck where
one fits) kick too; the repair from checkpoint-all, ``repair_start`` and ``stage_search`` do (KICKS)."""
KICK_ROWS = 4000
"""Rows a repair resumed after a kick may evaluate before it is given up (``_kick_repair``)."""
KICK_SHARE = 1.25
"""Rows the repair may evaluate after its first stall, as a share of its rows up to it (``_kick_repair`` stops
kicking past that): where kicks do not get it to fit, a repair takes at most 1 + KICK_SHARE times its rows without
them (and some steps between kicks)."""


def _kick_repair(st: StageState, floor: float, deadline: float | None) -> bool:
    """Get past a stall: for each of KICKS moves at the highest stage that leave the bytes over budget unchanged
    and lower the cost (keeping a value resident where the repair recomputes it; most saved first), apply it and
    resume the repair (without kicks) for up to KICK_ROWS rows; keep the first whose repair ends with fewer bytes
    over budget than the stall (True), else undo each (False). The bytes over budget fall with every kick kept, so
    kicks cannot cycle; no kick starts past KICK_SHARE more rows than the repair took to its first stall."""
    if st.first_stall is None:
        st.first_stall = st.rows
    until = int((1 + KICK_SHARE) * st.first_stall)  # rows: no kick starts past this
    if st.rows >= until:
        return False
    ex0 = st.excess(st.peak)
    kicks: list[tuple[float, int, int, int, bool]] = []
    for _, i, lo, hi, value in _repair_moves(st, floor):
        if deadline is not None and time.perf_counter() >= deadline:
            break
        got: list[float] = []

        def measure(c0: float, c1: float, p0: np.ndarray, p1: np.ndarray, got: list = got) -> bool:
            if st.excess(p0) == st.excess(p1) and c1 - c0 < -floor:
                got.append(c1 - c0)
            return False  # measure only

        st.try_move(i, lo, hi, value, measure)
        if got:
            kicks.append((got[0], i, lo, hi, value))
    kicks.sort(key=lambda k: k[0])
    snap = st.snapshot()
    for _, i, lo, hi, value in kicks[:KICKS]:
        left = until - st.rows
        if left <= 0 or deadline is not None and time.perf_counter() >= deadline:
            break
        st.try_move(i, lo, hi, value, lambda *a: True)
        out = repair_steps(st, deadline, st.rows + min(KICK_ROWS, left), kicks=False)
        if out == "fit" or st.excess(st.peak) < ex0:
            return True
        st.restore(snap)
    return False


def _first_chunk_repair(st: StageState, cands: list, floor: float, deadline: float | None) -> bool:
    """``_best_repair`` on ``cands`` in chunks of REPAIR_CHUNK (all at once where it is 0), in order: the best of the
    first chunk where a move helps is applied."""
    step = REPAIR_CHUNK or max(len(cands), 1)
    return any(_best_repair(st, cands[k:k + step], floor, deadline) for k in range(0, len(cands), step))


def _repair_moves(st: StageState, floor: float) -> list[tuple]:
    """(estimate, i, lo, hi, value) moves at the stage of the highest peak, best estimate first: drop a
    resident value over (part of) its run, or keep a value recomputed there resident instead."""
    dag = st.dag
    t = int(np.argmax(st.peak))
    over = st.peak > st.budget
    cands: list[tuple] = []
    for i in np.flatnonzero(st.S[t]).tolist():
        if dag.no_recompute[i]:
            continue
        a, b = _run(st.S[:, i], t)
        users = dag.succs[i]
        for lo, hi in {(a, b), (t, b), (a, t)}:
            gain = int(dag.mem[i]) * int(over[lo:hi + 1].sum())
            uses = int(st.R[lo:hi + 1][:, users].any(axis=1).sum()) if len(users) else 0
            cands.append((gain / max(float(dag.cost[i]) * max(uses, 1), floor), i, lo, hi, False))
    for i in np.flatnonzero(st.R[t, :t]).tolist():
        prev = np.flatnonzero(st.R[:t, i] | st.S[:t, i])
        if len(prev):
            cands.append((-1.0, i, int(prev.max()) + 1, t, True))
    cands.sort(key=lambda c: c[0], reverse=True)
    return cands


FREE_KEEPS_FIRST = True
"""Where none of the TOP_K best-ranked moves of a repair step helps, the moves that keep a value resident instead of
recomputing it (ranked last by the estimate) are evaluated first, and the best of them that lowers the bytes over
budget at no added cost is taken without evaluating the rest: own random layered n = 500 seed 21 at 0.8, 45 such
steps evaluated 202332 of the repair's 207722 rows, and the move taken was such a keep in most of them (ranked
365-528 of 389-539, results/any17/scratch/depth.py)."""
REPAIR_CHUNK = 64
"""Where none of the TOP_K best-ranked moves of a repair step helps (and no free keep, FREE_KEEPS_FIRST), the rest are
evaluated in chunks of this many, by rank, and the best of the first chunk where one lowers the bytes over budget is
taken (0: all at once, the best of all). Own random layered n = 500 seed 21 at 0.8: in each of the 45 such steps of
the repair from checkpoint-all a move among the first 11 of the rest helped, while the whole rest was 389-539 moves;
repaired in chunks of 64 it fits after 56686 rows, +441.4%, against 137662 rows, +446.0% with the whole rest
(FREE_KEEPS_FIRST on both; 207722 rows, +446.0% before either; results/any17/scratch/fit3.py)."""
SWAP_CANDIDATES = 12
"""Swaps a repair step tries at the highest stage (``_swap_repair``) when no single move helps: each resident value
alone (largest first) and the resident children of one parent together (most bytes first), this many of each (0:
none). Own random layered n = 250 seed 11 (one source): every single move there drops a value whose
recomputation runs a chain back to the source, and values of 5-8 kB whose one parent is 160 bytes were kept across
a dozen stages; at 0.9 of checkpoint-all's peak the repair got stuck at 1.09 x the budget without swaps and fits
with them (+19.8%, 3.8 s of CPU); at 0.8 it is still stuck (1.35 x, against 1.56 x without)."""


def _swap_moves(st: StageState, t: int, group: list[int]) -> list[tuple[int, int, int, bool]] | None:
    """The moves of a swap at stage t: drop each resident value of ``group`` from stage t to the end of its run,
    and keep each of their parents resident from where it was last resident or computed up to the last stage of
    that span that reads the value (so that each such stage recomputes it from its parents alone); None where no
    value of the group is read in its span (plain drops) or a parent was never computed before it is needed."""
    dag = st.dag
    drops: list[tuple[int, int, int, bool]] = []
    until: dict[int, int] = {}  # parent -> the last stage it must be resident at
    for i in group:
        _, b = _run(st.S[:, i], t)
        users = dag.succs[i]
        drops.append((i, t, b, False))
        reads = np.flatnonzero(st.R[t:b + 1][:, users].any(axis=1)) if len(users) else np.zeros(0, np.int64)
        if len(reads):  # the stages that will recompute i
            for p in dag.preds[i].tolist():
                until[p] = max(until.get(p, -1), t + int(reads.max()))
    moves: list[tuple[int, int, int, bool]] = []
    for p, last in sorted(until.items()):
        have = np.flatnonzero(st.R[:last + 1, p] | st.S[:last + 1, p])
        if not len(have):
            return None
        a = int(have.max()) + 1
        if a <= last:
            moves.append((p, a, last, True))
    # the parents first: dropped before they are resident, a value could not be recomputed (a no-recompute ancestor)
    return [*moves, *drops] if moves else None


def _swap_groups(st: StageState, t: int) -> list[list[int]]:
    """Groups to swap at stage t: each resident value alone, largest first, and, for each parent of two or more
    resident values, those values together, by their bytes less the parent's; SWAP_CANDIDATES of each kind."""
    dag = st.dag
    res = [i for i in np.flatnonzero(st.S[t]).tolist() if not dag.no_recompute[i] and len(dag.preds[i])]
    singles = sorted(res, key=lambda i: -int(dag.mem[i]))[:SWAP_CANDIDATES]
    kids: dict[int, list[int]] = {}
    for i in res:
        for p in dag.preds[i].tolist():
            kids.setdefault(p, []).append(i)
    shared = [(int(dag.mem[k].sum()) - (0 if st.S[t, p] else int(dag.mem[p])), p, k)
              for p, k in kids.items() if len(k) > 1]
    shared.sort(key=lambda x: (-x[0], x[1]))
    return [[i] for i in singles] + [k for gain, _, k in shared[:SWAP_CANDIDATES] if gain > 0]


def _swap_repair(st: StageState, floor: float, deadline: float | None) -> bool:
    """Apply the best swap (``_swap_moves`` of a ``_swap_groups`` group) at the stage of the highest peak that
    lowers the bytes over budget per added cost; False when none does. Each is evaluated whole (its moves one
    after the other, then undone)."""
    t = int(np.argmax(st.peak))
    ex0, c0 = st.excess(st.peak), st.total_cost()
    best, best_score = None, 0.0
    for group in _swap_groups(st, t):
        if deadline is not None and time.perf_counter() >= deadline:
            break
        moves = _swap_moves(st, t, group)
        if moves is None:
            continue
        snap = st.snapshot()
        if all(st.try_move(j, lo, hi, v, lambda *a: True) for j, lo, hi, v in moves):
            gain = ex0 - st.excess(st.peak)
            if gain > 0:
                score = gain / max(st.total_cost() - c0, floor)
                if score > best_score:
                    best, best_score = moves, score
        st.restore(snap)
    if best is None:
        return False
    for j, lo, hi, v in best:
        st.try_move(j, lo, hi, v, lambda *a: True)
    return True


def _pair_repair(st: StageState, firsts: list, floor: float, deadline: float | None) -> bool:
    """Apply the best pair (a move of ``firsts``, then the best move at the new highest stage) that lowers
    the bytes over budget; False when none does."""
    ex0, c0 = st.excess(st.peak), st.total_cost()
    snap = st.snapshot()
    best, best_score = None, 0.0
    for _, i, lo, hi, value in firsts:
        if deadline is not None and time.perf_counter() >= deadline:
            break
        st.try_move(i, lo, hi, value, lambda *a: True)
        if _best_repair(st, _repair_moves(st, floor)[:TOP_K], floor, deadline, allow_worse=True):
            gain = ex0 - st.excess(st.peak)
            if gain > 0:
                score = gain / max(st.total_cost() - c0, floor)
                if score > best_score:
                    best, best_score = st.snapshot(), score
        st.restore(snap)
    if best is None:
        return False
    st.restore(best)
    return True


def _best_repair(st: StageState, cands: list, floor: float, deadline: float | None = None,
                 allow_worse: bool = False, free: bool = False) -> bool:
    """Evaluate ``cands`` and apply the one removing the most excess per added cost (False: none helps;
    with ``allow_worse``, the one adding the least excess when none removes any; with ``free``, only one that
    adds no cost, ``floor`` at most, is taken)."""
    best, best_score = None, -math.inf if allow_worse else 0.0
    for _, i, lo, hi, value in cands:
        if deadline is not None and time.perf_counter() >= deadline:
            break
        score = [-math.inf]

        def measure(c0: float, c1: float, p0: np.ndarray, p1: np.ndarray) -> bool:
            gain = st.excess(p0) - st.excess(p1)
            score[0] = gain / max(c1 - c0, floor) if gain > 0 else (float(gain) if allow_worse else 0.0)
            if free and c1 - c0 > floor:
                score[0] = 0.0
            return False  # measure only

        st.try_move(i, lo, hi, value, measure)
        if score[0] > best_score:
            best, best_score = (i, lo, hi, value), score[0]
    if best is None:
        return False
    i, lo, hi, value = best
    return st.try_move(i, lo, hi, value, lambda *a: True)


def improve(st: StageState, deadline: float | None, order: str = IMPROVE_ORDER, repairs: bool = True,
            exhaustive: bool = False, enough: float = -math.inf) -> None:
    """Replace recomputations by residency while that lowers the cost: a move that fits is taken when it is
    cheaper; one that does not is followed by ``repair`` and kept when the repaired schedule is cheaper
    (``repairs`` False: dropped, so that a sweep costs a few rows a move). ``order``: "chain" tries first the
    recomputations whose residency would save the most (``chain_savings``), "cost" the costliest units first.
    ``exhaustive``: those repairs take the best of all moves (``repair_steps``), not IMPROVE_CANDIDATES of them
    and the first chunk that helps: ResNet50 fine at 0.8, from the eviction pass's +0.07194%, 60 s of improve gave
    +0.07135% with the quicker repairs and +0.06997% with these, +0.05425% once cleaned
    (``milp_model.clean``: the repairs leave values resident that nothing reads; results/bound18).
    ``enough``: it stops once the cost is at most this (a caller's proven bound within its gap target:
    checkmate's ``_approx_alone``)."""
    dag = st.dag
    changed = st.total_cost() > enough
    while changed:
        changed = False
        rec = np.argwhere(st.R & ~np.eye(st.n, dtype=bool))
        rec = rec[np.lexsort((-dag.cost[rec[:, 1]], -chain_savings(st, rec)))] if order == "chain" \
            else rec[np.argsort(-dag.cost[rec[:, 1]], kind="stable")]
        for t, i in rec.tolist():
            if deadline is not None and time.perf_counter() >= deadline:
                return
            if not st.R[t, i]:
                continue
            prev = np.flatnonzero(st.R[:t, i] | st.S[:t, i])
            if not len(prev):
                continue
            a = int(prev.max()) + 1  # S[a..t, i] is all False: i is not resident from a on
            before = st.total_cost()

            def cheaper(c0: float, c1: float, p0: np.ndarray, p1: np.ndarray) -> bool:
                return c1 < c0 - 1e-12

            if not st.try_move(i, a, t, True, cheaper):
                continue
            if st.peak.max() > st.budget:  # a snapshot (two n x n copies) only where repair may fail
                st.try_move(i, a, t, False, lambda *x: True)  # undo, exactly: the column was all False
                if not repairs:
                    continue
                snap = st.snapshot()
                st.try_move(i, a, t, True, lambda *x: True)
                if not (repair(st, deadline, IMPROVE_CANDIDATES, exhaustive)
                        and st.total_cost() < before - 1e-12):
                    st.restore(snap)
                    continue
            changed = True
            if st.total_cost() <= enough:
                return


def chain_savings(st: StageState, rec: np.ndarray) -> np.ndarray:
    """For each recomputation (t, i) of ``rec``: the cost of the recomputations of stage t that serve only
    to produce i (i and its ancestors recomputed in t that no other recomputed value of t, nor unit t, reads):
    what keeping i resident into stage t would save there, before any repair."""
    dag = st.dag
    out = np.zeros(len(rec))
    succs, preds = dag.succs, dag.preds
    for t in sorted(set(rec[:, 0].tolist())):  # (np.unique imports numpy.ma: 0.01-0.03 s of a short solve)
        rows = np.flatnonzero(rec[:, 0] == t)
        here = set(np.flatnonzero(st.R[t]).tolist())
        for k in rows.tolist():
            i = int(rec[k, 1])
            # i, then each ancestor recomputed in t whose readers in t are all in the set already
            saved, stack, seen = {i}, [i], {i}
            while stack:
                u = stack.pop()
                for p in preds[u].tolist():
                    if p in here and p not in seen and p != t:
                        seen.add(p)
                        if all(c in saved or c not in here for c in succs[p].tolist()):
                            saved.add(p)
                            stack.append(p)
            out[k] = float(dag.cost[list(saved)].sum())
    return out


def stage_search(dag: DAG, budget: int, *, deadline: float | None = None,
                 start: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, int] | None:
    """(R, S, evaluations) of a schedule within ``budget`` found by ``repair`` then ``improve`` from ``start``
    (an S; checkpoint-all when None), or None when repair fails. R and S are the search's own (the caller
    cleans and checks them)."""
    st = StageState(dag, budget, checkpoint_all(dag).S if start is None else start)
    if not repair(st, deadline):
        return None
    improve(st, deadline)
    return st.R.copy(), st.S.copy(), st.evals


def repair_start(dag: DAG, budget: int, S: np.ndarray, *, deadline: float | None = None) -> Schedule | None:
    """A warm start: the schedule ``S`` (e.g. a previous fit round's, solved at a larger budget) repaired to fit
    ``budget`` by ``repair`` until ``deadline``, cleaned and checked; None when repair fails in time."""
    from .milp_model import clean
    st = StageState(dag, budget, S)
    if not repair(st, deadline):
        return None
    R, S2 = clean(dag, st.R, st.S)
    if check(dag, R, S2) or stage_peaks(dag, R, S2).max() > budget:
        return None
    return Schedule(R, S2, strategy="warm start (previous schedule, repaired)")


def least_memory_spans(n: int) -> tuple[int, ...]:
    """Spans (in stages) of the least-memory starts ``least_memory`` repairs, longest (cheapest) first: powers
    of two from n/2 down, then 0 (nothing kept: every stage recomputes all it needs). Which spans a repair
    brings within the budget is not monotone: random layered n=250 seed 2 at 0.8 of its checkpoint-all peak
    (where checkpoint-all's repair, every eviction setting and every baseline fail): spans 24-128 fail but
    32 (+361%), 12 and 16 fail, 8 and below fit (+2509% and up)."""
    spans, k = [], 1
    while 2 * k <= max(n // 2, 1):
        k *= 2
    while k >= 1:
        spans.append(k)
        k //= 2
    return (*spans, 0)


def span_start(dag: DAG, span: int) -> np.ndarray:
    """S keeping each value only during the ``span`` stages up to each of its reads (within checkpoint-all);
    no-recompute units are kept wherever a stage reads them (``solve_rs``)."""
    n = dag.n
    S = np.zeros((n, n), dtype=bool)
    if span <= 0 or not len(dag.edges):
        return solve_rs(dag, S)[1]
    i, j = dag.edges[:, 0], dag.edges[:, 1]
    for d in range(span):  # S[j - d, i] for d < span, where j - d > i
        t = j - d
        ok = t > i
        S[t[ok], i[ok]] = True
    return solve_rs(dag, S & checkpoint_all(dag).S)[1]


def least_memory(dag: DAG, budget: int, *, deadline: float | None = None,
                 spans: tuple[int, ...] | None = None) -> tuple[StageState | None, int]:
    """Feasibility first, for budgets where checkpoint-all's repair and the eviction pass find nothing: the
    cheapest of the ``span_start`` schedules that ``repair`` brings within ``budget`` (None when none does in
    time), and the least peak of any schedule seen, checkpoint-all's included (a budget at which a schedule is
    known to exist).

    Spans are tried largest first (the cheapest when they fit), each until ``deadline`` (a repair that fails
    gets stuck within a second or so at 250 units; one that fits takes 2-7 s); after the first that fits, the
    spans between it and the last that failed are bisected within half the time left (a longer span
    recomputes less: layered n=250 seed 2 at 0.8, span 8 +2509%, span 10 +1735%). ``spans``: default
    ``least_memory_spans``. The schedule is usually expensive (much is recomputed); the caller's local
    search lowers its cost."""
    if spans is None:
        spans = least_memory_spans(dag.n)
    least = int(checkpoint_all(dag).peak(dag))  # a schedule at that peak exists whatever else is found
    best: StageState | None = None
    tried: dict[int, bool] = {}

    def attempt(span: int, until: float | None) -> bool:
        nonlocal least, best
        st = StageState(dag, budget, span_start(dag, span))
        least = min(least, int(st.peak.max()))
        ok = repair(st, until)
        least = min(least, int(st.peak.max()))
        if ok and (best is None or st.total_cost() < best.total_cost()):
            best = st
        tried[span] = ok
        return ok

    for span in spans:
        if deadline is not None and time.perf_counter() >= deadline:
            break
        if attempt(span, deadline):
            break
    if best is not None:  # bisect between the longest span that fitted and the shortest longer one that failed
        lo = max(s for s, ok in tried.items() if ok)
        hi = min((s for s, ok in tried.items() if not ok and s > lo), default=None)
        now = time.perf_counter()
        until = None if deadline is None else now + (deadline - now) / 2
        while hi is not None and hi - lo > 1 and (until is None or time.perf_counter() < until):
            mid = (lo + hi) // 2
            if attempt(mid, until):
                lo = mid
            else:
                hi = mid
    return best, least
