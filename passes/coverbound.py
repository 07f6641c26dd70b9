"""The retention-gap covering as an integer program (a MILP much smaller than eq. (9)), whose MIP dual bound is a
proven lower bound on the cost of every schedule within the budget: the integer counterpart of passes/bounds.py,
whose Lagrangian values are only as strong as the covering's LP relaxation (their duality gap is the integrality
gap of the covering's knapsack rows).

The model (stages over budget o_0 < o_1 < ... : those whose fixed part plus every retention gap exceeds the
budget, as in passes/bounds.py; e_k: that excess at o_k):

* z[g, k] for each retention gap g of a unit i that may be recomputed and each over stage o_k inside the gap
  (the (gap, stage) pairs of passes/bounds.py): i is not resident at o_k because its last computation before the
  gap's read b comes after o_k. Take any schedule within the budget and let s be the last stage before or at b
  that computes i, if i is computed inside the gap at all: z[g, k] = [o_k < s]. So z is a prefix within the gap
  (z[g, k+1] <= z[g, k]), i is resident at every over stage of the gap where z = 0 (computed at s and read at b),
  and z[g, first] = 1 costs one computation C_i, distinct for distinct gaps (their stage ranges are disjoint).
* res[p, k] (o_k after p's last frontier read, last_p < o_k): p resident at the moment o_k runs; comp[p, k]: p
  computed at a stage in (o_{k-1}, o_k] (k = number of over stages: after the last one), cost C_p. Such
  computations come after p's last read, so no gap pays for them. A unit resident at o_k was resident at
  o_{k-1} or computed in between: res[p, k] <= res[p, k-1] + comp[p, k] (res[p, u_p - 1] = 1 at its last read).
* Parents: when z[g, k] = 1 and z[g, k+1] = 0 (the last computation s of i lies in (o_k, o_{k+1}]), every parent p
  of i past its last read at o_k must be resident at s: z[g, k] - z[g, k+1] <= res[p, k] + comp[p, k+1]. A
  computation of p in (o_{k-1}, o_k] needs p's parents pp past their last read at o_{k-1} likewise:
  comp[p, k] <= res[pp, k-1] + comp[pp, k], to ``depth`` levels (fewer rows only weaken the bound).
* Cover: at each over stage, sum over pairs M_i z[g, k] - sum over p M_p res[p, k] >= e_k (the unit running at
  o_k, its parents, and every gap with z = 0 are resident, and so is every res).
* Objective: sum C_i z[g, first] + sum C_p comp[p, k].

Every schedule within the budget maps to a feasible point of the model costing at most its recomputation
overhead, so the MIP's dual bound (any one HiGHS reports, at any time) plus the cost of computing each unit once is
a lower bound on every schedule's cost. Measured against proven optima in BENCHMARKS.md (branch ``gap13``): on
Moccasin's random layered n=100 at 0.8 it proves +1.55% where the Lagrangian proves +1.03% (optimum +2.30%), and
on its n=250 at 0.9 it proves remc's schedule optimal (+0.904%).

Above MAX_COVER_COLUMNS, ``window_bound`` cuts the same model into windows of consecutive over stages (each gap's
cost split over the windows it reaches; its docstring says why the sum of the windows' bounds is a bound) and
solves each on its own: small solves at any size, but the split is only as good as an LP's (a gap dropped in one
window may be kept in the next), so it is far weaker than the whole model. Measured (BENCHMARKS.md, branch
``bound14``): above the Lagrangian of passes/bounds.py only on own random layered n=500 at 0.9; below it on
Moccasin's n=500, GPT-2 fine at 0.8 (+0.029% against +0.086-0.525%), nothing in 90-150 s at 1000 units or on
ResNet50 fine (149k-454k columns).
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np

from ..ir.dag import DAG
from ..ir.schedule import Schedule
from .milp_model import CheckmateModel, MemoryScale
from .solver_api import SolverBackend


class Csc:
    """A compressed sparse column matrix built with numpy alone (``from_coo``: duplicates summed, rows sorted in each
    column, as scipy's ``csc_matrix((v, (i, j)))`` builds it): what HiGHS takes (``indptr``, ``indices``, ``data``,
    ``nnz``, ``shape``). The covering MILP beside CP-SAT needs nothing else, and scipy.sparse's import was 0.3 s of CPU
    (1.2 s of wall at load 6 on 2 cores, segnet of Moccasin's set) taken from CP-SAT's search. Any other attribute
    or an index builds the scipy matrix (once) and reads it there."""

    def __init__(self, data: np.ndarray, indices: np.ndarray, indptr: np.ndarray, shape: tuple[int, int]) -> None:
        self.data, self.indices, self.indptr, self.shape = data, indices, indptr, shape
        self._sp = None

    @classmethod
    def from_coo(cls, v: np.ndarray, i: np.ndarray, j: np.ndarray, shape: tuple[int, int]) -> Csc:
        nrow, ncol = shape
        key = j.astype(np.int64) * max(nrow, 1) + i.astype(np.int64)
        order = np.argsort(key, kind="stable")
        key, v = key[order], np.asarray(v, dtype=np.float64)[order]
        first = np.flatnonzero(np.r_[True, key[1:] != key[:-1]]) if len(key) else np.zeros(0, np.int64)
        data = np.add.reduceat(v, first) if len(first) else np.zeros(0)
        key = key[first]
        indptr = np.zeros(ncol + 1, dtype=np.int64)
        np.cumsum(np.bincount(key // max(nrow, 1), minlength=ncol), out=indptr[1:])
        return cls(data, (key % max(nrow, 1)).astype(np.int32), indptr, (nrow, ncol))

    @property
    def nnz(self) -> int:
        return len(self.data)

    def scipy(self):
        """The same matrix as scipy's ``csc_matrix``."""
        if self._sp is None:
            import scipy.sparse as sp
            self._sp = sp.csc_matrix((self.data, self.indices, self.indptr), shape=self.shape)
        return self._sp

    def __getattr__(self, name: str):
        if name.startswith("__") or name == "_sp":
            raise AttributeError(name)
        return getattr(self.scipy(), name)

    def __getitem__(self, key):
        return self.scipy()[key]

    def __getstate__(self) -> dict:
        return {"data": self.data, "indices": self.indices, "indptr": self.indptr, "shape": self.shape, "_sp": None}

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)


COVER_DEPTH = 1
"""Levels of parents whose residency the model follows (0: the covering alone; 1: the parents of recomputed units;
2: their parents too). On ResNet50 at ONNX-node granularity cut to one bottleneck block per stage (741 units) at 0.9
the optima HiGHS reported at depths 2-4 (+0.03132%, +0.03116%, +0.03118% over computing each unit once) were above a
checked schedule's cost (+0.03113%; depth 1: +0.02090%; BENCHMARKS.md, branch ``bound14``). That was HiGHS 1.16's MIP
presolve, not the model (branch ``pub22``): the schedule maps to a point of the depth-2 model that meets every row at
its recomputation overhead (HiGHS, with every column fixed to it, agrees), and without presolve HiGHS' optimum of
the same model is that overhead (+0.031127%: the schedule is optimal). So a model of depth 2 or more is solved
without presolve (backends/strategies.py COVER_BESIDE_DEEP). Measured on Moccasin's random layered n=250 (1 thread, 30 s, loaded 2 cores): at 0.8 depth
0 +1.456% (optimal for its model in 2 s), 1 +2.302%, 2 +2.208% (both at the time limit); at 0.9 0 +0.589%, 1
+0.846% (optimal in 7 s), 2 +0.841% (time limit). Depth 0 is below the Lagrangian (it has no parents)."""
MAX_COVER_COLUMNS = 20_000
"""Largest model (columns) that ``cover_bound`` builds: Moccasin's random layered n=250 at 0.8 has 11k columns at
depth 1 (+2.30% in 30 s); its n=500 at 0.9 24k and at 0.8 57k, where HiGHS proved nothing in 30 s."""
COVER_KEPT = False
"""The covering MILP also follows the parents of a recomputed unit that are still read later (``_kept_columns``),
by default (``cover_bound``'s ``kept``: its callers may ask for them): such a parent is resident at the
recomputation, so it was computed once more inside its own gap or kept through it. Measured (results/pub16/
scratch/coverkept.py, 1 thread, 2 cores at load 7-10): VGG19 of Moccasin's set at 0.8 +2.756% = the optimum in two
lazy rounds (0.25 s of CPU in this process; without the rows +2.702%, 0.10 s: the parent of a recomputed unit freed
and computed again for its next read, which the optimum pays twice); the same bound as without them on the other
published graphs up to 100 units (one round: no row violated) and on MobileNet 0.8, where the lazy rounds in HiGHS'
child process took 40.6 s against 4.4 s. Off by default: checkmate asks for them only where the covering MILP runs
first, in this process (backends/strategies.py ``_cover_first``)."""
COVER_MERGE = True
"""``cover_bound`` solves the model with each gap's pairs merged between the points where z may drop
(``merge_chains``: the same optimum). Measured (results/pub17/scratch/coverlog.py, 1 thread, this process): ResNet50
of Moccasin's set at 0.8, 23237 columns, HiGHS' presolve took 21.6 s of 22.2 s to find the same merge."""
MERGE_RAW_COLUMNS = 200_000
"""With COVER_MERGE, the largest model built before merging (columns); ``max_columns`` applies to the merged one."""
SAFETY = 1e-6
"""Relative margin taken off the MIP dual bound (HiGHS' tolerances)."""


@dataclass
class CoverModel:
    """The covering MILP (module docstring) and what maps its bound back to cost units."""

    model: CheckmateModel
    pairs: int
    over: int
    cost_unit: float
    infeasible: bool = False
    """A stage's fixed part alone exceeds the budget (no schedule fits)."""
    col_stage: np.ndarray | None = None
    """int64[num_col]: the over stage index k of each column (pairs: their stage; res[p, k]: k; comp[p, k]: k, the
    interval (o_{k-1}, o_k], k = ``over`` for the computations after the last over stage)."""
    col_gap: np.ndarray | None = None
    """int64[num_col]: the retention gap of each pair column (-1 for res and comp columns)."""
    gap_cost: np.ndarray | None = None
    """float[gaps]: the cost (model units) of recomputing each gap's unit once, which the gap's first pair pays."""
    over_at: np.ndarray | None = None
    """int64[over]: the stage of each over stage o_k."""
    pair_bytes: np.ndarray | None = None
    """float[pairs]: the bytes each pair frees at its stage, at most the excess there (min(M_i, e_k))."""
    kept_rows: tuple[np.ndarray, np.ndarray] | None = None
    """Every kept-parent row (COVER_KEPT), in or out of this model: (pair (g, k), pair (gp, k)) (``_kept_columns``)."""
    prefix_rows: tuple[int, int] = (0, 0)
    """(first row, count) of the prefix rows z[g, k] - z[g, k-1] <= 0, one per pair but each gap's first, in pair
    order."""


@dataclass
class CoverBound:
    bound: float
    """Proven lower bound on every schedule's cost within the budget (cost units; -inf: none proven)."""
    status: str
    seconds: float
    columns: int
    note: str = ""
    start: np.ndarray | None = None
    """Where ``cover_bound`` was asked for it (``start``): an S decoded from the covering MILP's last solution
    (``cover_start``), a start for the stage search; None where no solution came back."""


def _pairs(dag: DAG, budget: int):
    """The retention gaps, the stages over budget and the (gap, over stage) pairs (as passes/bounds.py)."""
    from .bounds import gap_excess
    unit, lo, hi, excess, infeasible = gap_excess(dag, budget)
    over = np.flatnonzero(excess > 0)
    first = np.searchsorted(over, lo)
    cnt = np.searchsorted(over, hi, side="right") - first
    G = np.repeat(np.arange(len(unit)), cnt)
    K = np.repeat(first - np.cumsum(cnt) + cnt, cnt) + np.arange(len(G))
    return unit, G, K, over, excess, infeasible


def build_cover(dag: DAG, budget: int, *, depth: int = COVER_DEPTH,
                max_columns: int | None = MAX_COVER_COLUMNS, kept: bool | None = None,
                kept_select: np.ndarray | None = None) -> CoverModel | None:
    """The covering MILP of ``dag`` at ``budget`` (module docstring); None when no stage is over the budget or the
    model would have more than ``max_columns`` columns. ``kept`` (None: COVER_KEPT): with the kept-parent rows
    (``_kept_columns``), all of them, or where ``kept_select`` is given only those it selects (a bool mask over
    ``CoverModel.kept_rows``: a relaxation of the model with all of them, see ``cover_bound``)."""
    n = dag.n
    unit, G, K, over, excess, infeasible = _pairs(dag, budget)
    nov, npair = len(over), len(G)
    if infeasible or nov == 0 or npair == 0:
        return None if not infeasible else CoverModel(_empty(dag), 0, nov, 1.0, infeasible=True)
    last = dag.last_use.astype(np.int64)
    u = np.searchsorted(over, last, side="right")  # first over index after each unit's last read
    isfirst = np.r_[True, G[1:] != G[:-1]]
    islast = np.r_[G[1:] != G[:-1], True]
    # level 1: (pair, parent) with the parent past its last read at the pair's stage
    E0, E1 = (dag.edges[:, 0], dag.edges[:, 1]) if len(dag.edges) else (np.zeros(0, np.int64),) * 2
    order = np.argsort(E1, kind="stable")
    pc = np.bincount(E1, minlength=n)
    pstart = np.r_[0, np.cumsum(pc)]
    gi = unit[G]
    cnt = pc[gi]
    jj = np.repeat(np.arange(npair), cnt)
    off = np.arange(len(jj)) - np.repeat(np.cumsum(cnt) - cnt, cnt)
    par = E0[order][pstart[gi][jj] + off] if len(jj) else np.zeros(0, np.int64)
    ok = (last[par] < over[K[jj]]) & (depth >= 1)  # depth 0: the covering alone, no parents
    jj_in, par_in = jj[~ok], par[~ok]  # parents still read later (COVER_KEPT)
    jj, par = jj[ok], par[ok]
    # the over stages up to which each unit's residency is needed, through ``depth`` levels of parents
    kmax = np.full(n, -1, dtype=np.int64)
    np.maximum.at(kmax, par, K[jj])
    level = np.where(kmax >= 0, 1, 0)
    nest_from = kmax.copy()  # units whose computations get parent rows (all but the last level)
    for d in range(2, depth + 1):
        # comp[p, k] for k <= kmax_p + 1 needs pp at k - 1 <= kmax_p (where past pp's last read)
        cand = np.full(n, -1, dtype=np.int64)
        src = kmax[E1]
        reach = np.where(src >= u[E0], src, -1)
        np.maximum.at(cand, E0, reach)
        grown = cand > kmax
        level = np.where((level == 0) & (cand >= 0), d, level)
        kmax = np.maximum(kmax, cand)
        if not grown.any():
            break
    if depth >= 2:
        nest_from = kmax.copy()
        nest_from[level >= depth] = -1
    else:
        nest_from[:] = -1
    # columns: pairs, then res[p, u_p..kmax_p], then comp[p, u_p+1..kmax_p+1]
    has = kmax >= u
    nres = np.where(has, kmax - u + 1, 0)
    res0 = npair + np.r_[0, np.cumsum(nres)[:-1]]
    ncomp = nres.copy()
    comp0 = npair + int(nres.sum()) + np.r_[0, np.cumsum(ncomp)[:-1]]
    ncol = npair + int(nres.sum() + ncomp.sum())
    kept_cand = _kept_candidates(unit, G, K, nov, jj_in, par_in) \
        if (COVER_KEPT if kept is None else kept) and depth >= 1 else None
    kc = None if kept_cand is None else _kept_columns(G, kept_cand, kept_select, ncol)
    if kc is not None:
        ncol = kc.x0 + len(kc.xgap)
    if max_columns is not None and ncol > max_columns:
        return None

    def res_col(p, k):
        return res0[p] + (k - u[p])

    def comp_col(p, k):  # k in u_p+1 .. kmax_p+1
        return comp0[p] + (k - u[p] - 1)

    top = float(dag.cost.max()) if n else 1.0
    cost_unit = top if top > 0 else 1.0
    cost = np.zeros(ncol)
    cost[:npair] = np.where(isfirst, dag.cost[unit][G], 0.0) / cost_unit
    if kc is not None:
        cost[kc.x0:] = dag.cost[unit[kc.xgap]] / cost_unit
    upper = np.ones(ncol)
    for p in np.flatnonzero(has):
        sl = slice(comp0[p], comp0[p] + ncomp[p])
        cost[sl] = dag.cost[p] / cost_unit
        if dag.no_recompute[p]:
            upper[sl] = 0.0
    rows_i: list[np.ndarray] = []
    rows_c: list[np.ndarray] = []
    rows_v: list[np.ndarray] = []
    lo_b: list[np.ndarray] = []
    hi_b: list[np.ndarray] = []
    nrow = 0

    def add(r, c, v, lower, count, upper=None):
        nonlocal nrow
        rows_i.append(np.asarray(r, np.int64) + nrow)
        rows_c.append(np.asarray(c, np.int64))
        rows_v.append(np.asarray(v, np.float64))
        lo_b.append(np.asarray(lower, np.float64))
        hi_b.append(np.where(np.isfinite(lo_b[-1]), np.inf, 0.0) if upper is None else np.asarray(upper, np.float64))
        nrow += count

    # cover rows, scaled by the excess: sum M_i / e z - sum M_p / e res >= 1
    e = excess[over]
    ps = np.flatnonzero(has)
    rp = np.repeat(ps, nres[ps])
    rk = np.arange(len(rp)) - np.repeat(np.cumsum(nres[ps]) - nres[ps], nres[ps]) + u[rp]
    # (a gap's coefficient tightened to the most any 0/1 point can need at that stage: e plus every res there, and
    # every kept unit's bytes there)
    added = np.bincount(rk, weights=dag.mem[rp].astype(np.float64), minlength=nov)
    yk = np.zeros(0, np.int64) if kc is None else K[kc.ypair]
    yb = np.zeros(0) if kc is None else dag.mem[unit[G[kc.ypair]]].astype(np.float64)
    added = added + np.bincount(yk, weights=yb, minlength=nov)
    ycol = np.zeros(0, np.int64) if kc is None else kc.y0 + np.arange(len(kc.ypair))
    add(np.r_[K, rk, yk], np.r_[np.arange(npair), res_col(rp, rk), ycol],
        np.r_[np.minimum(dag.mem[unit[G]], e[K] + added[K]) / e[K], -dag.mem[rp] / e[rk], -yb / e[yk]], np.ones(nov),
        nov)
    # prefix rows: z[j] - z[j-1] <= 0
    nx = np.flatnonzero(~isfirst)
    m = len(nx)
    prefix_rows = (nrow, m)
    add(np.r_[np.arange(m), np.arange(m)], np.r_[nx, nx - 1], np.r_[np.ones(m), -np.ones(m)], np.full(m, -np.inf), m)
    # parent rows: z[j] - z[j+1] - res[p, k] - comp[p, k+1] <= 0
    m = len(jj)
    k = K[jj]
    nxt = ~islast[jj]
    r = np.arange(m)
    add(np.r_[r, r[nxt], r, r], np.r_[jj, jj[nxt] + 1, res_col(par, k), comp_col(par, k + 1)],
        np.r_[np.ones(m), -np.ones(int(nxt.sum())), -np.ones(m), -np.ones(m)], np.full(m, -np.inf), m)
    # chain rows: res[p, k] - res[p, k-1] - comp[p, k] <= 0 for k in u_p+1..kmax_p
    cp = np.repeat(ps, nres[ps] - 1)
    ck = np.arange(len(cp)) - np.repeat(np.cumsum(nres[ps] - 1) - (nres[ps] - 1), nres[ps] - 1) + u[cp] + 1
    m = len(cp)
    r = np.arange(m)
    add(np.r_[r, r, r], np.r_[res_col(cp, ck), res_col(cp, ck - 1), comp_col(cp, ck)],
        np.r_[np.ones(m), -np.ones(m), -np.ones(m)], np.full(m, -np.inf), m)
    # nesting rows: comp[p, k] - res[pp, k-1] - comp[pp, k] <= 0 for parents pp past their last read at o_{k-1}
    if depth >= 2:
        sel = (nest_from[E1] >= 0) & has[E1]
        ep, epp = E1[sel], E0[sel]
        # k from max(u_p + 1, u_pp + 1) to kmax_p + 1, and k - 1 <= kmax_pp
        k_lo = np.maximum(u[ep] + 1, u[epp] + 1)
        k_hi = np.minimum(kmax[ep] + 1, kmax[epp] + 1)
        c = np.maximum(k_hi - k_lo + 1, 0)
        ep, epp, k_lo, c = ep[c > 0], epp[c > 0], k_lo[c > 0], c[c > 0]
        if len(ep):
            e_p = np.repeat(ep, c)
            e_pp = np.repeat(epp, c)
            kk = np.arange(len(e_p)) - np.repeat(np.cumsum(c) - c, c) + np.repeat(k_lo, c)
            m = len(e_p)
            r = np.arange(m)
            add(np.r_[r, r, r], np.r_[comp_col(e_p, kk), res_col(e_pp, kk - 1), comp_col(e_pp, kk)],
                np.r_[np.ones(m), -np.ones(m), -np.ones(m)], np.full(m, -np.inf), m)
    if kc is not None:
        # kept rows: z[j] - z[j+1] + z[gp, k+1] - x[gp] - y[gp, k] <= 1 (_kept_columns' docstring)
        m = len(kc.j)
        r = np.arange(m)
        nxt = ~islast[kc.j]
        add(np.r_[r, r[nxt], r, r, r], np.r_[kc.j, kc.j[nxt] + 1, kc.a + 1, kc.x0 + kc.xi, kc.y0 + kc.yi],
            np.r_[np.ones(m), -np.ones(int(nxt.sum())), np.ones(m), -np.ones(m), -np.ones(m)], np.full(m, -np.inf), m,
            np.ones(m))
        # y[gp, k] <= z[gp, k], and y[gp, k] <= y[gp, k-1] along the gap
        m = len(kc.ypair)
        r = np.arange(m)
        add(np.r_[r, r], np.r_[ycol, kc.ypair], np.r_[np.ones(m), -np.ones(m)], np.full(m, -np.inf), m)
        prev = np.flatnonzero(~isfirst[kc.ypair])
        m = len(prev)
        r = np.arange(m)
        add(np.r_[r, r], np.r_[ycol[prev], ycol[prev] - 1], np.r_[np.ones(m), -np.ones(m)], np.full(m, -np.inf), m)
    A = Csc.from_coo(np.concatenate(rows_v), np.concatenate(rows_i), np.concatenate(rows_c), (nrow, ncol))
    row_lower = np.concatenate(lo_b)
    row_upper = np.concatenate(hi_b)
    empty = np.zeros((0, 0), dtype=np.int64)
    model = CheckmateModel(dag=dag, scale=MemoryScale(1.0, False, math.inf), cost_unit=cost_unit, r=empty, s=empty,
                           free=empty, p=empty, col_cost=cost, col_lower=np.zeros(ncol), col_upper=upper,
                           integral=np.ones(ncol, dtype=bool), A=A, row_lower=row_lower, row_upper=row_upper)
    col_stage = np.empty(ncol, dtype=np.int64)
    if kc is not None:
        col_stage[kc.y0:kc.x0] = yk
        col_stage[kc.x0:] = K[kc.xfirst]
    col_stage[:npair] = K
    col_gap = np.full(ncol, -1, dtype=np.int64)
    col_gap[:npair] = G
    col_stage[res_col(rp, rk)] = rk
    ck_all = rk + 1  # comp[p, u_p+1..kmax_p+1], one per res[p, u_p..kmax_p]
    col_stage[comp_col(rp, ck_all)] = ck_all
    gap_cost = np.zeros(len(unit))
    gap_cost[G[isfirst]] = dag.cost[unit[G[isfirst]]] / cost_unit
    return CoverModel(model, npair, nov, cost_unit, col_stage=col_stage, col_gap=col_gap, gap_cost=gap_cost,
                      over_at=over, pair_bytes=np.minimum(dag.mem[unit[G]].astype(np.float64), e[K]),
                      kept_rows=kept_cand, prefix_rows=prefix_rows)


@dataclass
class _Kept:
    """The kept-parent columns and rows of ``build_cover`` (``_kept_columns``)."""

    j: np.ndarray
    """pair (g, k) of each kept row (its unit i computed last in (o_k, o_{k+1}])."""
    a: np.ndarray
    """pair (gp, k) of the parent's gap at the same stage (gp's pair at k + 1 is a + 1)."""
    xgap: np.ndarray
    """the parents' gaps that get an x column (one more computation inside the gap), in column order."""
    xfirst: np.ndarray
    """each x column's gap's first pair."""
    xi: np.ndarray
    """each row's x column (index into xgap)."""
    ypair: np.ndarray
    """each y column's pair (gp, k'): k' from gp's first pair to the last one a row uses, consecutive per gap."""
    yi: np.ndarray
    """each row's y column (index into ypair)."""
    y0: int
    x0: int


def _kept_candidates(unit: np.ndarray, G: np.ndarray, K: np.ndarray, nov: int, jj: np.ndarray,
                     par: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """Every kept-parent row (COVER_KEPT) as (pair (g, k), pair (gp, k)) (``_kept_columns``' docstring)."""
    if len(jj) == 0 or nov < 2:
        return None
    k = K[jj]
    sel = k + 1 < nov
    jj, par, k = jj[sel], par[sel], k[sel]
    pk = unit[G].astype(np.int64) * (nov + 1) + K  # strictly increasing along the pairs
    want = par.astype(np.int64) * (nov + 1) + k
    a = np.minimum(np.searchsorted(pk, want), len(pk) - 1)
    b = np.minimum(a + 1, len(pk) - 1)
    ok = (pk[a] == want) & (a + 1 < len(pk)) & (G[b] == G[a]) & (K[b] == k + 1)
    if not ok.any():
        return None
    return jj[ok], a[ok]


def _kept_columns(G: np.ndarray, cand: tuple[np.ndarray, np.ndarray], select: np.ndarray | None,
                  ncol: int) -> _Kept | None:
    """Rows for the parents of a recomputed unit that are still read later (COVER_KEPT), those of ``cand`` that
    ``select`` selects (None: all).

    Take a pair (g, k) of unit i's gap with z[g, k] = 1 and z[g, k+1] = 0 (k+1 the next over stage; z = 0 there
    when g has no pair at k+1): i's last computation s in its gap lies in (o_k, o_{k+1}], and i's parent p is
    resident when i is computed at s. Where p has a retention gap gp of its own over both o_k and o_{k+1} (so s lies
    inside gp), and z[gp, k+1] = 1 (p's last computation s_p in gp comes after o_{k+1} >= s), p's residency at s
    comes either from a computation of p in gp at a stage t <= s < s_p, a second computation in gp beside s_p
    (x[gp] = 1, cost C_p), or from none in gp before s: then p was kept from its read before the gap through s, so
    it is resident at o_k and every over stage of gp before it (y[gp, k] = 1, and y is a prefix along gp, as z).
    y[gp, k] = 1 counts p's bytes in o_k's cover row; it is only set where z[gp, k] = 1 (y <= z), where the row
    credits p's bytes as freed, so the two cancel and the row stays a lower bound on the memory at o_k. Hence
    z[g, k] - z[g, k+1] + z[gp, k+1] - x[gp] - y[gp, k] <= 1 holds at the point of every schedule that computes no
    unit while it is resident (an optimal one does not: dropping such a computation changes no memory and costs
    less), and x[gp]'s cost C_p is paid by a computation no other column pays for (z[gp, first] pays s_p, the comp
    columns only computations after p's last read). None where no such row exists."""
    jj, a = cand
    if select is not None:
        if len(select) == 0:  # (none)
            return None
        jj, a = jj[select], a[select]
    if len(jj) == 0:
        return None
    gp = G[a]
    xgap, xi = np.unique(gp, return_inverse=True)
    first = np.searchsorted(G, xgap)  # each gap's first pair
    amax = np.zeros(len(xgap), np.int64)
    np.maximum.at(amax, xi, a)
    cnt = amax - first + 1
    ypair = np.repeat(first, cnt) + np.arange(int(cnt.sum())) - np.repeat(np.cumsum(cnt) - cnt, cnt)
    ystart = np.cumsum(cnt) - cnt
    yi = ystart[xi] + (a - first[xi])
    y0 = ncol
    return _Kept(jj, a, xgap, first, xi.astype(np.int64), ypair, yi, y0, y0 + len(ypair))


def _kept_violated(cm: CoverModel, x: np.ndarray) -> np.ndarray:
    """The kept-parent rows (``cm.kept_rows``) that ``x`` (a solution of the model without them) violates."""
    assert cm.kept_rows is not None and cm.col_gap is not None
    j, a = cm.kept_rows
    z = np.round(x[:cm.pairs])
    g = cm.col_gap[:cm.pairs]
    nxt = np.minimum(j + 1, cm.pairs - 1)
    z1 = np.where((j + 1 < cm.pairs) & (g[nxt] == g[j]), z[nxt], 0.0)
    return z[j] - z1 + z[a + 1] > 1.5


def merge_chains(cm: CoverModel) -> tuple[CheckmateModel, np.ndarray]:
    """The model ``cm`` with each gap's run of pairs between two drop points merged into one column
    (COVER_MERGE), and the merged column of each of ``cm``'s columns (a solution x' of the merged model is the
    solution x'[map] of ``cm``'s, at the same cost).

    Along a gap g, z[g, .] is a prefix: 1 up to the pair d (the drop) and 0 after it. A pair j is *hurt* by z = 1
    where it has a positive coefficient in a <= row (or a negative one in a >= row) other than its prefix row, or a
    cost without being the gap's first pair: the parent rows' z[j] and the kept rows' z[j] and z[gp, k+1]. Moving
    the drop of a solution from d to d'' > d, where none of the pairs d+1 .. d'' is hurt, sets only those pairs'
    z from 0 to 1: their other coefficients are the cover rows' (positive, >= rows), the -z[j+1] of the parent
    and kept rows and the -z of y <= z, so every row still holds, and the cost is unchanged (the gap's first pair
    is at or before d). So every solution maps to one at the same or lower cost whose drops lie only at a gap's
    last pair or just before a hurt pair (or before its first: z = 0 all along), i.e. whose z is constant on each
    run from one such point to the next: the merged model has exactly those solutions, so its optimum (and so every
    dual bound HiGHS proves for it) is a bound on the model's. The merge is what HiGHS' presolve finds by itself
    (its parallel rows and columns rule, a pair of the chain per round: 21.6 s of presolve for ResNet50 of
    Moccasin's set at 0.8, 23237 columns down to 704), done in one pass."""
    M = cm.model
    A = M.A
    ncol, nrow = M.num_col, M.num_row
    npair = cm.pairs
    cols = np.repeat(np.arange(ncol), np.diff(A.indptr))
    rows = np.asarray(A.indices, np.int64)
    vals = np.asarray(A.data, np.float64)
    r0, m = cm.prefix_rows
    in_prefix = (rows >= r0) & (rows < r0 + m)
    hurt_entry = ((vals > 0) & np.isfinite(M.row_upper[rows])) | ((vals < 0) & np.isfinite(M.row_lower[rows]))
    sel = hurt_entry & ~in_prefix & (cols < npair)
    hurt = np.zeros(npair, dtype=bool)
    hurt[cols[sel]] = True
    G = cm.col_gap[:npair] if cm.col_gap is not None else np.zeros(npair, np.int64)
    isfirst = np.r_[True, G[1:] != G[:-1]]
    islast = np.r_[G[1:] != G[:-1], True]
    hurt |= (M.col_cost[:npair] != 0) & ~isfirst
    drop = islast | np.r_[hurt[1:], False]  # a drop may lie here: the gap's last pair or just before a hurt one
    start = isfirst | np.r_[False, drop[:-1]]
    group = np.cumsum(start) - 1
    nmerged = int(group[-1]) + 1 if npair else 0
    col_map = np.r_[group, nmerged + np.arange(ncol - npair)].astype(np.int64)
    # prefix rows inside a run (both its pairs in one merged column) are dropped
    nx = np.flatnonzero(~isfirst)
    inner = np.zeros(nrow, dtype=bool)
    inner[r0 + np.arange(m)[group[nx] == group[nx - 1]]] = True
    row_map = np.cumsum(~inner) - 1
    keep = ~inner[rows]
    nrow2, ncol2 = int((~inner).sum()), nmerged + ncol - npair
    B = Csc.from_coo(vals[keep], row_map[rows[keep]], col_map[cols[keep]], (nrow2, ncol2))
    nz = B.data != 0  # (a parent row's z[j] - z[j+1] inside a run sums to 0)
    if not nz.all():
        c = np.repeat(np.arange(ncol2), np.diff(B.indptr))[nz]
        indptr = np.zeros(ncol2 + 1, dtype=np.int64)
        np.cumsum(np.bincount(c, minlength=ncol2), out=indptr[1:])
        B = Csc(B.data[nz], B.indices[nz], indptr, (nrow2, ncol2))
    cost = np.bincount(col_map, weights=M.col_cost, minlength=ncol2)
    upper = np.ones(ncol2)
    np.minimum.at(upper, col_map, M.col_upper)
    empty = np.zeros((0, 0), dtype=np.int64)
    model = CheckmateModel(dag=M.dag, scale=M.scale, cost_unit=M.cost_unit, r=empty, s=empty, free=empty, p=empty,
                           col_cost=cost, col_lower=np.zeros(ncol2), col_upper=upper,
                           integral=np.ones(ncol2, dtype=bool), A=B, row_lower=M.row_lower[~inner],
                           row_upper=M.row_upper[~inner])
    return model, col_map


def _empty(dag: DAG) -> CheckmateModel:
    empty = np.zeros((0, 0), dtype=np.int64)
    z = np.zeros(0)
    return CheckmateModel(dag=dag, scale=MemoryScale(1.0, False, math.inf), cost_unit=1.0, r=empty, s=empty,
                          free=empty, p=empty, col_cost=z, col_lower=z, col_upper=z, integral=np.zeros(0, bool),
                          A=Csc.from_coo(z, z.astype(np.int64), z.astype(np.int64), (0, 0)), row_lower=z, row_upper=z)


def cover_bound(dag: DAG, budget: int, mip: SolverBackend, *, time_limit: float | None, threads: int | None = None,
                gap: float = 1e-6, depth: int = COVER_DEPTH,
                max_columns: int | None = MAX_COVER_COLUMNS, kept: bool | None = None,
                enough: float = math.inf, start: bool = False) -> CoverBound:
    """The covering MILP's proven lower bound on the cost of every schedule of ``dag`` within ``budget`` (module
    docstring), solved by ``mip`` (HiGHS in a child process, stopped at ``time_limit`` seconds; None: no limit, in this process). The sum of costs
    when no stage is over the budget; inf when a stage's fixed part alone exceeds it; -inf when the model is
    above ``max_columns`` or the solver proves nothing.

    ``kept`` (None: COVER_KEPT): the kept-parent rows (``_kept_columns``) are added lazily: the model is solved
    without them, then again with those its solution violates added (and their columns), until a solution violates
    none (it is then optimal for the model with all of them), the bound reaches ``enough`` (cost units, e.g. what
    proves the caller's schedule) or the time is up. Each model solved is a relaxation
    of the one with all the rows (its cover rows lack only the terms -M_p y of the columns left out, which can only
    make them easier, and the left-out x columns cost >= 0), so each solve's dual bound is a bound; the best is
    returned.

    ``start``: also decode the last solution the solver returned into an S (``CoverBound.start``, ``cover_start``).
    """
    t0 = time.perf_counter()
    base = float(dag.cost.sum())
    lazy = (COVER_KEPT if kept is None else kept) and depth >= 1
    # (merged, the model is built up to MERGE_RAW_COLUMNS and ``max_columns`` applies to what is solved)
    raw_cap = max_columns if max_columns is None or not COVER_MERGE else max(max_columns, MERGE_RAW_COLUMNS)
    cm = _kept_model(dag, budget, depth, raw_cap, None) if lazy else \
        build_cover(dag, budget, depth=depth, max_columns=raw_cap, kept=False)
    model, cmap = _merged(cm)
    if cm is None or (max_columns is not None and model is not None and model.num_col > max_columns):
        _, G, _, over, _, _ = _pairs(dag, budget)
        if len(over) == 0:
            return CoverBound(base, "no stage over the budget", time.perf_counter() - t0, 0)
        return CoverBound(-math.inf, "not built (too large)", time.perf_counter() - t0, 0)
    if cm.infeasible or model is None:
        return CoverBound(math.inf, "a stage's fixed part exceeds the budget", time.perf_counter() - t0, 0)
    left = None if time_limit is None else time_limit - (time.perf_counter() - t0)
    if left is not None and left < 0.5:
        return CoverBound(-math.inf, "no time left", time.perf_counter() - t0, model.num_col)
    best, status, rounds = -math.inf, "no time left", 0
    select = None
    sol: tuple[CoverModel, np.ndarray] | None = None
    while True:
        res = mip.solve(model, integral=True, time_limit=left, threads=threads, gap=gap)
        rounds += 1
        if start and res.x is not None and len(res.x) == model.num_col:
            sol = (cm, np.asarray(res.x)[cmap])
        if res.status == "infeasible":  # no schedule fits at all (every schedule maps into the model)
            return CoverBound(math.inf, "infeasible", time.perf_counter() - t0, model.num_col)
        if math.isfinite(res.bound) and res.bound >= best:
            best, status = res.bound, res.status
        if not lazy or cm.kept_rows is None or res.status != "optimal" or res.x is None \
                or base + max(best, 0.0) * cm.cost_unit * (1 - SAFETY) >= enough:
            break
        viol = _kept_violated(cm, np.asarray(res.x)[cmap])
        if select is not None:
            viol &= ~select
        if not viol.any():
            break
        select = viol if select is None else select | viol
        nxt = _kept_model(dag, budget, depth, max_columns, select)
        left = None if time_limit is None else time_limit - (time.perf_counter() - t0)
        nmodel, ncmap = _merged(nxt)
        if nxt is None or nmodel is None or (left is not None and left < 0.5) \
                or (max_columns is not None and nmodel.num_col > max_columns):
            status = "time_limit" if nxt is not None else status
            break
        cm, model, cmap = nxt, nmodel, ncmap
    note = f"{rounds} rounds (kept rows)" if rounds > 1 else ""
    S0 = None if sol is None else cover_start(dag, *sol)
    if not math.isfinite(best):
        return CoverBound(-math.inf, status, time.perf_counter() - t0, model.num_col, note=note, start=S0)
    over_cost = max(best, 0.0) * cm.cost_unit * (1 - SAFETY)
    return CoverBound(base + over_cost, status, time.perf_counter() - t0, model.num_col, note=note, start=S0)


GAP_COVER_MAX_PAIRS = 2_000_000
"""Largest covering (pairs, the nonzeros of its rows) that ``gap_cover_bound`` builds: ResNet50 fine at 0.8 has 182k
(752 columns, 1144 rows; HiGHS proves its optimum in 1.5-3.5 s)."""
MIP_ABS_GAP = 1e-6
"""HiGHS' default ``mip_abs_gap`` (model units): it prunes a node whose LP bound is within max(this, the relative gap
times the incumbent) of the incumbent, and reports as its dual bound what is left, up to the incumbent itself. So
``gap_cover_bound`` takes at most the incumbent less that tolerance as proven. Measured (BENCHMARKS.md, branch
``bound19b``): ResNet50 fine at 0.9, cost unit 6.9e11 (the costliest column), HiGHS' dual bound its incumbent,
1,592,974,006 above the cost of computing each unit once, where a schedule within the budget recomputes 1,592,814,651
(its 0/1 point meets every row)."""


def gap_cover_bound(dag: DAG, budget: int, mip: SolverBackend, *, time_limit: float | None,
                    threads: int | None = None, gap: float = 1e-6, start: bool = False) -> CoverBound:
    """The covering of passes/bounds.py (``gap_rows``: one 0/1 column y_g per droppable retention gap, its cost with
    its chain, the tightened rows sum_g min(M_g, e_t) y_g >= e_t at each stage over the budget) solved as a MILP:
    its MIP dual bound, plus the cost of computing each unit once, is a lower bound on every schedule's cost. Why:
    every schedule within the budget maps to a 0/1 point (y_g = 1 where the gap is dropped at some stage, i.e. where
    no unit of {i} + tree(i) is kept across it; passes/bounds.py's module docstring, "Chains of equal parents" and
    "Parents read before i") that meets every row (the stage's bytes fit) and costs at most the schedule's
    recomputations (distinct for distinct gaps); the Lagrangian of ``gap_bound``'s loose and tight relaxations is
    at most this covering's LP optimum, the MILP's bound is at least it. Small where the model of ``cover_bound``
    is not (one column per gap, one row per stage over the budget: 752 x 1144 on ResNet50 fine at 0.8, against the
    per-stage columns' 182k). Measured (BENCHMARKS.md, branch ``bound19``): ResNet50 fine at 0.8 +0.04884% against
    the Lagrangian's +0.04832%, at 0.9 +0.02437% against +0.02377%; GPT-2 fine at 0.8 +0.62521% against +0.52915%
    without the shared parents (its LP optimum is the Lagrangian's value: the ascent had converged; what it lacked
    was integrality), +0.82176% with them (``gap_rows``' ``shared``: each x_p a column of cost
    ``Covering.shared_cost``, with y_g - x_p <= 0 for the droppable gaps of its roots); at 0.9 +0.03788% (the
    Lagrangian's nested relaxation +0.03752%).

    ``start``: also the S of the solver's last solution (``CoverBound.start``): each dropped gap's unit not resident
    from the gap's first stage to the stage after its last stage over the budget, s (at most its read b), and kept
    from there to b (the least R for it computes it again in stage s, as ``cover_start``; ``cover_schedule`` makes
    the schedule), its chain's smaller parents kept until s, a drop whose chain needs a parent as large past its
    last read left out (``_start_parents``: on ResNet50 fine at 0.8 and 0.9 the schedule then fits and costs the
    bound, where before it recomputed whole conv chains, +32%). Not within the budget in general (the recomputations' own memory and their parents' are not in
    the rows). On GPT-2 fine at 0.8 it fits and costs +0.832% where approx's stage search ends at +1.007% (recomputed
    at each read b instead, +0.874%: the residual stream's chain of dropped adds was computed again from its start
    for each read, 600 recomputations)."""
    from .bounds import _gaps, gap_rows
    t0 = time.perf_counter()
    base = float(dag.cost.sum())
    cov = gap_rows(dag, budget)
    if cov.infeasible:
        return CoverBound(math.inf, "a stage's fixed part exceeds the budget", time.perf_counter() - t0, 0)
    over = np.flatnonzero(cov.excess > 0)
    if len(over) == 0:
        return CoverBound(base, "no stage over the budget", time.perf_counter() - t0, 0)
    if len(cov.G) > GAP_COVER_MAX_PAIRS:
        return CoverBound(-math.inf, "not built (too large)", time.perf_counter() - t0, 0)
    cols = np.unique(cov.G)  # gaps with a stage over the budget (the others are never dropped)
    col_of = np.full(len(cov.unit), -1, dtype=np.int64)
    col_of[cols] = np.arange(len(cols))
    row_of = np.full(dag.n, -1, dtype=np.int64)
    row_of[over] = np.arange(len(over))
    # shared parents (``gap_rows``): a column x_p each, y_g - x_p <= 0 for the droppable gaps g of its roots
    sh_cost = cov.shared_cost if cov.shared_cost is not None else np.zeros(0)
    link_g, link_x = [], []
    for k, rs in enumerate(cov.shared_roots or []):
        gs = cols[np.isin(cov.unit[cols], rs)]
        link_g.append(col_of[gs])
        link_x.append(np.full(len(gs), len(cols) + k, dtype=np.int64))
    lg = np.concatenate(link_g) if link_g else np.zeros(0, np.int64)
    lx = np.concatenate(link_x) if link_x else np.zeros(0, np.int64)
    ncol, nlink = len(cols) + len(sh_cost), len(lg)
    col_cost = np.concatenate((cov.cost[cols], sh_cost))
    top = float(col_cost.max()) if ncol else 1.0
    cost_unit = top if top > 0 else 1.0
    # cover rows scaled by the excess (as ``build_cover``'s): sum_g min(M_g, e_t) / e_t y_g >= 1; then the links
    r = np.arange(nlink) + len(over)
    A = Csc.from_coo(np.concatenate((cov.a / cov.excess[cov.T], np.ones(nlink), -np.ones(nlink))),
                     np.concatenate((row_of[cov.T], r, r)), np.concatenate((col_of[cov.G], lg, lx)),
                     (len(over) + nlink, ncol))
    empty = np.zeros((0, 0), dtype=np.int64)
    model = CheckmateModel(dag=dag, scale=MemoryScale(1.0, False, math.inf), cost_unit=cost_unit, r=empty, s=empty,
                           free=empty, p=empty, col_cost=col_cost / cost_unit, col_lower=np.zeros(ncol),
                           col_upper=np.ones(ncol), integral=np.ones(ncol, dtype=bool), A=A,
                           row_lower=np.r_[np.ones(len(over)), np.full(nlink, -np.inf)],
                           row_upper=np.r_[np.full(len(over), np.inf), np.zeros(nlink)])
    left = None if time_limit is None else time_limit - (time.perf_counter() - t0)
    if left is not None and left < 0.5:
        return CoverBound(-math.inf, "no time left", time.perf_counter() - t0, ncol)
    res = mip.solve(model, integral=True, time_limit=left, threads=threads, gap=gap)
    if res.status == "infeasible":  # not even every gap dropped fits (every schedule maps into the model)
        return CoverBound(math.inf, "infeasible", time.perf_counter() - t0, ncol)
    S0 = None
    if start and res.x is not None and len(res.x) == ncol:
        from ..ir.schedule import checkpoint_all
        unit, lo, hi = _gaps(dag)
        free = ~dag.no_recompute[unit]
        lo, hi = lo[free], hi[free]
        S0 = checkpoint_all(dag).S.copy()
        xs = np.asarray(res.x)[len(cols):] > 0.5  # shared parents paid: their roots' drops recompute them
        paid = {int(i) for k, rs in enumerate(cov.shared_roots or []) if xs[k] for i in rs.tolist()}
        for g in cols[np.asarray(res.x)[:len(cols)] > 0.5].tolist():
            # not resident at the start of stages lo..s, s the stage after the gap's last stage over the budget (at
            # most its read b): computed again in stage s and kept from there to b
            last_over = over[np.searchsorted(over, hi[g], side="right") - 1]
            s_g = min(int(last_over) + 1, int(hi[g]) + 1)
            need = [] if int(cov.unit[g]) in paid else _start_parents(dag, int(cov.unit[g]), s_g)
            if need is None:
                continue
            S0[lo[g]:s_g + 1, cov.unit[g]] = False
            for p in need:
                S0[int(dag.last_use[p]) + 1:s_g + 1, p] = True
    if not math.isfinite(res.bound):
        return CoverBound(-math.inf, res.status, time.perf_counter() - t0, ncol, start=S0)
    low = res.bound
    if res.x is not None and math.isfinite(res.objective):  # nodes pruned within the solver's gap tolerances
        low = min(low, res.objective - max(MIP_ABS_GAP, gap * abs(res.objective)))
    return CoverBound(base + max(low, 0.0) * cost_unit * (1 - SAFETY), res.status, time.perf_counter() - t0,
                      ncol, start=S0)


def _start_parents(dag: DAG, i: int, s: int) -> list[int] | None:
    """For ``gap_cover_bound``'s start, a drop of unit i recomputed in stage s: the parents to keep from their last
    read to s, or None where the drop is left out (kept). i's chain is i and its single-child parents at least as
    large (as ``bounds._chains``' single-child trees), recomputed with it by the least R; a parent of the chain
    outside it and past its last read before s is kept until s where smaller than i (the drop still frees bytes:
    ResNet50 fine's ``layer4.2/relu/grad/1``, 103 MB, needs its 26 MB relu mask); where one is as large as i, the
    drop is left out (a BatchNorm statistic of 256 bytes needs x - mean: the least R recomputed whole conv chains,
    +32% on ResNet50 fine at 0.9 against the covering's +0.024%). Not called for the roots of a shared parent that the
    covering pays for (``gap_rows``' ``shared``): the least R recomputes it (``_attention`` of tests/test_gapcover.py)."""
    chain, k = [i], 0
    while k < len(chain):
        for p in dag.preds[chain[k]].tolist():
            if len(dag.succs[p]) == 1 and dag.mem[p] >= dag.mem[i] and p not in chain:
                chain.append(p)
        k += 1
    need = sorted({p for v in chain for p in dag.preds[v].tolist() if p not in chain and dag.last_use[p] < s})
    if any(dag.mem[p] >= dag.mem[i] for p in need):
        return None
    return need


def cover_start(dag: DAG, cm: CoverModel, x: np.ndarray) -> np.ndarray:
    """An S (checkpoint-all's, bool[n, n]) read off a solution ``x`` of ``cm``'s columns: for each retention gap
    (unit i, stages lo..hi, read again at b = hi + 1) whose first pair is 1, with its last pair at 1 (the drop) at
    the over stage o_d, i is not kept over lo .. s, s = min(o_d + 1, b), so the least R for S recomputes it at s
    (the model: its last computation in the gap comes after o_d), and kept from there to b. Parents are left to
    that least R (the model's res/comp columns say the same where its parent rows bind). Not within the budget
    in general (the model is a relaxation): a start for the stage search (passes/evict.py ``evict_search``)."""
    from ..ir.schedule import checkpoint_all
    from .bounds import _gaps
    S = checkpoint_all(dag).S.copy()
    npair = cm.pairs
    if npair == 0 or cm.col_gap is None or cm.col_stage is None or cm.over_at is None:
        return S
    unit, lo, hi = _gaps(dag)
    unit, lo, hi = unit[~dag.no_recompute[unit]], lo[~dag.no_recompute[unit]], hi[~dag.no_recompute[unit]]
    G, K = cm.col_gap[:npair], cm.col_stage[:npair]
    on = np.asarray(x[:npair]) > 0.5
    isfirst = np.r_[True, G[1:] != G[:-1]]
    first_on = np.zeros(len(unit), dtype=bool)
    first_on[G[isfirst & on]] = True
    drop = np.full(len(unit), -1, dtype=np.int64)
    np.maximum.at(drop, G[on], K[on])  # z is a prefix along a gap: its last pair at 1
    for g in np.flatnonzero(first_on):
        i, b = int(unit[g]), int(hi[g]) + 1
        s = min(int(cm.over_at[drop[g]]) + 1, b)
        S[int(lo[g]):s + 1, i] = False
    return S


def cover_schedule(dag: DAG, budget: int, S: np.ndarray | None) -> Schedule | None:
    """The schedule of the least R for ``S`` (``cover_start``'s), cleaned and checked, where it fits ``budget``;
    None where it does not. Measured (results/pub17b/decode_train.txt): on all 13 feasible training graphs of
    Moccasin's set at 0.8 and 0.9 it fits and costs exactly the covering MILP's bound (so it is optimal and proven
    at once: ResNet50 0.8 +0.279%, where the stage search stops at +0.313% and CP-SAT took 7-8 s of CPU to reach
    it); on Moccasin's random layered n=100 it is 17-20% over the budget (its parents' residency, which the model
    relaxes, is what the schedule lacks there)."""
    from ..ir.schedule import check, solve_rs
    from .milp_model import clean
    if S is None:
        return None
    R, S2 = solve_rs(dag, S)
    R, S2 = clean(dag, R, S2)
    sched = Schedule(R, S2, strategy="covering MILP's solution")
    if check(dag, R, S2) or sched.peak(dag) > budget:
        return None
    return sched


def _merged(cm: CoverModel | None) -> tuple[CheckmateModel | None, np.ndarray]:
    """``cm``'s model to solve and the map from ``cm``'s columns to its columns: merged (``merge_chains``) where
    COVER_MERGE is on, else ``cm``'s own."""
    if cm is None or cm.infeasible:
        return None, np.zeros(0, np.int64)
    if COVER_MERGE and cm.pairs:
        return merge_chains(cm)
    return cm.model, np.arange(cm.model.num_col)


def _kept_model(dag: DAG, budget: int, depth: int, max_columns: int | None,
                select: np.ndarray | None) -> CoverModel | None:
    """The covering MILP with the kept-parent rows that ``select`` selects (None: none of them)."""
    return build_cover(dag, budget, depth=depth, max_columns=max_columns, kept=True,
                       kept_select=np.zeros(0, bool) if select is None else select)


WINDOW_COLUMNS = 12_000
"""Most columns of one window's model in ``window_bound`` (a window is one over stage at least). Measured on
Moccasin's random layered n=500 at 0.8 (depth 1, 1 thread, loaded 2 cores): 4k columns, 22 windows, +0.916% in 54 s;
12k, 6 windows, +0.985% in 79 s (the Lagrangian of the covering alone +0.857%, with parents +1.639%)."""
MAX_WINDOWED_COLUMNS = 40_000
"""Largest whole model (columns) that ``window_bound`` cuts into windows. Measured (depth 1, windows of 12k
columns, 90 s, 1 thread, loaded 2 cores; BENCHMARKS.md, branch ``bound14``): above the Lagrangian (passes/bounds.py)
only on own random layered n=500 at 0.9 (34k columns: +0.207% against +0.165%); below it on Moccasin's n=500 (24k
and 57k columns) and own n=500 at 0.8 (82k); nothing proven in 90 s at 1000 units (149k-233k columns, 19-29
windows), where its time is better left to the schedule."""
WINDOW_MIN_SECONDS = 0.5
"""A window's MILP is not started with less time than this for it (it then adds nothing to the bound)."""


@dataclass
class Windows:
    """The covering MILP (``build_cover``) cut into windows of consecutive over stages (``window_bound``)."""

    cover: CoverModel
    bounds: np.ndarray
    """int64[windows + 1]: window w holds the over stages bounds[w] .. bounds[w+1] - 1."""
    col_win: np.ndarray
    """int64[num_col]: each column's window."""
    row_win: np.ndarray
    """int64[num_row]: each row's window, -1 for the rows that reach into two windows (left out: a relaxation)."""


def cut_windows(cm: CoverModel, window_columns: int = WINDOW_COLUMNS) -> Windows:
    """Consecutive over stages into windows of at most ``window_columns`` columns each (one stage at least), each cut
    placed, among the stages that keep the window above half that size, where the fewest gaps cross it."""
    assert cm.col_stage is not None and cm.col_gap is not None
    nov = cm.over
    stage = np.minimum(cm.col_stage, nov - 1)  # the computations after the last over stage go with it
    per = np.bincount(stage, minlength=nov)
    # gaps crossing from stage k to k + 1 (pairs of one gap sit at consecutive stages)
    pair = np.flatnonzero(cm.col_gap >= 0)
    g, k = cm.col_gap[pair], cm.col_stage[pair]
    o = np.lexsort((k, g))
    same = g[o][1:] == g[o][:-1]
    cross = np.bincount(k[o][:-1][same], minlength=nov).astype(np.float64)
    cuts = [0]
    start = 0
    while start < nov:
        csum = np.cumsum(per[start:])
        end = int(np.searchsorted(csum, window_columns, side="right"))  # stages start .. start+end-1 fit
        if end >= nov - start:
            break
        end = max(end, 1)
        lo = max(1, int(np.searchsorted(csum, window_columns / 2, side="right")))
        lo = min(lo, end)
        # cut after stage start + j - 1 for j in lo..end: the crossing between it and the next
        j = lo + int(np.argmin(cross[start + lo - 1:start + end]))
        start += j
        cuts.append(start)
    cuts.append(nov)
    bounds = np.asarray(cuts, dtype=np.int64)
    col_win = np.searchsorted(bounds, stage, side="right") - 1
    A = cm.model.A.tocoo()
    nrow = cm.model.num_row
    wmin = np.full(nrow, np.iinfo(np.int64).max, dtype=np.int64)
    wmax = np.full(nrow, -1, dtype=np.int64)
    np.minimum.at(wmin, A.row, col_win[A.col])
    np.maximum.at(wmax, A.row, col_win[A.col])
    row_win = np.where(wmin == wmax, wmax, -1)
    return Windows(cm, bounds, col_win, row_win)


def window_costs(win: Windows, share: np.ndarray | None = None) -> np.ndarray:
    """Column costs of the windows' models: each gap's cost split over the windows it reaches, in proportion to
    ``share`` (one weight per pair column; None: 1 each, i.e. to its over stages in each window), each window's
    part on the gap's first pair in that window; the res and comp columns keep their costs."""
    cm = win.cover
    assert cm.col_gap is not None and cm.gap_cost is not None
    cost = cm.model.col_cost.copy()
    pair = np.flatnonzero(cm.col_gap >= 0)
    g, w = cm.col_gap[pair], win.col_win[pair]
    wt = np.ones(len(pair)) if share is None else np.maximum(np.asarray(share, np.float64)[pair], 0.0)
    tot = np.bincount(g, weights=wt, minlength=len(cm.gap_cost))
    if (tot[g] <= 0).any():  # a gap with no weight anywhere: split by its over stages
        wt = np.where(tot[g] > 0, wt, 1.0)
        tot = np.bincount(g, weights=wt, minlength=len(cm.gap_cost))
    # weight of each (gap, window), put on the gap's first pair in the window
    key = g * (len(win.bounds)) + w
    uk, first, inv = np.unique(key, return_index=True, return_inverse=True)
    part = np.bincount(inv, weights=wt)
    gg = g[first]
    frac = np.divide(part, tot[gg], out=np.zeros_like(part), where=tot[gg] > 0)
    cost[pair] = 0.0
    cost[pair[first]] = cm.gap_cost[gg] * frac
    return cost


def window_model(win: Windows, w: int, cost: np.ndarray) -> tuple[CheckmateModel, np.ndarray]:
    """Window ``w``'s model (its columns, the rows within it, ``cost``) and its columns' indices in the whole."""
    m = win.cover.model
    cols = np.flatnonzero(win.col_win == w)
    rows = np.flatnonzero(win.row_win == w)
    A = m.A[:, cols].tocsr()[rows].tocsc()
    empty = np.zeros((0, 0), dtype=np.int64)
    sub = CheckmateModel(dag=m.dag, scale=m.scale, cost_unit=m.cost_unit, r=empty, s=empty, free=empty, p=empty,
                         col_cost=cost[cols], col_lower=m.col_lower[cols], col_upper=m.col_upper[cols],
                         integral=m.integral[cols], A=A, row_lower=m.row_lower[rows], row_upper=m.row_upper[rows])
    return sub, cols


def window_bound(dag: DAG, budget: int, mip: SolverBackend, *, time_limit: float | None, threads: int | None = None,
                 depth: int = COVER_DEPTH, window_columns: int = WINDOW_COLUMNS, rounds: int = 1,
                 gap: float = 1e-6, lam: np.ndarray | None = None, split_by_multipliers: bool = True,
                 max_columns: int | None = MAX_WINDOWED_COLUMNS) -> CoverBound:
    """A lower bound from the covering MILP (``build_cover``) cut into windows of consecutive over stages, each
    window's MILP solved on its own (``mip``, within an equal share of the time left): the whole model at any size,
    each solve small; not built above ``max_columns`` (-inf).

    Why it is a bound. Take any schedule within the budget and its point x of the covering model (module
    docstring: feasible, objective at most the schedule's overhead). Cut the over stages into disjoint windows of
    consecutive stages; each column belongs to the window of its stage (a pair and res[p, k]: o_k's; comp[p, k]:
    the interval (o_{k-1}, o_k], with those after the last over stage in the last window). Window W's model keeps
    its columns and only the rows whose columns all lie in W (every cover row does: one stage; a prefix, parent,
    chain or nesting row that reaches into another window is left out, which only enlarges the feasible set).
    Its objective: each comp column its cost C_p, each res column 0, and for each gap g the cost w[g, W] >= 0 on
    g's first pair f(g, W) in W, with sum over W of w[g, W] <= C_g (``window_costs``: C_g split in proportion to
    g's pairs in each window). x restricted to W satisfies every row W keeps, so costs at least W's optimum. And
    x's whole objective sum_g C_g x[g, first] + sum C_p x[comp] is at least sum_W (sum_g w[g, W] x[f(g, W)] +
    sum over W's comp columns C_p x[comp]), because the comp columns are split among the windows, the weights
    w[g, .] sum to at most C_g, and x[f(g, W)] <= x[g, first] (the prefix rows: z decreases along a gap). So
    the sum over the windows of their optima, and of any dual bounds the solver proves for them (0 for a window
    with none: its costs are non-negative), is at most the model's optimum, hence at most every schedule's
    overhead. ``lam`` (per stage, e.g. passes/bounds.py's ``GapBound.lam``): split each gap's cost in proportion
    to the multiplier-priced bytes it frees in each window (then the windows' Lagrangian values at ``lam`` add up
    to the covering's at ``lam``); None: the covering Lagrangian's (passes/bounds.py without parents, 500
    iterations, under a second at 1000 units) where ``split_by_multipliers``, else in proportion to its over stages
    in each window. ``rounds`` > 1 re-splits the gap costs (a subgradient step of this Lagrangian decomposition toward
    the windows whose optimum pays for the gap) and solves again; each round's sum is a bound, the best is kept.
    """
    t0 = time.perf_counter()
    base = float(dag.cost.sum())

    def left() -> float:
        return math.inf if time_limit is None else time_limit - (time.perf_counter() - t0)

    cm = build_cover(dag, budget, depth=depth, max_columns=max_columns, kept=False)
    if cm is None:
        if max_columns is not None and len(_pairs(dag, budget)[3]):
            return CoverBound(-math.inf, "not built (too large)", time.perf_counter() - t0, 0)
        return CoverBound(base, "no stage over the budget", time.perf_counter() - t0, 0)
    if cm.infeasible:
        return CoverBound(math.inf, "a stage's fixed part exceeds the budget", time.perf_counter() - t0, 0)
    win = cut_windows(cm, window_columns)
    nwin = len(win.bounds) - 1
    assert cm.col_gap is not None
    pair = cm.col_gap >= 0
    share = np.where(pair, 1.0, 0.0)
    if lam is None and split_by_multipliers:
        from .bounds import gap_bound
        lam = gap_bound(dag, budget, iterations=500, strong=False, nested=False,
                        deadline=time.perf_counter() + max(min(left() / 10, 10.0), 0.0)).lam
    if lam is not None:
        assert cm.over_at is not None and cm.pair_bytes is not None and cm.col_stage is not None
        priced = np.asarray(lam, np.float64)[cm.over_at[cm.col_stage[:cm.pairs]]] * cm.pair_bytes
        if priced.sum() > 0:
            share[:cm.pairs] = priced
    best, status, note = -math.inf, "no time left", ""
    solved_rounds = 0
    for rnd in range(max(rounds, 1)):
        cost = window_costs(win, share)
        total, done, x_all = 0.0, 0, np.zeros(cm.model.num_col)
        have_x = True
        for w in range(nwin):
            secs = left() / max(nwin - w, 1) if rnd == rounds - 1 else left() / max((rounds - rnd) * nwin - w, 1)
            if secs < WINDOW_MIN_SECONDS:
                have_x = False
                continue
            sub, cols = window_model(win, w, cost)
            res = mip.solve(sub, integral=True, time_limit=None if math.isinf(secs) else secs, threads=threads,
                            gap=gap)
            if res.status == "infeasible":  # no schedule fits at all (every schedule maps into each window)
                return CoverBound(math.inf, "infeasible", time.perf_counter() - t0, cm.model.num_col,
                                  note=f"window {w} of {nwin}")
            if math.isfinite(res.bound):
                total += max(res.bound, 0.0)
            done += res.status == "optimal"
            if res.x is None:
                have_x = False
            else:
                x_all[cols] = res.x
        if done or total > 0:
            solved_rounds += 1
        if total > best:
            best = total
            status = "optimal" if done == nwin else "time_limit"
            note = f"{nwin} windows, {done} solved, round {rnd + 1}"
        if rnd + 1 >= rounds or not have_x or left() < nwin * WINDOW_MIN_SECONDS:
            break
        share = _resplit(win, share, x_all, cost)
    if not math.isfinite(best):
        return CoverBound(-math.inf, status, time.perf_counter() - t0, cm.model.num_col, note=note)
    return CoverBound(base + best * cm.cost_unit * (1 - SAFETY), status, time.perf_counter() - t0,
                      cm.model.num_col, note=note)


def _resplit(win: Windows, share: np.ndarray, x: np.ndarray, cost: np.ndarray) -> np.ndarray:
    """The gap costs' split moved toward the windows whose solution pays for the gap (x = 1 on its first pair
    there) and away from those that do not: a projected subgradient step (weights stay >= 0, any sum)."""
    cm = win.cover
    assert cm.col_gap is not None and cm.gap_cost is not None
    pair = np.flatnonzero(cost > 0)
    pair = pair[cm.col_gap[pair] >= 0]
    g = cm.col_gap[pair]
    y = np.round(x[pair])
    # per gap: mean y over its windows; shift weight toward y = 1
    cnt = np.bincount(g, minlength=len(cm.gap_cost))
    mean = np.bincount(g, weights=y, minlength=len(cm.gap_cost)) / np.maximum(cnt, 1)
    d = y - mean[g]
    out = np.zeros_like(share)
    # the weight of (gap, window) now: its cost share; step half of it
    frac = cost[pair] / np.maximum(cm.gap_cost[g], 1e-300)
    out[pair] = np.maximum(frac * (1 + d), 0.0)
    return out
