"""A lower bound on the cost of every schedule within a budget that needs no LP of eq. (9): the retention-gap
relaxation, solved by Lagrangian relaxation in O(n + m) per iteration (graphs whose LP does not fit).

What it proves. Unit i is read at the frontier stages of its users (and written at its own stage i). Take
two consecutive read stages a < b of i with b > a + 1: its *gap* is the stages a+1..b-1. In any
frontier-advancing schedule either i is kept across every stage of the gap (S[t+1, i] = 1 for t in
a+1..b-1), or it is not resident at the start of some stage t+1 <= b and must be computed again in a
stage of t+1..b to be read at b: a recomputation of cost C_i, distinct for distinct gaps (their stage
ranges do not overlap). When stage t computes unit t (its last computation), every unit kept across
stage t is resident, and so are t's parents, t's output and t's workspace, so

    constant + W_t + M_t + sum of M_p over parents p of t + sum of M_i over gaps of i kept across t <= budget.

Dropping the other constraints of eq. (9) (the recomputation's own inputs, memory elsewhere in a stage)
leaves a covering problem: choose gaps to drop, each costing C_i and freeing M_i at each stage it spans,
so that every stage fits; its optimum plus the sum of costs is a lower bound on the optimal cost. For any
multipliers lambda_t >= 0 the Lagrangian value

    L(lambda) = sum_t lambda_t e_t + sum_g min(0, C_g - sum_{t in g} lambda_t min(M_g, e_t))

(e_t: the bytes stage t exceeds the budget with every gap kept) is at most the covering optimum (weak
duality, y in [0, 1]), so every iterate of the subgradient ascent is a proven bound; the best is kept.
Each row's coefficients are tightened to min(M_g, e_t) first (valid for 0/1 drops: a dropped gap frees
at most the excess), so one fractional drop cannot stand for a whole one.
Units that may not be recomputed keep every gap. A stage whose fixed part alone exceeds the budget
proves that no schedule fits.
"""
from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from ..ir.dag import DAG

MAX_PAIRS = 4_000_000
"""Most (gap, stage) pairs of the tightened rows held in memory (about 100 MB); above it the loose rows only."""


@dataclass
class GapBound:
    bound: float
    """Proven lower bound on the cost of every schedule within the budget (cost units; inf: none fits)."""
    iterations: int
    gaps: int
    """Retention gaps that the relaxation may drop."""
    stages_over: int
    """Stages over the budget with every gap kept."""


def _gaps(dag: DAG) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(unit, first stage, last stage) of every retention gap, as int64 arrays."""
    units, lo, hi = [], [], []
    for i in range(dag.n):
        reads = np.concatenate(([i], dag.succs[i]))
        a, b = reads[:-1], reads[1:]
        keep = b > a + 1
        units.append(np.full(int(keep.sum()), i, dtype=np.int64))
        lo.append(a[keep] + 1)
        hi.append(b[keep] - 1)
    return np.concatenate(units), np.concatenate(lo).astype(np.int64), np.concatenate(hi).astype(np.int64)


def gap_bound(dag: DAG, budget: int, *, upper: float | None = None, iterations: int = 500,
              deadline: float | None = None) -> GapBound:
    """The retention-gap lower bound (module docstring) on the cost of every schedule of ``dag`` within
    ``budget`` bytes. ``upper``: the cost of a known schedule (guides the step size; not needed for
    validity). Stops after ``iterations`` or at ``deadline`` (a ``time.perf_counter()`` value)."""
    n = dag.n
    base = float(dag.cost.sum())
    fixed = dag.constant + dag.workspace + dag.mem
    if len(dag.edges):
        fixed = fixed + np.bincount(dag.edges[:, 1], weights=dag.mem[dag.edges[:, 0]].astype(np.float64),
                                    minlength=n).round().astype(np.int64)
    unit, lo, hi = _gaps(dag)
    load = np.zeros(n + 1, dtype=np.int64)  # bytes of every gap kept, per stage (difference array)
    np.add.at(load, lo, dag.mem[unit])
    np.add.at(load, hi + 1, -dag.mem[unit])
    forced = np.zeros(n + 1, dtype=np.int64)
    pinned = dag.no_recompute[unit]
    np.add.at(forced, lo[pinned], dag.mem[unit[pinned]])
    np.add.at(forced, hi[pinned] + 1, -dag.mem[unit[pinned]])
    if (fixed + np.cumsum(forced)[:n] > budget).any():
        return GapBound(float("inf"), 0, int((~pinned).sum()), n)
    excess = (fixed + np.cumsum(load)[:n] - budget).astype(np.float64)
    free = ~pinned
    unit, lo, hi = unit[free], lo[free], hi[free]
    c, m = dag.cost[unit], dag.mem[unit].astype(np.float64)
    rows = excess > 0
    if not rows.any():
        return GapBound(base, 0, len(unit), 0)
    # (gap, stage over budget) pairs; coefficient min(M_g, e_t): a 0/1 gap never frees more than the
    # excess at a stage, so the tightened rows hold for every schedule and cut off fractional drops
    over = np.flatnonzero(rows)
    first = np.searchsorted(over, lo)
    last = np.searchsorted(over, hi, side="right")
    cnt = last - first
    G = np.repeat(np.arange(len(unit)), cnt)
    T = over[np.repeat(first - np.cumsum(cnt) + cnt, cnt) + np.arange(len(G))]
    a = np.minimum(m[G], excess[T])
    target = None if upper is None else max(upper - base, 0.0)

    def loose(lam: np.ndarray) -> np.ndarray:  # sum over each gap's stages of lambda_t M_g
        cum = np.concatenate(([0.0], np.cumsum(lam)))
        return m * (cum[hi + 1] - cum[lo])

    def loose_freed(drop: np.ndarray) -> np.ndarray:
        freed = np.zeros(n + 1)
        np.add.at(freed, lo[drop], m[drop])
        np.add.at(freed, hi[drop] + 1, -m[drop])
        return np.cumsum(freed)[:n]

    def tight(lam: np.ndarray) -> np.ndarray:
        return np.bincount(G, weights=lam[T] * a, minlength=len(unit))

    def tight_freed(drop: np.ndarray) -> np.ndarray:
        return np.bincount(T, weights=a * drop[G], minlength=n)

    lam = np.zeros(n)
    lam[rows] = float(np.median(c / np.maximum(m, 1.0)))
    # the loose rows converge quickly; the tight Lagrangian is at least as high at the same multipliers
    best, lam, k1 = _ascent(excess, rows, c, loose, loose_freed, lam, iterations, target, base, deadline)
    tight_best, k2 = -np.inf, 0
    if len(G) <= MAX_PAIRS:
        tight_best, _, k2 = _ascent(excess, rows, c, tight, tight_freed, lam, max(iterations // 4, 1), target,
                                    base, deadline)
    best, k = max(best, tight_best), k1 + k2
    bound = base + max(best, 0.0)
    return GapBound(bound * (1 - 1e-12), k, len(unit), int(rows.sum()))


def raise_bound(dag: DAG, sched, bound: float, *, gap: float) -> None:
    """Raise the report of ``sched`` to ``bound`` (the retention-gap bound of its graph and budget) when that
    is higher than its own bound ("retention gaps" as ``bound_source``); status "optimal" when the gap on
    the overhead is then within ``gap``."""
    rep = sched.report
    if rep.cost is None:
        return
    rep.extras["gap_bound"] = bound
    if not np.isfinite(bound) or bound <= (rep.bound if rep.bound is not None else -np.inf):
        return
    rep.bound, rep.bound_source = min(bound, rep.cost), "retention gaps"
    rep.set_gap(float(dag.cost.sum()))
    if rep.gap is not None and rep.gap <= gap + 1e-12:
        rep.status = "optimal"


def _ascent(excess: np.ndarray, rows: np.ndarray, c: np.ndarray, price, freed, lam: np.ndarray,
            iterations: int, target: float | None, base: float,
            deadline: float | None) -> tuple[float, np.ndarray, int]:
    """Subgradient ascent on L(lambda) = lambda . e + sum_g min(0, c_g - price_g(lambda)): (the best value,
    its multipliers, iterations run). Every value is a proven bound on the covering optimum."""
    best, best_lam, step, since, done = -np.inf, lam.copy(), 2.0, 0, 0
    for done in range(1, iterations + 1):  # noqa: B007 (the count is returned)
        if deadline is not None and time.perf_counter() >= deadline:
            break
        p = price(lam)
        drop = c < p
        val = float(lam @ excess + (c - p)[drop].sum())
        if val > best:
            best, best_lam, since = val, lam.copy(), 0
        else:
            since += 1
            if since >= 20:
                step, since = step / 2, 0
        g = excess - freed(drop)
        g[~rows] = 0.0
        gg = float(g @ g)
        if gg == 0.0:
            break
        goal = target if target is not None and target > best else abs(best) * 1.05 + 1.0
        lam = np.maximum(lam + step * max(goal - val, 1e-12 * base) / gg * g, 0.0)
    return best, best_lam, done
