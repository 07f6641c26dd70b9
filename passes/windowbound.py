"""A lower bound from eq. (9) on consecutive windows of stages, each relaxed at its start, whose bounds add up.

What it proves. Cut the stages 0..n-1 into windows [a_k, b_k). The cost of a schedule is the sum over stages
of sum_i R[t, i] C_i, so it is the sum over windows of what the window's stages compute. For one window, take
eq. (9) (passes/milp_model.py, with its variable fixing and exact costs: no ``COST_EPS`` floor) and keep only
the rows of the stages a..b-1: their dependency rows, the rows that carry S from t to t+1 (S[t+1] <= S[t] +
R[t] for t in a..b-1, so S[b] is a column), their FREE rows and their memory rows. Every one of those rows has
all its columns in the window (stages a..b-1, and S[b]); the rows of stage a-1, among them S[a] <= S[a-1] +
R[a-1], are left out, so S[a] is free: the window may start with any values resident, as long as they fit its
memory rows. The restriction of any schedule (the MILP's optimum among them) to the window satisfies every
row kept, so the window's optimum (or any proven lower bound on it: HiGHS's dual bound of the LP, or of the
MILP at a time limit) is at most what that schedule computes in those stages, and the sum over windows is a
lower bound on the optimal cost. A window not solved contributes the cost of computing each of its units once
(R[t, t] = 1), which is also a bound, so the sum is valid whichever windows finish in time.

What it misses: a value that a window finds resident at its start costs it nothing, however much it cost
before the window (kept since it was computed, through stages over the budget, or recomputed); the retention-
gap bound (passes/bounds.py) sees exactly those. Windows are cut where the columns per window reach
``max_columns``.
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

import numpy as np

from ..ir.dag import DAG
from ..ir.schedule import checkpoint_all, stage_peaks
from .milp_model import (
    CheckmateModel,
    _Cols,
    allowed,
    memory_scale,
)
from .solver_api import SolverBackend
from .window import window_rows

MAX_WINDOW_COLUMNS = 40_000
"""Columns per window (R, S and FREE of its stages) at which a window is cut."""


@dataclass
class WindowBound:
    bound: float
    """Proven lower bound on the cost of every schedule within the budget (cost units)."""
    windows: int
    solved: int
    """Windows the solver returned a bound for (the others count each unit once)."""
    gained: int
    """Windows whose bound is above computing each of their units once."""
    seconds: float
    columns: int
    """Columns of the largest window built."""
    per_window: list[tuple[int, int, float, float]] = field(default_factory=list)
    """(a, b, the window's bound, its units computed once) per solved window."""


def stage_columns(dag: DAG) -> np.ndarray:
    """int64[n]: the columns eq. (9) has at each stage (R, S and FREE after variable fixing), for cutting."""
    r_ok, s_ok, _ = allowed(dag)
    E = dag.edges
    free = np.zeros(dag.n, dtype=np.int64)
    if len(E):
        t = np.arange(dag.n)[:, None]
        free = (r_ok[:, E[:, 1]] & (E[None, :, 1] < t)).sum(axis=1)
    return r_ok.sum(axis=1) + s_ok.sum(axis=1) + free


def cut_windows(dag: DAG, max_columns: int = MAX_WINDOW_COLUMNS, max_stages: int | None = None) -> list[tuple[int, int]]:
    """Consecutive windows [a, b) covering every stage, each with at most ``max_columns`` columns (at least one
    stage) and at most ``max_stages`` stages."""
    cols = stage_columns(dag)
    out, a, acc = [], 0, 0
    for t in range(dag.n):
        if t > a and (acc + cols[t] > max_columns or (max_stages is not None and t - a >= max_stages)):
            out.append((a, t))
            a, acc = t, 0
        acc += int(cols[t])
    out.append((a, dag.n))
    return out


def over_budget(dag: DAG, budget: int, windows: list[tuple[int, int]]) -> list[int]:
    """Per window, the bytes by which checkpoint-all's highest stage in it exceeds ``budget`` (0 when none
    does): the windows are solved in this order, tightest first (a window whose stages all fit with everything
    kept gains little from its start's freedom)."""
    ca = checkpoint_all(dag)
    peaks = stage_peaks(dag, ca.R, ca.S)
    return [max(int(peaks[a:b].max()) - int(budget), 0) for a, b in windows]


def relaxed_window_model(dag: DAG, budget: int, a: int, b: int) -> CheckmateModel:
    """Eq. (9) with the rows of stages a..b-1 only (module docstring); objective: what those stages compute,
    at exact costs. Columns of stage a-1 are built so that every row touching them can be found and dropped."""
    n = dag.n
    scale = memory_scale(dag, budget)
    cost_unit = float(dag.cost.max()) if n and dag.cost.max() > 0 else 1.0
    r_all, s_all, s_one = allowed(dag)
    stage = np.arange(n)[:, None]
    in_w = (stage >= a) & (stage < b)
    pre = stage == a - 1
    r_ok = r_all & (in_w | pre)
    s_ok = s_all & (in_w | pre | (stage == b))
    unit_cost = dag.cost / cost_unit
    cols = _Cols()
    r = cols.add(r_ok, cost=np.where(in_w, unit_cost[None, :], 0.0), lo=np.where(in_w, np.eye(n), 0.0))
    s = cols.add(s_ok, lo=np.where(in_w, s_one, False).astype(float))
    free, p, _, (A, lo, hi) = window_rows(dag, cols, r, s, r_ok, in_w, s_one, scale)
    # keep the rows of stages a..b-1: those with a column of those stages and none of stage a-1
    col_stage = np.full(cols.n, -1, dtype=np.int64)
    for idx in (r, s):
        m = idx >= 0
        col_stage[idx[m]] = np.broadcast_to(stage, idx.shape)[m]
    for idx in (free, p):
        m = idx >= 0
        col_stage[idx[m]] = np.broadcast_to(stage, idx.shape)[m]
    A = A.tocsr()
    window_col = ((col_stage >= a) & (col_stage < b)).astype(float)
    pre_col = (col_stage == a - 1).astype(float)
    absA = abs(A)
    keep = np.flatnonzero(((absA @ window_col) > 0) & ((absA @ pre_col) == 0))
    A, lo, hi = A[keep].tocsc(), lo[keep], hi[keep]
    cat = np.concatenate
    return CheckmateModel(dag, scale, cost_unit, r, s, free, p, cat(cols.cost), cat(cols.lo), cat(cols.hi),
                          cat(cols.int), A, lo, hi, -1, None, 0.0, 0.0, 0.0)


def window_lp_bound(dag: DAG, budget: int, solver: SolverBackend, *, deadline: float | None = None,
                    windows: list[tuple[int, int]] | None = None, integral: bool = False,
                    window_seconds: float | None = None, threads: int | None = 1) -> WindowBound:
    """The sum over ``windows`` (default ``cut_windows``) of each relaxed window's proven bound (its LP, or its
    MILP with ``integral``), solved by ``solver`` until ``deadline`` (``time.perf_counter()``); windows left
    unsolved count each of their units once. Module docstring: why the sum is a lower bound."""
    t0 = time.perf_counter()
    wins = cut_windows(dag) if windows is None else windows
    total, solved, gained, widest = 0.0, 0, 0, 0
    per: list[tuple[int, int, float, float]] = []
    over = over_budget(dag, budget, wins)
    wins = [w for _, w in sorted(zip(over, wins), key=lambda p: -p[0])]  # where the memory is tightest first
    for a, b in wins:
        once = float(dag.cost[a:b].sum())
        left = None if deadline is None else deadline - time.perf_counter()
        if left is not None and left < 0.5:
            total += once
            continue
        model = relaxed_window_model(dag, budget, a, b)
        widest = max(widest, model.num_col)
        limit = left if window_seconds is None else (window_seconds if left is None else min(left, window_seconds))
        res = solver.solve(model, integral=integral, time_limit=limit, threads=threads, gap=1e-6)
        if res.status == "infeasible":  # no schedule fits these stages: nothing fits at all
            return WindowBound(math.inf, len(wins), solved + 1, gained, time.perf_counter() - t0, widest, per)
        got = model.bound_of(res.bound) if res.bound is not None else -math.inf
        solved += math.isfinite(got)
        if math.isfinite(got) and got > once:
            total += got
            gained += 1
            per.append((a, b, got, once))
        else:
            total += once
    return WindowBound(total, len(wins), solved, gained, time.perf_counter() - t0, widest, per)
