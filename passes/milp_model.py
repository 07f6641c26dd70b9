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
cost, and positive costs below COST_EPS of it are raised to COST_EPS (no unit is free in the model, so the
solver never recomputes a cheap unit for nothing; ``bound_correction`` keeps the dual bound valid for the
exact costs). The objective offset ``offset`` is minus the cost of computing every unit once, so that a
solver's relative gap is measured on the recomputation overhead. Every schedule a solver returns is
checked again in exact bytes by the caller.

The solver itself is not here: the passes hand models to a backend they receive (passes/solver_api.py).
"""
from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from functools import reduce
from typing import TYPE_CHECKING

import numpy as np

from ..ir.dag import DAG
from ..ir.schedule import free_matrix, memory_profile
from ..ir.sizes import describe_size, format_size
from .solver_api import SolverBackend

if TYPE_CHECKING:
    import scipy.sparse as sp

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
COST_EPS = 1e-7
"""Positive costs below this fraction of the largest are raised to it in the model: HiGHS returned invalid
dual bounds with costs spanning 1e-12..1 (VGG16 with FLOP costs, where a ReLU costs 4e-12 of a
convolution). They were once set to 0, which let the MILP recompute such a unit for free and call a worse
schedule optimal (FCN8's add). Raised costs are >= the true ones, so the model's dual bound is lowered by
``CheckmateModel.bound_correction`` (the most the raise can add to any schedule) to stay valid."""
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
    sizes = np.concatenate([dag.mem, dag.workspace, dag.kept, dag.kept_first])
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
    offset: float = 0.0
    """Objective offset (model units): minus the cost of computing every unit once, so that objective +
    offset is the recomputation overhead, on which a backend's relative gap is measured."""
    bound_correction: float = 0.0
    cost_floor: float = COST_EPS
    """Positive costs below this fraction of the largest were raised to it."""
    """Model units by which costs raised to COST_EPS can overstate any schedule's cost: a bound B on the
    model's objective gives B - bound_correction on the exact one."""

    def cost_of(self, objective: float) -> float:
        """A model objective (offset excluded) in cost units (an upper estimate of the exact cost)."""
        return objective * self.cost_unit

    def bound_of(self, bound: float) -> float:
        """A proven lower bound on the model objective as a proven lower bound on the exact cost."""
        return (bound - self.bound_correction) * self.cost_unit if math.isfinite(bound) else -math.inf

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
        import scipy.sparse as sp  # here, not at the module's top: its import is 0.2 s of CPU (remc solve's start-up)
        cat = (lambda xs, dt: np.concatenate(xs).astype(dt) if xs else np.zeros(0, dt))
        A = sp.coo_matrix((cat(self.vals, float), (cat(self.rows, np.int64), cat(self.cols, np.int64))),
                          shape=(self.n, num_col)).tocsc()
        A.sum_duplicates()
        return A, cat(self.lo, float), cat(self.hi, float)


def build_model(dag: DAG, budget: int | None, *, free_form: str = "tight", paper_6b: bool = False,
                usefulness: bool = True, memory_form: str = "auto", cost_floor: float = COST_EPS) -> CheckmateModel:
    """Eq. (9) for ``dag`` at ``budget`` bytes.

    ``cost_floor``: positive costs below this fraction of the largest are raised to it (see COST_EPS and
    ``CheckmateModel.bound_correction``; ``cost_floor_for`` picks one that keeps the correction small).

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
    exact_cost = dag.cost / cost_unit
    unit_cost = np.where((exact_cost > 0) & (exact_cost < cost_floor), cost_floor, exact_cost)
    obj = unit_cost[None, :] if budget is not None else 0.0
    r = cols.add(r_ok, cost=obj, lo=np.eye(n))
    offset = correction = 0.0
    if budget is not None:
        offset = -float(unit_cost.sum())
        correction = float(((unit_cost - exact_cost) * r_ok.sum(axis=0)).sum())
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
        budget_rows = _rows_memory_dense(rows, dag, r, s, free, mem, work, 0.0 if bcol >= 0 else ub, scale.unit)
        if bcol >= 0:
            rows.term(budget_rows, np.asarray(bcol), -1.0)
    else:
        _rows_memory(rows, dag, r, s, free, p, mem, work, scale.unit)
    if bcol >= 0 and not dense:
        pc = p[p >= 0]
        ids = rows.new(len(pc), -np.inf, 0.0)
        rows.term(ids, pc, 1.0)
        rows.term(ids, np.asarray(bcol), -1.0)
    A, lo, hi = rows.matrix(cols.n)
    cat = np.concatenate
    return CheckmateModel(dag, scale, cost_unit, r, s, free, p, cat(cols.cost), cat(cols.lo), cat(cols.hi),
                          cat(cols.int), A, lo, hi, bcol, budget_rows, offset, correction, cost_floor)


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
                       work: np.ndarray, budget: float, unit: float) -> np.ndarray:
    """U substituted into the budget rows: for each position k of stage t with R[t, k] not fixed to 0,
    sum_i M_i S[t, i] + sum_{j <= k} M_j R[t, j] + W_k R[t, k] - sum_{j < k} GC_t(j) <= budget, with the kept
    outputs held there (``_kept_terms``; ``unit``: bytes per model unit). Returns the row indices."""
    n, E = dag.n, dag.edges
    out = []
    for t in range(n):
        pos = np.flatnonzero(r[t] >= 0)
        ids = rows.new(len(pos), -np.inf, budget)
        out.append(ids)
        _kept_terms(rows, dag, r, t, ids, pos, unit)
        si = np.flatnonzero(s[t] >= 0)
        rows.term(ids[:, None], s[t, si][None, :], -(-mem[si])[None, :])
        q, j = np.nonzero(pos[None, :] <= pos[:, None])  # row q gets R[t, pos[j]] for pos[j] <= pos[q]
        rows.term(ids[q], r[t, pos[j]], mem[pos[j]] + np.where(q == j, work[pos[j]], 0.0))
        if len(E):
            fe = np.flatnonzero(free[t] >= 0)
            q, f = np.nonzero(E[fe, 1][None, :] < pos[:, None])
            rows.term(ids[q], free[t, fe[f]], -mem[E[fe[f], 0]])
    return np.concatenate(out) if out else np.zeros(0, np.int64)


def _kept_terms(rows: _Rows, dag: DAG, r: np.ndarray, t: int, ids: np.ndarray, pos: np.ndarray, unit: float,
                sign: float = 1.0, first: bool = True) -> None:
    """The kept outputs (``DAG.kept``) held at positions ``pos`` of stage t, as terms on R[t, t] (fixed to 1,
    so the budget rows keep one right-hand side): those of the units before t (``first``), and K_t at
    position t (what its first computation holds of its own, ``DAG.kept_first``). ``unit``: bytes per model
    unit."""
    if not dag.kept.any() or not len(ids):
        return
    off = (dag.kept_before[t] if first else 0) + np.where(pos == t, dag.kept_first[t], 0)
    if not np.any(off):
        return
    if r[t, t] < 0:
        raise ValueError(f"stage {t} has no column R[{t}, {t}] for its kept outputs")
    rows.term(ids, np.full(len(ids), r[t, t]), sign * off / unit)


def _rows_memory(rows: _Rows, dag: DAG, r: np.ndarray, s: np.ndarray, free: np.ndarray, p: np.ndarray,
                 mem: np.ndarray, work: np.ndarray, unit: float) -> None:
    """Recurrence (2-3) on P = U + W R, between consecutive positions of a stage that have a P column.

    First position k0: P[t, k0] = sum_i M_i S[t, i] + (M + W)_k0 R[t, k0].
    Next position k after k': P[t, k] = P[t, k'] - W_k' R[t, k'] - sum_{i in deps(k')} M_i FREE[t, (i, k')]
                                        + (M + W)_k R[t, k].
    """
    n, E = dag.n, dag.edges
    for t in range(n):
        pos = np.flatnonzero(p[t] >= 0)
        if not len(pos):  # (a stage without columns: a window model's, passes/window.py)
            continue
        ids = rows.new(len(pos), 0.0, 0.0)
        rows.term(ids, p[t, pos], 1.0)
        rows.term(ids, r[t, pos], -(mem[pos] + work[pos]))
        _kept_terms(rows, dag, r, t, ids[:1], pos[:1], unit, -1.0)
        if len(pos) > 1 and pos[-1] == t:  # K_t from unit t's computation on (the stage's last position)
            _kept_terms(rows, dag, r, t, ids[-1:], pos[-1:], unit, -1.0, first=False)
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


def unit_needs(dag: DAG) -> np.ndarray:
    """int64[n]: the bytes unit k needs while it runs, beside the constant: its output, its workspace and
    all its inputs."""
    need = (dag.mem + dag.workspace).astype(np.int64)
    for k, p in enumerate(dag.preds):
        need[k] += int(dag.mem[p].sum())
    return need


def simple_lower_bound(dag: DAG) -> int:
    """A proven lower bound on any schedule's peak: each unit runs once with all its inputs resident, in its
    own stage at the latest, beside the kept outputs of the units before it and its own."""
    return int(dag.constant + _stage_needs(dag).max()) if dag.n else int(dag.constant)


def _stage_needs(dag: DAG) -> np.ndarray:
    """int64[n]: ``unit_needs`` with the kept outputs held when unit k runs in stage k."""
    return unit_needs(dag) + dag.kept_before + dag.kept_first


def lower_bound_text(dag: DAG) -> str:
    """Why ``simple_lower_bound`` is what it is: the always-resident bytes and the neediest unit's output,
    workspace and inputs (for infeasible-budget messages)."""
    if not dag.n:
        return f"no schedule of this graph can need less than {describe_size(int(dag.constant))}"
    k = int(_stage_needs(dag).argmax())
    inputs = int(dag.mem[dag.preds[k]].sum())
    held = int(dag.kept_before[k] + dag.kept_first[k])
    kept = f", {format_size(held)} of graph outputs computed by then" if held else ""
    return (f"no schedule of this graph can need less than {describe_size(simple_lower_bound(dag))}: "
            f"{format_size(int(dag.constant))} always resident{kept}, and unit {dag.names[k]!r} needs its output "
            f"{format_size(int(dag.mem[k]))}, workspace {format_size(int(dag.workspace[k]))} and its "
            f"{len(dag.preds[k])} input(s) {format_size(inputs)} while it runs"
            + ("" if dag.kept.any() else " (in remc's model, which holds the graph's outputs from the start, as a "
               "training loop's fixed buffers do; one run that allocates them when they are computed may need less "
               "on the device)"))


def least_budget_bound(dag: DAG, lp: SolverBackend, *, time_limit: float | None = None,
                       threads: int | None = None) -> int:
    """A proven lower bound on the least budget any schedule fits: max(simple bound, LP relaxation bound).

    The LP (solved by backend ``lp``) minimizes a budget column B over the relaxation of eq. (9); every
    schedule's peak is feasible for it, so B* is a lower bound (lowered by 1 ppm for solver tolerances).
    """
    best = simple_lower_bound(dag)
    model = build_model(dag, None, usefulness=False)
    res = lp.solve(model, integral=False, time_limit=time_limit, threads=threads)
    if res.status == "optimal" and res.x is not None:
        lp_b = math.ceil(res.objective * model.scale.unit * (1 - 1e-6)) + int(dag.constant)
        best = max(best, lp_b)
    return best


def cost_floor_for(dag: DAG, slack: float) -> float:
    """The largest cost floor (at most COST_EPS) whose ``bound_correction`` is at most ``slack`` cost units:
    every R column's cost may be raised by the floor, so floor * (R columns) * (largest cost) <= slack."""
    top = float(dag.cost.max()) if dag.n else 0.0
    if top <= 0 or slack <= 0:
        return COST_EPS
    r_ok, _, _ = allowed(dag)
    return float(min(COST_EPS, max(slack / (top * max(int(r_ok.sum()), 1)), 1e-12)))


def model_columns(dag: DAG) -> int:
    """Columns of eq. (9) for ``dag`` after variable fixing (R, S and FREE; cheap to count, no model built)."""
    r_ok, s_ok, _ = allowed(dag)
    E = dag.edges
    free = int(r_ok[:, E[:, 1]].sum()) if len(E) else 0  # an upper bound on FREE's columns
    return int(r_ok.sum() + s_ok.sum()) + free
