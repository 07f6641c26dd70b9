"""Large-neighbourhood search on windows of stages: eq. (9) solved exactly on a few consecutive stages of a
schedule, every other stage kept (graphs whose whole MILP, or LP, is too large to build).

The window. For stages a..b-1 of a correct schedule (R0, S0) within budget, the MILP of eq. (9)
(passes/milp_model.py) is built with R and S free only on those stages; R[a-1], S[a-1] and S[b] are
columns fixed to the schedule's values, and S[a] is bounded above by S0[a]; no other stage has columns.
Then every stage outside the window is the schedule's: stage a-1's memory can only fall (a value not kept
into stage a may be freed after its last read in a-1, never held longer), stage b and later see the same
S[b], and the rows that link the window to them (eq. 1c into a and out of b; FREE of stage b-1, which
reads S[b]) are in the model. Rows that hold no free column (those of stages a-1 and b themselves) are
dropped. So every solution of the window model, with the other stages unchanged, is a correct schedule
within budget; the caller checks it again in exact bytes anyway, and keeps it only when it is cheaper.

The search. Windows are tried where the schedule recomputes most (stages ranked by recomputation cost,
a window around each), each MILP warm-started from the schedule (so HiGHS starts with an incumbent) and
stopped at ``window_seconds``. R is free only for the ``back`` units before the window and those the schedule
recomputes in it, so a window MILP of 12 stages has 2.5k-18k columns at random layered n = 1000 (the whole
model: 1.8M). Measured (BENCHMARKS.md, branch ``bound``): small gains (n = 500: +3.199% -> +3.134%); the large
overheads at n = 1000 come from decisions hundreds of stages apart, which no window sees.

Each window is solved on a sub-DAG of the units it can touch (``sub_window``), so its model is O(window), not
O(n^2); the sub-DAG's window model gives the whole graph's window optimum (tests/test_window.py). At ONNX-node
granularity the windows gain nothing on GPT-2 at 0.9 (33 windows of 12 or 60 stages from approx's schedule;
BENCHMARKS.md, branch ``sched12``): what such a schedule drops across the peak is decided by the pair (the
peak's stages, the far-away stage that recomputes it), which one window never spans with S[b] fixed.
"""
from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from ..ir.dag import DAG
from ..ir.schedule import check, stage_peaks
from .milp_model import (
    COST_EPS,
    CheckmateModel,
    _Cols,
    _Rows,
    _rows_dependencies,
    _rows_free,
    _rows_memory,
    _rows_memory_dense,
    allowed,
    clean,
    memory_scale,
    reach,
)
from .solver_api import SolverBackend

WINDOW_STAGES = 12
"""Stages per window (a window MILP's columns grow with it; 12 at n = 1000: 2.5k-18k columns with R free for
the ``back`` = 24 units before the window and those it recomputes; 26k-52k with R free for every unit)."""
WINDOW_SECONDS = 8.0
"""Most seconds of one window's MILP."""
WINDOW_MAX_UNITS = 5000
"""Largest graph the window search runs on. Each window is built on the units it can touch (``sub_window``:
41-231 units on GPT-2 fine for windows of 12-60 stages, 0.6-1.3 s a window with its MILP, 227 MiB peak for the
whole process); before, each window's model was built from n x n arrays (GPT-2 at 1730 units: 6.7 s and
390 MiB a window), and the search was skipped above 1000 units."""
MIN_WINDOW_LEFT = 5.0
"""Seconds that must be left to start a window (and 1.5 x what the last one took): building its model cannot be
stopped (random layered n = 1000 under load: a window started 2.4 s before approx's limit ended 3.4 s after it)."""
WINDOW_MISSES = 3
"""Consecutive windows without a gain after which the search stops (windows come most-recomputing first)."""
DENSE_WINDOW_NONZEROS = 3_000_000
"""Dense budget rows (HiGHS solves them better) while their nonzeros stay below this; recurrence rows above."""


@dataclass
class WindowResult:
    R: np.ndarray
    S: np.ndarray
    cost: float
    windows: int
    """Window MILPs solved."""
    improved: int
    """Windows that lowered the cost."""
    seconds: float
    skipped: str = ""
    """Why no window ran ('' when some did, or none was left)."""

    def note(self) -> str:
        """The report's line: windows solved and improved, seconds (or why none ran)."""
        if self.skipped:
            return f"skipped ({self.skipped})"
        return f"{self.windows} windows, {self.improved} improved, {self.seconds:.1f} s"


def window_applies(dag: DAG) -> bool:
    """Whether ``window_search`` runs on ``dag`` (at most WINDOW_MAX_UNITS units)."""
    return dag.n <= WINDOW_MAX_UNITS


def window_rows(dag: DAG, cols: _Cols, r: np.ndarray, s: np.ndarray, r_ok: np.ndarray, in_w: np.ndarray,
                s_one: np.ndarray, scale) -> tuple:  # noqa: ANN001 - scale: milp_model's MemoryScale
    """Eq. (9)'s FREE and P columns and its rows for a window model whose R and S columns (``r``, ``s``: column
    indices, -1 where absent) are in ``cols``: dependencies and FREE over all stages, memory only on the
    window's stages ``in_w`` (dense where small, the P recurrence otherwise). Returns (free, p, the dense budget
    rows or None, (A, lo, hi)). Shared by ``window_model`` and ``windowbound``."""
    n = dag.n
    stage = np.arange(n)[:, None]
    mem, work = dag.mem / scale.unit, dag.workspace / scale.unit
    E = dag.edges
    e0, e1 = (E[:, 0], E[:, 1]) if len(E) else (np.zeros(0, np.int64), np.zeros(0, np.int64))
    s_next_one = np.zeros((n, n), dtype=bool)
    s_next_one[:-1] = s_one[1:]
    used_by_t = np.zeros((n, n), dtype=bool)
    used_by_t[e1, e0] = True
    free_ok = r_ok[:, e1] & in_w & ~s_next_one[:, e0] & ~used_by_t[:, e0] & (e1[None, :] < stage)
    free = cols.add(free_ok, integral=False)
    r_w = np.where(in_w, r, -1)
    s_w = np.where(in_w, s, -1)
    pos = (r_w >= 0).sum(axis=1).astype(np.int64)
    dense = int((pos * ((s_w >= 0).sum(axis=1) + (pos + 1) // 2 + free_ok.sum(axis=1))).sum()) <= DENSE_WINDOW_NONZEROS
    p = cols.add((r_w >= 0) & (not dense), lo=0.0, hi=scale.budget, integral=False)
    rows = _Rows()
    _rows_dependencies(rows, dag, r, s)
    _rows_free(rows, dag, r, s, free, "tight", False)
    budget_rows = None
    if dense:
        budget_rows = _rows_memory_dense(rows, dag, r_w, s_w, free, mem, work, scale.budget, scale.unit)
    else:
        _rows_memory(rows, dag, r_w, s_w, free, p, mem, work, scale.unit)
    return free, p, budget_rows, rows.matrix(cols.n)


def window_model(dag: DAG, budget: int, R0: np.ndarray, S0: np.ndarray, a: int, b: int, *,
                 back: int = 24, cost_floor: float = COST_EPS, near: np.ndarray | None = None) -> CheckmateModel:
    """Eq. (9) with R and S free on stages a..b-1 only (module docstring); ``(R0, S0)`` clean and correct.
    ``near`` (bool[n]): the units R may be free for (default: the ``back`` units before the window, its own and
    those it recomputes now)."""
    n = dag.n
    a, b = max(a, 1), min(b, n)
    scale = memory_scale(dag, budget)
    cost_unit = float(dag.cost.max()) if n and dag.cost.max() > 0 else 1.0
    r_ok, s_ok, s_one = allowed(dag)
    stage = np.arange(n)[:, None]
    in_w = (stage >= a) & (stage < b)
    # units the window may change: the recent ones, those it recomputes now, and (S only) those it keeps
    if near is None:
        near = np.zeros(n, dtype=bool)
        near[max(0, a - back):b] = True
        near |= R0[a:b].any(axis=0)
    kept = near | S0[a:b + 1].any(axis=0)
    r_ok = (r_ok & in_w & near[None, :]) | (R0 & (stage == a - 1))
    s_ok = (s_ok & (in_w & kept[None, :] | (stage == b))) | (S0 & ((stage == a - 1) | (stage == b)))
    r_lo = np.where(in_w, np.eye(n), R0).astype(float)
    r_hi = np.where(in_w, 1.0, R0).astype(float)
    s_lo = np.where(in_w, s_one, S0).astype(float)
    s_hi = np.where(in_w, 1.0, S0).astype(float)
    s_hi[a] = S0[a]
    exact_cost = dag.cost / cost_unit
    unit_cost = np.where((exact_cost > 0) & (exact_cost < cost_floor), cost_floor, exact_cost)
    cols = _Cols()
    r = cols.add(r_ok, cost=unit_cost[None, :], lo=r_lo, hi=r_hi)
    s = cols.add(s_ok, lo=s_lo, hi=s_hi)
    free, p, budget_rows, (A, lo, hi) = window_rows(dag, cols, r, s, r_ok, in_w, s_one, scale)
    cat = np.concatenate
    col_lo, col_hi = cat(cols.lo), cat(cols.hi)
    # rows of stages a-1 and b hold only fixed columns: drop them (their stages are the schedule's)
    A = A.tocsr()
    free_cols = (col_hi > col_lo).astype(float)
    keep = np.flatnonzero((abs(A) @ free_cols) > 0)
    A, lo, hi = A[keep].tocsc(), lo[keep], hi[keep]
    budget_rows = None  # (only the least-budget LP reads them; row indices changed above)
    offset = -float((unit_cost * R0[a - 1]).sum() + unit_cost[a:b].sum())
    model = CheckmateModel(dag, scale, cost_unit, r, s, free, p, cat(cols.cost), col_lo, col_hi, cat(cols.int),
                           A, lo, hi, -1, budget_rows, offset, 0.0, cost_floor)
    return model


def window_start(model: CheckmateModel, R0: np.ndarray, S0: np.ndarray, a: int, b: int) -> np.ndarray:
    """The column vector of ``(R0, S0)`` in a window model (FREE and P of the window's stages)."""
    from ..ir.schedule import free_matrix, memory_profile
    dag = model.dag
    x = model.col_lower.copy()
    for idx, val in ((model.r, R0), (model.s, S0), (model.free, free_matrix(dag, R0, S0))):
        m = idx >= 0
        x[idx[m]] = np.asarray(val, dtype=float)[m]
    if (model.p >= 0).any():
        used = (memory_profile(dag, R0, S0) - dag.constant) / model.scale.unit
        m = model.p >= 0
        x[model.p[m]] = used[m]
    return x


def windows_by_recompute(dag: DAG, R: np.ndarray, width: int) -> list[int]:
    """Window starts, the stages that recompute most first (each window centred on such a stage)."""
    n = dag.n
    per_stage = (R & ~np.eye(n, dtype=bool)) @ dag.cost
    order = np.argsort(-per_stage, kind="stable")
    starts, seen = [], set()
    for t in order.tolist():
        if per_stage[t] <= 0:
            break
        a = int(min(max(1, t - width // 2), max(1, n - width)))
        if a not in seen:
            seen.add(a)
            starts.append(a)
    return starts


def window_search(dag: DAG, budget: int, R: np.ndarray, S: np.ndarray, mip: SolverBackend, *,
                  deadline: float | None, width: int = WINDOW_STAGES, window_seconds: float = WINDOW_SECONDS,
                  threads: int | None = None, rounds: int = 3, misses: int = WINDOW_MISSES) -> WindowResult:
    """Large-neighbourhood search from the correct schedule ``(R, S)`` within ``budget``: window MILPs
    (``window_model``) where it recomputes most, until ``deadline`` (``time.perf_counter()``), until ``misses``
    windows in a row gain nothing or until a round over every window improves nothing. Returns the cheapest
    schedule (``(R, S)`` when none is). Graphs above WINDOW_MAX_UNITS units are skipped (``skipped`` says so)."""
    t0 = time.perf_counter()
    R, S = clean(dag, R, S)
    cost = float(R.sum(axis=0) @ dag.cost)
    if not window_applies(dag):
        return WindowResult(R, S, cost, 0, 0, 0.0,
                            skipped=f"{dag.n} units > {WINDOW_MAX_UNITS}")
    solved = improved = missed = 0
    last = 0.0  # seconds the last window took (its model's build is not interruptible)
    for _ in range(rounds):
        gained = False
        for a in windows_by_recompute(dag, R, width):
            if missed >= misses:
                return WindowResult(R, S, cost, solved, improved, time.perf_counter() - t0)
            left = None if deadline is None else deadline - time.perf_counter()
            if left is not None and left < max(MIN_WINDOW_LEFT, 1.5 * last):
                return WindowResult(R, S, cost, solved, improved, time.perf_counter() - t0)
            w0 = time.perf_counter()
            b = min(a + width, dag.n)
            limit = window_seconds if left is None else min(window_seconds, left)
            out = sub_window_solve(dag, budget, R, S, a, b, mip, time_limit=limit, threads=threads)
            solved += 1
            missed += 1
            last = time.perf_counter() - w0
            if out is None:
                continue
            R1, S1 = out
            c1 = float(R1.sum(axis=0) @ dag.cost)
            if c1 < cost - 1e-9 * max(cost, 1.0) and not check(dag, R1, S1) \
                    and stage_peaks(dag, R1, S1).max() <= budget:
                R, S, cost = R1, S1, c1
                improved += 1
                gained = True
                missed = 0
        if not gained:
            break
    return WindowResult(R, S, cost, solved, improved, time.perf_counter() - t0)


@dataclass
class SubWindow:
    """A window's problem on the units it can touch only (``sub_window``): a DAG of those units, the schedule
    on it, and the window's stages in its numbering."""
    dag: DAG
    units: np.ndarray
    """int64[k]: the original unit of each sub-DAG unit (sorted, so the topological order is kept)."""
    R0: np.ndarray
    S0: np.ndarray
    a: int
    b: int
    near: np.ndarray
    """bool[k]: the units R may be free for (every parent of each in ``units``)."""


def sub_window(dag: DAG, R0: np.ndarray, S0: np.ndarray, a: int, b: int, *, back: int = 24) -> SubWindow | None:
    """Stages a..b-1 of the correct, clean schedule ``(R0, S0)`` as a problem on the units the window can touch,
    K = the ``back`` units before the window through unit b, those the window recomputes and those it keeps
    (S0[a..b]): every value resident in the window's stages, before or after a change, is one of them. Built in
    O(k^2 + edges) memory (k = |K|), not O(n^2): ``window_model`` on it is the window model of the whole graph.

    The sub-DAG: the edges among K; a unit of K with a user after b gets an edge to b instead (no stage of the
    window can compute such a user, so the edge only keeps the unit allowed in S through the window, as in the
    whole graph); a unit R may be free for needs every parent in K (``near``; in the whole model a parent with
    no column forces that R to 0). The bytes of the kept outputs of units before a outside K go into the
    constant, so every window stage holds the same fixed bytes as in the whole graph. Stages of the sub-DAG
    outside a-1..b carry a placeholder schedule (each unit computed once, nothing kept): ``window_model``
    gives them no columns. None where a unit that may not be recomputed, last read before b, reaches past b
    (the edge to b would force it resident through the window, which the whole model does not)."""
    n = dag.n
    a, b = max(a, 1), min(b, n - 1)
    lo_u = max(0, a - back)
    near = np.zeros(n, dtype=bool)
    near[lo_u:b] = True
    near |= R0[a:b].any(axis=0)
    K = near | S0[a:b + 1].any(axis=0) | R0[a - 1] | S0[a - 1]
    K[lo_u:b + 1] = True
    units = np.flatnonzero(K)
    k = len(units)
    loc = np.full(n, -1, dtype=np.int64)
    loc[units] = np.arange(k)
    E = dag.edges
    inner = E[K[E[:, 0]] & K[E[:, 1]]] if len(E) else E
    # a unit that reaches (through any path) b or a unit after it may be kept through the window in the whole
    # model (``allowed``: S[t, i] needs reach(i) >= t), and S0[b] may hold it: an edge to b keeps that so in the
    # sub-DAG (reach(i) == b through units outside K counts too: S0[b] may hold i to recompute one of them at b)
    later = np.flatnonzero(K & (reach(dag) >= b) & (np.arange(n) < b))
    edges = np.concatenate([loc[inner], np.stack([loc[later], np.full(len(later), loc[b])], axis=1)])
    edges = np.unique(edges[edges[:, 0] < edges[:, 1]], axis=0)  # (a unit at b itself has no edge to b)
    if (dag.no_recompute[later] & (dag.last_use[later] < b)).any():
        return None  # (the edge to b would force such a unit resident through the window: no window here)
    all_in = np.ones(n, dtype=bool)
    if len(E):
        np.logical_and.at(all_in, E[:, 1], K[E[:, 0]])
    sub_near = (near & all_in)[units]
    before = (~K) & (np.arange(n) < a)
    sub = DAG(tuple(dag.names[u] for u in units), dag.cost[units], dag.mem[units], edges,
              constant=int(dag.constant + dag.kept[before].sum()), workspace=dag.workspace[units],
              backward=dag.backward[units], no_recompute=dag.no_recompute[units], kept=dag.kept[units],
              kept_first=dag.kept_first[units])
    Rs = np.eye(k, dtype=bool)
    Ss = np.zeros((k, k), dtype=bool)
    for t in range(a - 1, b + 1):
        Rs[loc[t]] = R0[t, units]
        Ss[loc[t]] = S0[t, units]
    return SubWindow(sub, units, Rs, Ss, int(loc[a]), int(loc[b]), sub_near)


def sub_window_solve(dag: DAG, budget: int, R: np.ndarray, S: np.ndarray, a: int, b: int, mip: SolverBackend, *,
                     time_limit: float, threads: int | None, back: int = 24) -> tuple[np.ndarray, np.ndarray] | None:
    """The window a..b-1 of ``(R, S)`` solved on its sub-DAG (``sub_window``), warm-started from the schedule;
    the whole schedule with the window's stages replaced (cleaned, not yet checked), or None."""
    sw = sub_window(dag, R, S, a, b, back=back)
    if sw is None:
        return None
    model = window_model(sw.dag, budget, sw.R0, sw.S0, sw.a, sw.b, back=back, near=sw.near)
    start = window_start(model, sw.R0, sw.S0, sw.a, sw.b)
    res = mip.solve(model, integral=True, time_limit=time_limit, threads=threads, gap=1e-6, start=start)
    if res.x is None:
        return None
    Rw, Sw = model.decode(res.x)
    R1, S1 = R.copy(), S.copy()
    cols = sw.units
    b = min(b, dag.n - 1)
    for t in range(max(a, 1), b):
        lt = sw.a + (t - max(a, 1))
        R1[t] = False
        S1[t] = False
        R1[t, cols] = Rw[lt]
        S1[t, cols] = Sw[lt]
    return clean(dag, R1, S1)
