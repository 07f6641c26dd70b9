"""The Checkmate MILP (paper eq. 9) as sparse arrays, shared by the MILP and the LP-rounding passes.

Variables (0-based stages, §4.6): R[t, i] for i <= t (R[t, t] fixed to 1, constraint 7a), S[t, i] for
i < t (7b, 7c), FREE[t, (i, k)] for edges with k < t, and (recurrence form only) P[t, k] = U[t, k] +
W_k R[t, k], the bytes in use while unit k runs in stage t (eq. 2-3 plus workspace), bounded by the
budget. The budget rows are U[t, k] + W_k R[t, k] <= budget.

Reformulations, each keeping the optimal cost (the first three keep the feasible (R, S) exactly; the
last two drop only schedules that a ``clean`` one, no costlier and no larger anywhere, replaces):

- Memory: either the recurrence rows (2-3) on P columns, or (``memory_form="dense"``, the default of
  the LP up to DENSE_LIMIT nonzeros) U substituted by its linear expression, one budget row per (t, k). The
  constant overhead is moved to the right-hand side. Positions k where R[t, k] is fixed to 0 get no
  budget row: there U can only fall, so their row is implied.
- FREE[t, k, k] is not a variable (§4.7): GC sums over the parents of k only.
- (6b), the lower bound that forces FREE to 1 when nothing holds i, is dropped: FREE only subtracts from
  memory, so any FREE below its true value is feasible but never better, and the true value always
  satisfies (6c). ``free_form="tight"`` further replaces (6c) by its disaggregation FREE <= R[t, k],
  FREE <= 1 - S[t+1, i], FREE <= 1 - R[t, j] (for each later user j of i): with binary R and S these
  say FREE <= the product in eq. (5), so FREE can be continuous; the LP relaxation is tighter.
- Variable fixing by optimality. reach(i) is the largest unit reachable from i by a path of one or
  more edges. R[t, i] and S[t, i] (i < t) are fixed to 0 when reach(i) < t: i can serve nothing that
  stage t or a later one computes. Removing every such entry from an optimal schedule, in reverse
  stage and topological order, keeps it correct and never raises cost or any memory entry (see
  ``clean``), so an optimum exists among the remaining schedules. No-recompute units get R[t, i] = 0
  for t > i and S[t, i] = 1 for i < t <= last_use(i) (forced by 1b and 1c). FREE[t, (i, k)] is not a
  variable where eq. (5) makes it 0 for any schedule (R[t, k] fixed 0, S[t+1, i] fixed 1, or i used by
  unit t itself with k < t) nor for k = t, where freeing comes after the last budget row of the stage.
- Usefulness rows (``_rows_usefulness``): no recomputation of a resident value, and every value
  computed or kept in a stage is read in it or kept for the next. Clean schedules satisfy them.

Scaling: memory is divided by the gcd of all M_k and W_k when that leaves coefficients below 1e4
(exact integers; the budget is rounded down to a whole unit, which admits the same schedules);
otherwise by a unit making the largest M_k or W_k 1e3 (float coefficients; the budget is not rounded
down, so the model keeps every schedule that fits and its dual bound stays valid; a solution that
exceeds the budget by a few bytes through solver tolerances is caught by the exact check, and the
MILP pass then solves again with a lowered budget). Costs are divided by the largest
cost, and costs below COST_EPS of it become 0 (a valid relaxation: the dual bound stays a lower bound;
the caller reports the exact cost of the schedule). Every schedule a solver returns is checked again
in exact bytes by the caller.
"""
from __future__ import annotations

import ctypes
import math
import os
import sys
import time
import dataclasses
from dataclasses import dataclass
from functools import reduce

import numpy as np
import scipy.sparse as sp

from ..ir.dag import DAG
from ..ir.schedule import free_matrix, memory_profile

EXACT_LIMIT = 1e4
"""Largest memory coefficient allowed after dividing by the gcd; above it a float unit is used. HiGHS
1.16 returned wrong 'optimal' answers (invalid dual bounds) on VGG16 with gcd-scaled coefficients up to
4e5; with 1e3 or 1e4 it agreed with itself and with rounding."""
FLOAT_SCALE = 1e3
"""With a float unit, the largest M_k or W_k becomes this."""
DENSE_LIMIT = 80_000_000
"""Most nonzeros the dense memory rows may have under memory_form="auto", by the estimate of
``_dense_nonzeros`` (an upper bound: paper-size ResNet50 is estimated at 68M and has 51M, about 6.5 GB
resident while HiGHS solves). HiGHS' dual simplex solves the dense LP far faster: ResNet50 (515 units)
in 70 s where the recurrence LP (2-3M nonzeros) had not finished after 150 s; MobileNetV2 (390 units,
25M) in 24 s. GPT-2 (724 units) would need 178M nonzeros and 18 GB and did not finish in 200 s."""
COST_EPS = 1e-6
"""Costs below this fraction of the largest are 0 in the model: HiGHS returned invalid dual bounds with
costs spanning 1e-12..1 (VGG16 with FLOP costs, where a ReLU costs 4e-12 of a convolution). The model
costs are then <= the true ones, so the model's dual bound stays a valid lower bound."""
LP_PRESOLVE = "off"
"""HiGHS' presolve for LP relaxations (not the MILP). Off: HiGHS then holds duals of the original LP when a
time limit stops the dual simplex, which give a proven bound (``safe_dual_bound``); with presolve on it
has none. Also faster on the zoo's dense LPs (1 thread, one after the other on the shared 2-core machine):
VGG19 at 0.8 2.0 -> 0.7 s, MobileNet 14.0 -> 8.3 s, U-Net 1.5 -> 0.6 s, ResNet50 at 0.6 289 -> 147 s."""
FLOAT_SLACK = 1e-12
"""With a float unit, the model budget is raised by this fraction, so that floating-point rounding of the
coefficients cannot exclude a schedule that fits: the model stays a relaxation and its bound valid."""


@dataclass(frozen=True)
class MemoryScale:
    """How bytes map to model units."""

    unit: float
    """Bytes per model unit."""
    exact: bool
    """True when ``unit`` divides every byte count (the model's coefficients are exact integers)."""
    budget: float
    """Model units available above the constant overhead: (budget - constant) / unit, rounded down when
    ``exact``, raised by FLOAT_SLACK otherwise; inf when there is no budget."""
    constant: int = 0

    def room(self, budget: int) -> float:
        """The model budget for ``budget`` bytes (the unit does not depend on the budget)."""
        room = int(budget) - self.constant
        return float(room // int(self.unit)) if self.exact else room / self.unit * (1 + FLOAT_SLACK)


def memory_scale(dag: DAG, budget: float | None) -> MemoryScale:
    """The scaling of memory for ``dag`` at ``budget`` (None: no budget, as in the least-budget LP).

    With the gcd g of all M_k and W_k as the unit, every schedule's bytes above the constant are a
    multiple of g, so the budget floor((budget - constant) / g) admits exactly the same schedules.
    """
    sizes = np.concatenate([dag.mem, dag.workspace])
    g = reduce(math.gcd, (int(v) for v in sizes if v > 0), 0) or 1
    top = int(sizes.max(initial=1))
    exact = top / g <= EXACT_LIMIT
    scale = MemoryScale(float(g) if exact else top / FLOAT_SCALE, exact, math.inf, int(dag.constant))
    return scale if budget is None else dataclasses.replace(scale, budget=scale.room(int(budget)))


def reach(dag: DAG) -> np.ndarray:
    """int64[n]: the largest unit reachable from each unit by one or more edges (-1 when none)."""
    out = np.full(dag.n, -1, dtype=np.int64)
    succs = dag.succs
    for i in range(dag.n - 1, -1, -1):
        s = succs[i]
        if len(s):
            out[i] = max(int(s[-1]), int(out[s].max()))
    return out


def allowed(dag: DAG) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """bool[n, n] masks (R free or fixed 1, S free or fixed 1, S fixed 1) after variable fixing."""
    n = dag.n
    t = np.arange(n)[:, None]
    i = np.arange(n)[None, :]
    rch = reach(dag)[None, :]
    nr = dag.no_recompute[None, :]
    r_ok = (i == t) | ((i < t) & (rch >= t) & ~nr)
    s_ok = (i < t) & (rch >= t)
    s_one = (i < t) & nr & (t <= dag.last_use[None, :])
    return r_ok, s_ok | s_one, s_one


def clean(dag: DAG, R: np.ndarray, S: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Drop every computation and checkpoint that serves nothing, keeping the schedule correct.

    In reverse stage order and, per stage, reverse topological order: R[t, i] is dropped when i is also
    checkpointed into stage t; R[t, i] and S[t, i] (i < t) are dropped when no unit computed in stage t
    reads i and i is not kept for stage t+1. Each step never raises cost nor any entry of
    ``memory_profile`` (a dropped value was resident, unused, and at most freed later than a kept one),
    and afterwards R equals ``solve_r(S)``. A correct input gives a correct output.
    """
    R = np.array(R, dtype=bool)
    S = np.array(S, dtype=bool)
    n = dag.n
    succs = dag.succs
    for t in range(n - 1, -1, -1):
        keep = S[t + 1] if t + 1 < n else np.zeros(n, dtype=bool)
        R[t, :t] &= ~S[t, :t]
        row = R[t]
        # only entries that are set can be dropped: visit those, in reverse topological order
        for i in np.flatnonzero((R[t, :t] | S[t, :t]) & ~keep[:t])[::-1].tolist():
            if not row[succs[i]].any():
                R[t, i] = False
                S[t, i] = False
    return R, S


@dataclass(eq=False)
class CheckmateModel:
    """Eq. (9) at one budget: columns, sparse rows, and the maps between schedules and columns."""

    dag: DAG
    scale: MemoryScale
    cost_unit: float
    r: np.ndarray
    """int64[n, n]: column of R[t, i], -1 where R[t, i] is fixed to 0."""
    s: np.ndarray
    """int64[n, n]: column of S[t, i], -1 where fixed to 0."""
    free: np.ndarray
    """int64[n, m]: column of FREE[t, e], -1 where fixed to 0."""
    p: np.ndarray
    """int64[n, n]: column of P[t, k], -1 where the budget row is implied."""
    col_cost: np.ndarray
    col_lower: np.ndarray
    col_upper: np.ndarray
    integral: np.ndarray
    """bool[num_col]: binary columns of the MILP."""
    A: sp.csc_matrix
    row_lower: np.ndarray
    row_upper: np.ndarray
    budget_col: int = -1
    """Column of the budget variable in the least-budget LP, else -1."""
    budget_rows: np.ndarray | None = None
    """Rows whose upper bound is the model budget (dense form)."""

    def budget_cols(self) -> np.ndarray:
        """Columns whose upper bound is the model budget (P, recurrence form)."""
        return self.p[self.p >= 0]

    @property
    def num_col(self) -> int:
        return len(self.col_cost)

    @property
    def num_row(self) -> int:
        return len(self.row_lower)

    def decode(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(R, S) as bool matrices from a column vector with (near-)integral R and S."""
        return self.values(x, self.r) > 0.5, self.values(x, self.s) > 0.5

    def values(self, x: np.ndarray, idx: np.ndarray) -> np.ndarray:
        """The entries of ``x`` at the columns ``idx`` (0 where idx is -1)."""
        out = np.zeros(idx.shape)
        m = idx >= 0
        out[m] = np.asarray(x)[idx[m]]
        return out

    def encode(self, R: np.ndarray, S: np.ndarray) -> np.ndarray:
        """A full column vector for schedule (R, S) (FREE and P computed from it; for warm starts).

        The schedule should be ``clean``: entries fixed to 0 in the model must be 0 in (R, S).
        """
        x = self.col_lower.copy()
        for idx, val in ((self.r, R), (self.s, S), (self.free, free_matrix(self.dag, R, S))):
            m = idx >= 0
            x[idx[m]] = np.asarray(val, dtype=float)[m]
        used = (memory_profile(self.dag, R, S) - self.dag.constant) / self.scale.unit
        m = self.p >= 0
        x[self.p[m]] = used[m]
        if self.budget_col >= 0:
            x[self.budget_col] = used[self.r >= 0].max(initial=0.0)
        return x

    def representable(self, R: np.ndarray, S: np.ndarray) -> bool:
        """True when (R, S) sets no entry that the model fixes to 0."""
        return not ((R & (self.r < 0)).any() or (S & (self.s < 0)).any())


class _Cols:
    """Column allocator: appends blocks of columns with bounds, cost and integrality."""

    def __init__(self) -> None:
        self.cost: list[np.ndarray] = []
        self.lo: list[np.ndarray] = []
        self.hi: list[np.ndarray] = []
        self.int: list[np.ndarray] = []
        self.n = 0

    def add(self, mask: np.ndarray, *, cost=0.0, lo=0.0, hi=1.0, integral: bool = True) -> np.ndarray:
        """Columns for the True entries of ``mask``; returns an index array shaped like mask (-1 elsewhere)."""
        k = int(mask.sum())
        idx = np.full(mask.shape, -1, dtype=np.int64)
        idx[mask] = np.arange(self.n, self.n + k)
        for store, v in ((self.cost, cost), (self.lo, lo), (self.hi, hi)):
            store.append(np.broadcast_to(np.asarray(v, dtype=float), mask.shape)[mask].copy()
                         if np.ndim(v) else np.full(k, float(v)))
        self.int.append(np.full(k, integral))
        self.n += k
        return idx


class _Rows:
    """Row builder collecting COO triplets; columns given as -1 are fixed zeros and dropped."""

    def __init__(self) -> None:
        self.rows: list[np.ndarray] = []
        self.cols: list[np.ndarray] = []
        self.vals: list[np.ndarray] = []
        self.lo: list[np.ndarray] = []
        self.hi: list[np.ndarray] = []
        self.n = 0

    def new(self, count: int, lo: float | np.ndarray, hi: float | np.ndarray) -> np.ndarray:
        """Allocate ``count`` rows with the given bounds; returns their indices."""
        ids = np.arange(self.n, self.n + count)
        self.lo.append(np.broadcast_to(np.asarray(lo, dtype=float), (count,)).copy())
        self.hi.append(np.broadcast_to(np.asarray(hi, dtype=float), (count,)).copy())
        self.n += count
        return ids

    def term(self, rows: np.ndarray, cols: np.ndarray, vals: float | np.ndarray) -> None:
        """Add coefficient ``vals`` of column ``cols`` to ``rows`` (arrays broadcast together)."""
        rows, cols, vals = np.broadcast_arrays(np.asarray(rows), np.asarray(cols), np.asarray(vals, dtype=float))
        m = (cols >= 0) & (vals != 0)
        self.rows.append(rows[m].ravel())
        self.cols.append(cols[m].ravel())
        self.vals.append(vals[m].ravel())

    def matrix(self, num_col: int) -> tuple[sp.csc_matrix, np.ndarray, np.ndarray]:
        cat = (lambda xs, dt: np.concatenate(xs).astype(dt) if xs else np.zeros(0, dt))
        A = sp.coo_matrix((cat(self.vals, float), (cat(self.rows, np.int64), cat(self.cols, np.int64))),
                          shape=(self.n, num_col)).tocsc()
        A.sum_duplicates()
        return A, cat(self.lo, float), cat(self.hi, float)


def build_model(dag: DAG, budget: int | None, *, free_form: str = "tight", paper_6b: bool = False,
                usefulness: bool = True, memory_form: str = "auto") -> CheckmateModel:
    """Eq. (9) for ``dag`` at ``budget`` bytes.

    budget None builds the least-budget LP instead: the objective is a budget column B (in model
    units above the constant) bounding every budget row, and the cost terms are dropped.
    ``free_form``: "paper" (6c aggregated, binary FREE) or "tight" (disaggregated, continuous FREE).
    ``memory_form``: "recurrence" (P columns and eq. 2-3 rows), "dense" (U substituted: one budget row
    per (t, k) over R, S and FREE) or "auto" (dense
    unless its matrix would exceed DENSE_LIMIT nonzeros). Dense rows are knapsack rows over binaries,
    which HiGHS' cuts and heuristics use far better: VGG16 at n = 75 went from a 5.8% gap after 120 s
    to proven optimal in 110 s, and its LP solves 1.3-4x faster despite 5-8x the nonzeros.
    ``paper_6b`` adds the redundant (6b) rows. ``usefulness`` adds the rows that hold for clean
    schedules (see ``_rows_usefulness``).
    """
    if memory_form not in ("auto", "dense", "recurrence"):
        raise ValueError(f"memory_form must be 'auto', 'dense' or 'recurrence', got {memory_form!r}")
    if free_form not in ("paper", "tight"):
        raise ValueError(f"free_form must be 'paper' or 'tight', got {free_form!r}")
    n, E = dag.n, dag.edges
    e0, e1 = (E[:, 0], E[:, 1]) if len(E) else (np.zeros(0, np.int64), np.zeros(0, np.int64))
    scale = memory_scale(dag, budget)
    cost_unit = float(dag.cost.max()) if n and dag.cost.max() > 0 else 1.0
    mem = dag.mem / scale.unit
    work = dag.workspace / scale.unit
    r_ok, s_ok, s_one = allowed(dag)
    tt = np.arange(n)[:, None]
    cols = _Cols()
    unit_cost = dag.cost / cost_unit
    unit_cost[unit_cost < COST_EPS] = 0.0
    obj = unit_cost[None, :] if budget is not None else 0.0
    r = cols.add(r_ok, cost=obj, lo=np.eye(n))
    s = cols.add(s_ok, lo=s_one.astype(float))
    # FREE[t, (i, k)]: k computed in t (R allowed), i not pinned into t+1, unit t not a later user of i.
    s_next_one = np.zeros((n, n), dtype=bool)
    s_next_one[:-1] = s_one[1:]
    used_by_t = np.zeros((n, n), dtype=bool)
    used_by_t[e1, e0] = True
    free_ok = r_ok[:, e1] & ~s_next_one[:, e0] & ~used_by_t[:, e0] & (e1[None, :] < tt)
    free = cols.add(free_ok, integral=(free_form == "paper"))
    ub = scale.budget if budget is not None else np.inf
    if memory_form == "auto":
        memory_form = "dense" if _dense_nonzeros(r_ok, s_ok, free_ok, dag.edges) <= DENSE_LIMIT else "recurrence"
    dense = memory_form == "dense"
    p = cols.add(r_ok & (not dense), lo=0.0, hi=ub, integral=False)
    budget_rows = None
    bcol = -1
    if budget is None:
        bcol = int(cols.add(np.ones(1, dtype=bool), cost=1.0, lo=0.0, hi=np.inf, integral=False)[0])

    rows = _Rows()
    _rows_dependencies(rows, dag, r, s)
    _rows_free(rows, dag, r, s, free, free_form, paper_6b)
    if usefulness:
        _rows_usefulness(rows, dag, r, s)
    if dense:
        budget_rows = _rows_memory_dense(rows, dag, r, s, free, mem, work, 0.0 if bcol >= 0 else ub)
        if bcol >= 0:
            rows.term(budget_rows, bcol, -1.0)
    else:
        _rows_memory(rows, dag, r, s, free, p, mem, work)
    if bcol >= 0 and not dense:
        pc = p[p >= 0]
        ids = rows.new(len(pc), -np.inf, 0.0)
        rows.term(ids, pc, 1.0)
        rows.term(ids, bcol, -1.0)
    A, lo, hi = rows.matrix(cols.n)
    cat = np.concatenate
    return CheckmateModel(dag, scale, cost_unit, r, s, free, p, cat(cols.cost), cat(cols.lo), cat(cols.hi),
                          cat(cols.int), A, lo, hi, bcol, budget_rows)


def _rows_dependencies(rows: _Rows, dag: DAG, r: np.ndarray, s: np.ndarray) -> None:
    """(1b) R[t, j] <= R[t, i] + S[t, i] for edges (i, j); (1c) S[t, i] <= R[t-1, i] + S[t-1, i]."""
    E = dag.edges
    if len(E):
        rj = r[:, E[:, 1]]
        m = rj >= 0
        tix, eix = np.nonzero(m)
        ids = rows.new(len(tix), -np.inf, 0.0)
        rows.term(ids, rj[m], 1.0)
        rows.term(ids, r[tix, E[eix, 0]], -1.0)
        rows.term(ids, s[tix, E[eix, 0]], -1.0)
    tix, iix = np.nonzero(s[1:] >= 0)
    tix = tix + 1
    ids = rows.new(len(tix), -np.inf, 0.0)
    rows.term(ids, s[tix, iix], 1.0)
    rows.term(ids, r[tix - 1, iix], -1.0)
    rows.term(ids, s[tix - 1, iix], -1.0)


def _rows_usefulness(rows: _Rows, dag: DAG, r: np.ndarray, s: np.ndarray) -> None:
    """Rows satisfied by every clean schedule (so by an optimal one, see ``clean``), for i < t:

    R[t, i] + S[t, i] <= 1 (never recompute a resident value), and
    R[t, i] <= sum_{j in USERS(i), j <= t} R[t, j] + S[t+1, i], and the same for S[t, i]
    (a value computed or kept in stage t is read in stage t or kept for stage t+1).
    Values read by unit t itself are skipped: R[t, t] = 1 satisfies their rows.
    """
    n, E = dag.n, dag.edges
    tix, iix = np.nonzero((r >= 0) & (s >= 0) & (np.arange(n)[None, :] < np.arange(n)[:, None]))
    ids = rows.new(len(tix), -np.inf, 1.0)
    rows.term(ids, r[tix, iix], 1.0)
    rows.term(ids, s[tix, iix], 1.0)
    s_next = np.full_like(s, -1)
    s_next[:-1] = s[1:]
    for t in range(n):
        read_by_t = np.zeros(n, dtype=bool)
        read_by_t[dag.preds[t]] = True
        for var in (r, s):
            cand = np.flatnonzero((var[t] >= 0) & (np.arange(n) < t) & ~read_by_t)
            if not len(cand):
                continue
            ids = rows.new(len(cand), -np.inf, 0.0)
            rows.term(ids, var[t, cand], 1.0)
            rows.term(ids, s_next[t, cand], -1.0)
            row_of = np.full(n, -1, dtype=np.int64)
            row_of[cand] = ids
            if len(E):
                e = np.flatnonzero((row_of[E[:, 0]] >= 0) & (E[:, 1] <= t))
                rows.term(row_of[E[e, 0]], r[t, E[e, 1]], -1.0)


def _sibling_pairs(dag: DAG) -> tuple[np.ndarray, np.ndarray]:
    """Edge index pairs (e, f), e = (i, k), f = (i, j) with j > k: the later users of i after k."""
    E = dag.edges
    if not len(E):
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    src = E[:, 0]
    ends = np.searchsorted(src, src, side="right")
    counts = ends - np.arange(len(E)) - 1
    e = np.repeat(np.arange(len(E)), counts)
    offs = np.arange(len(e)) - np.repeat(np.cumsum(counts) - counts, counts)
    f = e + 1 + offs
    return e, f


def _rows_free(rows: _Rows, dag: DAG, r: np.ndarray, s: np.ndarray, free: np.ndarray, form: str,
               paper_6b: bool) -> None:
    """(6c) FREE[t, (i, k)] is 0 when k is not computed, i is kept for t+1, or a later user of i runs."""
    n, E = dag.n, dag.edges
    if not len(E):
        return
    s_next = np.full_like(s, -1)
    s_next[:-1] = s[1:]
    tix, eix = np.nonzero(free >= 0)
    fc = free[tix, eix]
    rk = r[tix, E[eix, 1]]
    sn = s_next[tix, E[eix, 0]]
    pe, pf = _sibling_pairs(dag)
    # hazards from later users: for each FREE column, the pairs (e, f) with R[t, j] a column
    lookup = np.full(free.shape, -1, dtype=np.int64)
    lookup[tix, eix] = np.arange(len(tix))
    tt = np.repeat(np.arange(n), len(pe))
    pe_t, pf_t = np.tile(pe, n), np.tile(pf, n)
    which = lookup[tt, pe_t] if len(pe) else np.zeros(0, np.int64)
    rj = r[tt, E[pf_t, 1]] if len(pe) else np.zeros(0, np.int64)
    keep = (which >= 0) & (rj >= 0)
    which, rj = which[keep], rj[keep]
    if form == "tight":
        ids = rows.new(len(fc), -np.inf, 0.0)
        rows.term(ids, fc, 1.0)
        rows.term(ids, rk, -1.0)
        has = sn >= 0
        ids = rows.new(int(has.sum()), -np.inf, 1.0)
        rows.term(ids, fc[has], 1.0)
        rows.term(ids, sn[has], 1.0)
        ids = rows.new(len(which), -np.inf, 1.0)
        rows.term(ids, fc[which], 1.0)
        rows.term(ids, rj, 1.0)
    else:
        kappa = 1.0 + (sn >= 0) + np.bincount(which, minlength=len(fc))
        ids = rows.new(len(fc), -np.inf, kappa - 1.0)
        rows.term(ids, fc, kappa)
        rows.term(ids, rk, -1.0)
        rows.term(ids, sn, 1.0)
        rows.term(ids[which], rj, 1.0)
    if paper_6b:
        ids = rows.new(len(fc), -np.inf, 0.0)
        rows.term(ids, rk, 1.0)
        rows.term(ids, sn, -1.0)
        rows.term(ids[which], rj, -1.0)
        rows.term(ids, fc, -1.0)


def _dense_nonzeros(r_ok: np.ndarray, s_ok: np.ndarray, free_ok: np.ndarray, E: np.ndarray) -> int:
    """Nonzeros of the dense budget rows: per stage, positions x (S terms + R terms + FREE terms)."""
    pos = r_ok.sum(axis=1).astype(np.int64)
    return int((pos * (s_ok.sum(axis=1) + (pos + 1) // 2 + free_ok.sum(axis=1))).sum())


def _rows_memory_dense(rows: _Rows, dag: DAG, r: np.ndarray, s: np.ndarray, free: np.ndarray, mem: np.ndarray,
                       work: np.ndarray, budget: float) -> np.ndarray:
    """U substituted into the budget rows: for each position k of stage t with R[t, k] not fixed to 0,
    sum_i M_i S[t, i] + sum_{j <= k} M_j R[t, j] + W_k R[t, k] - sum_{j < k} GC_t(j) <= budget.
    Returns the row indices."""
    n, E = dag.n, dag.edges
    out = []
    for t in range(n):
        pos = np.flatnonzero(r[t] >= 0)
        ids = rows.new(len(pos), -np.inf, budget)
        out.append(ids)
        si = np.flatnonzero(s[t] >= 0)
        rows.term(ids[:, None], s[t, si][None, :], -(-mem[si])[None, :])
        q, j = np.nonzero(pos[None, :] <= pos[:, None])  # row q gets R[t, pos[j]] for pos[j] <= pos[q]
        rows.term(ids[q], r[t, pos[j]], mem[pos[j]] + np.where(q == j, work[pos[j]], 0.0))
        if len(E):
            fe = np.flatnonzero(free[t] >= 0)
            q, f = np.nonzero(E[fe, 1][None, :] < pos[:, None])
            rows.term(ids[q], free[t, fe[f]], -mem[E[fe[f], 0]])
    return np.concatenate(out) if out else np.zeros(0, np.int64)


def _rows_memory(rows: _Rows, dag: DAG, r: np.ndarray, s: np.ndarray, free: np.ndarray, p: np.ndarray,
                 mem: np.ndarray, work: np.ndarray) -> None:
    """Recurrence (2-3) on P = U + W R, between consecutive positions of a stage that have a P column.

    First position k0: P[t, k0] = sum_i M_i S[t, i] + (M + W)_k0 R[t, k0].
    Next position k after k': P[t, k] = P[t, k'] - W_k' R[t, k'] - sum_{i in deps(k')} M_i FREE[t, (i, k')]
                                        + (M + W)_k R[t, k].
    """
    n, E = dag.n, dag.edges
    for t in range(n):
        pos = np.flatnonzero(p[t] >= 0)
        ids = rows.new(len(pos), 0.0, 0.0)
        rows.term(ids, p[t, pos], 1.0)
        rows.term(ids, r[t, pos], -(mem[pos] + work[pos]))
        si = np.flatnonzero(s[t] >= 0)
        rows.term(np.full(len(si), ids[0]), s[t, si], -mem[si])
        if len(pos) < 2:
            continue
        nxt = ids[1:]
        prev = pos[:-1]
        rows.term(nxt, p[t, prev], -1.0)
        rows.term(nxt, r[t, prev], work[prev])
        if len(E):
            row_of = np.full(n, -1, dtype=np.int64)
            row_of[prev] = nxt
            fe = np.flatnonzero(free[t] >= 0)
            rr = row_of[E[fe, 1]]
            ok = rr >= 0
            rows.term(rr[ok], free[t, fe[ok]], mem[E[fe[ok], 0]])


@dataclass
class SolveResult:
    """What a solver run left: status, best column vector (or None), objective and bound in model units."""

    status: str
    """"optimal", "time_limit", "infeasible", "interrupted", or another solver status in lower case."""
    x: np.ndarray | None
    objective: float
    bound: float
    seconds: float
    nodes: int = 0


_scheduler_threads: int | None = None
"""Threads the HiGHS global scheduler was started with in this process (None: not started)."""

_HIGHS_STATUS = {"kOptimal": "optimal", "kTimeLimit": "time_limit", "kInfeasible": "infeasible",
                 "kInterrupt": "interrupted", "kUnboundedOrInfeasible": "infeasible",
                 "kSolutionLimit": "solution_limit", "kIterationLimit": "iteration_limit",
                 "kObjectiveBound": "objective_bound", "kObjectiveTarget": "objective_target"}


def solve_highs(model: CheckmateModel, *, integral: bool, time_limit: float | None = None,
                threads: int | None = None, gap: float = 1e-4, start: np.ndarray | None = None,
                progress=None, progress_every: float = 1.0) -> SolveResult:
    """Solve ``model`` (the MILP, or its LP relaxation when ``integral`` is False) with HiGHS.

    ``progress(dict)`` is called on every improving solution and at most every ``progress_every``
    seconds from HiGHS' MIP interrupt callback, with the incumbent and dual bound in model units.
    """
    if integral and time_limit is not None:
        return _solve_isolated(model, time_limit=time_limit, threads=threads, gap=gap, start=start,
                               progress=progress, progress_every=progress_every)
    return _solve_here(model, integral=integral, time_limit=time_limit, threads=threads, gap=gap, start=start,
                       progress=progress, progress_every=progress_every)


def _solve_here(model: CheckmateModel, *, integral: bool, time_limit: float | None, threads: int | None,
                gap: float, start: np.ndarray | None, progress, progress_every: float,
                on_incumbent=None) -> SolveResult:
    """``solve_highs`` in this process (``on_incumbent(x, objective)`` on every improving MIP solution)."""
    h, clock = _load_highs(model, integral, threads, gap)
    if start is not None and integral:
        h.setSolution(model.num_col, np.arange(model.num_col, dtype=np.int32), np.asarray(start, dtype=float))
    failed: list[BaseException] = []
    if progress is not None and integral:
        _subscribe_progress(h, progress, progress_every, failed)
    if on_incumbent is not None and integral:
        h.cbMipImprovingSolution.subscribe(
            lambda e: on_incumbent(np.array(e.data_out.mip_solution, dtype=float), e.data_out.objective_function_value))
    return _run_highs(h, clock, integral, time_limit, failed, model)


HARD_STOP_GRACE = 5.0
"""Seconds past the time limit (plus 5% of it) after which a MILP solve's process is killed."""


def _solve_isolated(model: CheckmateModel, *, time_limit: float, threads: int | None, gap: float,
                    start: np.ndarray | None, progress, progress_every: float) -> SolveResult:
    """The MILP in a child process (``python -m remc.passes._highs_worker``), stopped for certain at the
    time limit.

    HiGHS checks its time limit and interrupt callbacks in the MIP search, but not inside every step:
    its MIP presolve on dense budget rows, and the dual simplex of the root LP (a separate LP solver
    inside the MIP that the user callbacks do not reach), ran minutes past a 20 s limit on small zoo
    graphs. The child sends every improving solution and progress report as it goes; if it has not
    returned HARD_STOP_GRACE seconds (plus 5%) after the limit, it is killed and the best solution it
    sent is the result, with status "time_limit".
    """
    import pickle
    import queue
    import subprocess
    import threading

    t0 = time.perf_counter()
    rfd, wfd = os.pipe()
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    try:
        proc = subprocess.Popen([sys.executable, "-m", "remc.passes._highs_worker", str(wfd)], stdin=subprocess.PIPE,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, pass_fds=(wfd,), env=env)
    finally:
        os.close(wfd)
    inbox: queue.Queue = queue.Queue()

    def read() -> None:
        with os.fdopen(rfd, "rb") as f:
            while True:
                try:
                    inbox.put(pickle.load(f))
                except Exception:  # EOF: the child ended or was killed
                    inbox.put(("eof", None))
                    return

    reader = threading.Thread(target=read, daemon=True, name="remc-highs-reader")
    reader.start()
    opts = dict(threads=threads, gap=gap, start=start, progress_every=progress_every,
                deadline=time.time() + time_limit, want_progress=progress is not None)
    try:
        pickle.dump((model, opts), proc.stdin, protocol=pickle.HIGHEST_PROTOCOL)
        proc.stdin.close()
    except OSError:  # the child died at start; its end of the pipe says why (an "error" message) or EOF
        pass
    hard = t0 + time_limit * 1.05 + HARD_STOP_GRACE
    best_x, best_obj, bound, result, error = None, math.inf, -math.inf, None, None
    try:
        while result is None and error is None:
            left = hard - time.perf_counter()
            if left <= 0:
                break
            try:
                kind, payload = inbox.get(timeout=min(left, 0.5))
            except queue.Empty:
                continue
            if kind == "incumbent":
                x, obj = payload
                if obj < best_obj:
                    best_x, best_obj = x, obj
            elif kind == "progress":
                if math.isfinite(payload["bound"]):
                    bound = max(bound, payload["bound"])
                progress(payload)
            elif kind == "result":
                result = payload
            elif kind == "error":
                error = payload
            else:  # eof
                error = f"the solver process ended without a result (exit code {proc.wait(5)})"
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait(5)
    if result is not None:
        return result
    if error is not None:
        from ..ir.errors import SolverError
        raise SolverError(f"HiGHS failed in its solver process: {error}")
    return SolveResult("time_limit", best_x, best_obj if best_x is not None else math.inf, bound,
                       time.perf_counter() - t0, 0)


def isolated_main(fd: int) -> None:
    """Body of the child process of ``_solve_isolated``: read (model, options) from stdin, solve, and write
    pickled (kind, payload) messages to file descriptor ``fd``."""
    import pickle

    out = os.fdopen(fd, "wb")

    def send(msg) -> None:
        pickle.dump(msg, out, protocol=pickle.HIGHEST_PROTOCOL)
        out.flush()

    try:
        model, opts = pickle.load(sys.stdin.buffer)
        progress = (lambda d: send(("progress", d))) if opts["want_progress"] else None
        res = _solve_here(model, integral=True, time_limit=max(opts["deadline"] - time.time(), 1e-3),
                          threads=opts["threads"], gap=opts["gap"], start=opts["start"], progress=progress,
                          progress_every=opts["progress_every"], on_incumbent=lambda x, obj: send(("incumbent", (x, obj))))
        send(("result", res))
    except BaseException as e:  # reported to the parent, which raises
        try:
            send(("error", f"{type(e).__name__}: {e}"))
        except Exception:
            pass
    finally:
        try:
            out.close()
        except Exception:
            pass


class LpSession:
    """The LP relaxation of one model in one HiGHS instance, re-solved at other budgets from its last
    basis (dual simplex after a bound change): an eps search costs little more than one LP."""

    def __init__(self, model: CheckmateModel, *, threads: int | None = None) -> None:
        self.model = model
        self._h, self._clock = _load_highs(model, False, threads, 1e-4)
        self._rows = model.budget_rows if model.budget_rows is not None else np.zeros(0, np.int64)
        self._cols = model.budget_cols()

    def solve(self, budget: int, *, time_limit: float | None = None) -> SolveResult:
        """The LP at ``budget`` bytes."""
        room = self.model.scale.room(budget)
        h = self._h
        if len(self._rows):
            k = len(self._rows)
            h.changeRowsBounds(k, self._rows.astype(np.int32), np.full(k, -np.inf), np.full(k, room))
        if len(self._cols):
            k = len(self._cols)
            h.changeColsBounds(k, self._cols.astype(np.int32), np.zeros(k), np.full(k, room))
        return _run_highs(h, self._clock, False, time_limit, [], self.model)


def _load_highs(model: CheckmateModel, integral: bool, threads: int | None, gap: float):
    """A silent Highs instance holding ``model``, and its deadline clock (see ``_Deadline``)."""
    import highspy

    global _scheduler_threads
    want = int(threads or 0)
    if _scheduler_threads is not None and _scheduler_threads != want:
        highspy.Highs.resetGlobalScheduler(True)  # HiGHS refuses a new thread count otherwise
    _scheduler_threads = want
    h = _new_highs()
    h.silent()
    h.setOptionValue("threads", want)
    h.setOptionValue("mip_rel_gap", float(gap))
    if not integral:
        h.setOptionValue("presolve", LP_PRESOLVE)
    A = model.A
    kind = model.integral.astype(np.int32) if integral else np.zeros(model.num_col, np.int32)
    status = h.passModel(model.num_col, model.num_row, int(A.nnz), 1, 1, 0.0, model.col_cost, model.col_lower,
                         model.col_upper, model.row_lower, model.row_upper, A.indptr.astype(np.int32),
                         A.indices.astype(np.int32), A.data.astype(float), kind)
    if status == highspy.HighsStatus.kError:
        raise RuntimeError("HiGHS rejected the model (passModel returned an error)")
    clock = _Deadline()
    h.cbMipInterrupt.subscribe(clock.check)
    h.cbSimplexInterrupt.subscribe(clock.check)
    return h, clock


def _run_highs(h, clock: "_Deadline", integral: bool, time_limit: float | None,
               failed: list[BaseException], model: CheckmateModel | None = None) -> SolveResult:
    """Run ``h`` (within ``time_limit`` seconds of this call) and read its result.

    For an LP the bound is ``safe_dual_bound`` of HiGHS' row duals whenever it has a dual vector for the
    original LP (at the optimum, and at a time limit when presolve is off), else -inf (``model`` needed).
    """
    h.setOptionValue("time_limit", math.inf if time_limit is None else h.getRunTime() + float(time_limit))
    clock.start(time_limit)
    before = h.getRunTime()
    h.run()
    if failed:
        raise failed[0]
    info = h.getInfo()
    name = h.getModelStatus().name
    st = _HIGHS_STATUS.get(name, name.removeprefix("k").lower())
    if clock.late and st == "interrupted":
        st = "time_limit"
    has_x = info.primal_solution_status == 2  # kSolutionStatusFeasible
    x = np.asarray(h.getSolution().col_value) if has_x else None
    obj = info.objective_function_value if has_x else math.inf
    if integral:
        bound = info.mip_dual_bound
    else:
        bound = _lp_bound(h, model) if model is not None else (obj if st == "optimal" else -math.inf)
    return SolveResult(st, x, obj, bound, h.getRunTime() - before, int(info.mip_node_count) if integral else 0)


def _lp_bound(h, model: CheckmateModel) -> float:
    """``safe_dual_bound`` of the row duals HiGHS holds for ``model``'s LP, or -inf when it holds none."""
    sol = h.getSolution()
    if not sol.dual_valid:
        return -math.inf
    y = np.asarray(sol.row_dual, dtype=float)
    if len(y) != model.num_row or not np.isfinite(y).all():
        return -math.inf
    return safe_dual_bound(model, y)


BOUND_SLACK = 1e-9
"""Relative slack taken off ``safe_dual_bound`` for floating-point rounding in its sums."""


def safe_dual_bound(model: CheckmateModel, row_dual: np.ndarray) -> float:
    """A lower bound on the LP relaxation of ``model`` (model cost units) from any row dual vector y.

    For every x in the LP's box l <= x <= u with row_lower <= A x <= row_upper:
    c'x = y'Ax + (c - A'y)'x >= sum_i y_i (row_lower_i if y_i > 0 else row_upper_i)
    + sum_j min(d_j l_j, d_j u_j), d = c - A'y. Entries of y whose sign needs an infinite row bound are set
    to 0 first. The bound holds for any y (an optimal one gives the LP optimum; the duals of an unfinished
    dual simplex, or of an interior point method, a bound below it), so it needs no dual-feasibility
    tolerance; it is lowered by BOUND_SLACK of the magnitude of its terms for rounding.
    Returns -inf when a reduced cost needs an infinite column bound (only the least-budget LP's budget
    column has one).
    """
    y = np.asarray(row_dual, dtype=float).copy()
    lo, hi = model.row_lower, model.row_upper
    y[(y > 0) & ~np.isfinite(lo)] = 0.0
    y[(y < 0) & ~np.isfinite(hi)] = 0.0
    row = np.zeros_like(y)
    row[y > 0] = y[y > 0] * lo[y > 0]
    row[y < 0] = y[y < 0] * hi[y < 0]
    d = model.col_cost - model.A.T @ y
    col = np.zeros_like(d)
    pos, neg = d > 0, d < 0
    if not (np.isfinite(model.col_lower[pos]).all() and np.isfinite(model.col_upper[neg]).all()):
        return -math.inf
    col[pos] = d[pos] * model.col_lower[pos]
    col[neg] = d[neg] * model.col_upper[neg]
    total = float(row.sum() + col.sum())
    return total - BOUND_SLACK * float(np.abs(row).sum() + np.abs(col).sum()) - 1e-12


class _Deadline:
    """Interrupts HiGHS once the deadline has passed: its own time limit is not checked inside long root
    cut loops (a 285 s limit ran 378 s on a 197-unit VGG16)."""

    def __init__(self) -> None:
        self.deadline = math.inf
        self.late = False

    def start(self, time_limit: float | None) -> None:
        self.deadline = math.inf if time_limit is None else time.perf_counter() + time_limit
        self.late = False

    def check(self, e) -> None:
        if time.perf_counter() > self.deadline:
            self.late = True
            e.interrupt()


_banner_done = False


def _new_highs():
    """A Highs instance; the first one in the process is made with fd 1 muted (HiGHS prints a banner)."""
    import highspy

    global _banner_done
    if _banner_done:
        return highspy.Highs()
    _banner_done = True
    try:
        sys.stdout.flush()
        saved, null = os.dup(1), os.open(os.devnull, os.O_WRONLY)
    except (OSError, ValueError):
        return highspy.Highs()
    try:
        os.dup2(null, 1)
        h = highspy.Highs()
        ctypes.CDLL(None).fflush(None)
    finally:
        os.dup2(saved, 1)
        os.close(saved)
        os.close(null)
    return h


def _subscribe_progress(h, progress, every: float, failed: list[BaseException]) -> None:
    """Forward HiGHS MIP callbacks to ``progress``; an exception in it stops the solve and is kept."""
    last = [-math.inf]

    def report(e, force: bool) -> None:
        d = e.data_out
        if failed:
            e.interrupt()
        elif force or d.running_time - last[0] >= every:
            last[0] = d.running_time
            try:
                progress(dict(incumbent=d.mip_primal_bound, bound=d.mip_dual_bound, gap=d.mip_gap,
                              elapsed=d.running_time))
            except BaseException as exc:  # re-raised by solve_highs once HiGHS has stopped
                failed.append(exc)
                e.interrupt()

    h.cbMipImprovingSolution.subscribe(lambda e: report(e, True))
    h.cbMipInterrupt.subscribe(lambda e: report(e, False))


def simple_lower_bound(dag: DAG) -> int:
    """A proven lower bound on any schedule's peak: each unit runs once with all its inputs resident."""
    need = dag.constant + dag.mem + dag.workspace
    for k, p in enumerate(dag.preds):
        need[k] += int(dag.mem[p].sum())
    return int(need.max()) if dag.n else int(dag.constant)


def least_budget_bound(dag: DAG, *, time_limit: float | None = None, threads: int | None = None) -> int:
    """A proven lower bound on the least budget any schedule fits: max(simple bound, LP relaxation bound).

    The LP minimizes a budget column B over the relaxation of eq. (9); every schedule's peak is feasible
    for it, so B* is a lower bound (lowered by 1 ppm for solver tolerances).
    """
    best = simple_lower_bound(dag)
    model = build_model(dag, None, usefulness=False)
    res = solve_highs(model, integral=False, time_limit=time_limit, threads=threads)
    if res.status == "optimal" and res.x is not None:
        lp = math.ceil(res.objective * model.scale.unit * (1 - 1e-6)) + int(dag.constant)
        best = max(best, lp)
    return best
