"""A forward eviction heuristic for large general DAGs: one pass over the stages, as a runtime with a memory
cap would run them (in the spirit of Dynamic Tensor Rematerialization, Kirisame et al., ICLR 2021), but
producing a frontier-advancing schedule (R, S) that remc's memory model evaluates exactly.

Stage t computes unit t and, recursively, every parent that is not resident (the least R row for S[t]).
By default everything computed or resident that has a later use is kept for stage t+1. While stage t's
peak exceeds the budget, the kept value with the lowest score is evicted (dropped from S[t+1], and from
S[t] when stage t does not read it): score = (its cost + the cost of its parents that are not kept) /
(its bytes x the stages until its next use), so cheap, large values needed late go first. An evicted value
is recomputed where it is next needed. Each eviction only lowers the peaks of stages t-1 and t (a value
freed earlier), and stages before t-1 do not depend on S[t+1], so the pass never revisits a stage.

Stage t is evaluated with ``StageState`` rows (passes/stagesearch.py), O(units + edges) each; the whole pass
is O(n (n + m)) plus the evictions. The result is handed to the stage search's ``improve``, which keeps
values resident instead of recomputing them where that fits.
"""
from __future__ import annotations

import heapq
import math
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from ..ir.dag import DAG
from ..ir.schedule import checkpoint_all
from .stagesearch import SPARSE_FROM, EdgeSystem, StageState

RETRIES = 30
"""Times ``evict_schedule`` runs the pass again, protecting more values, after a stage did not fit."""


def evict_schedule(dag: DAG, budget: int, *, deadline: float | None = None, weight: float = 1.0,
                   closure: int = 1, net: bool = False) -> StageState | None:
    """The eviction pass's schedule as a StageState (every stage within ``budget``), or None when the
    pass fails RETRIES + 1 times or ``deadline`` (a ``time.perf_counter()`` value) passes first.

    When a stage cannot fit even with every evictable value gone (it recomputes evicted values whose
    ancestors are gone too), the values it recomputes are protected from eviction and the pass runs again."""
    run = EvictRun(dag, budget, weight=weight, closure=closure, net=net)
    run.advance(deadline)
    return run.result


class EvictRun:
    """One eviction setting's passes (``evict_schedule``), resumable: ``advance(until)`` runs them until
    ``until`` and keeps where it stopped, so that settings can share time in slices while none fits (random
    layered n = 1000 seed 3 at 0.8: the first setting fails after 42 s, the third fits in 33 s; run one after
    the other, the first took the whole time). A slice ends between two steps (a stage, or an eviction)."""

    def __init__(self, dag: DAG, budget: int, *, weight: float = 1.0, closure: int = 1, net: bool = False) -> None:
        self.setting = (weight, closure, net)
        self.result: StageState | None = None
        """The schedule, once ``done`` (None: the passes failed)."""
        self.done = False
        self._st = StageState(dag, budget, np.zeros((dag.n, dag.n), dtype=bool), evaluate=False)
        self._steps = _passes(dag, budget, weight, closure, net, self._st)

    @property
    def name(self) -> str:
        w, c, net = self.setting
        return f"eviction (weight {w:g}, closure {c}, net {net})"

    @property
    def rows(self) -> int:
        """Rows evaluated so far (``StageState.rows``): the work done."""
        return self._st.rows

    def advance(self, until: float | None, rows: int | None = None) -> bool:
        """Run at least one step, then until ``until`` (a ``time.perf_counter()`` value; None: to the end), until
        ``rows`` more rows are evaluated (None: no count), or the end; True when done."""
        work = 0  # rows evaluated, at least one a step
        while not self.done:
            last = self._st.rows
            try:
                next(self._steps)
            except StopIteration as stop:
                self.result, self.done = stop.value, True
                break
            if until is not None and time.perf_counter() >= until:
                break
            work += max(self._st.rows - last, 1)
            if rows is not None and work >= rows:
                break
        return self.done


def _passes(dag: DAG, budget: int, weight: float, closure: int, net: bool, st: StageState | None = None):
    """Generator of the passes of ``evict_schedule``: yields between steps, returns the schedule or None.

    A pass that fails protects the evicted values its failing stage recomputes, and the next pass resumes at
    the first stage where one of them was a candidate for eviction (``_PassLog``): the pass is deterministic,
    and before that stage the protection changes no choice, so the schedule is the one a pass from stage 0
    would give (random layered n = 1000 seed 3 at 0.8: up to 9 passes of ~1000 stages each)."""
    protected = np.zeros(dag.n, dtype=bool)
    data = _PassData(dag)
    if st is None:
        st = StageState(dag, budget, np.zeros((dag.n, dag.n), dtype=bool), evaluate=False)
    log = _PassLog(dag)
    for _ in range(RETRIES + 1):
        st2, failed = yield from _pass(dag, budget, weight, closure, net, protected, data=data, st=st, log=log)
        if st2 is not None:
            return st2
        if failed is None:
            return None
        fresh = failed & ~protected
        if not fresh.any():
            return None
        protected |= fresh
        log.rewind(int(log.first_cand[fresh].min()), st)
    return None


class _PassLog:
    """What a pass needs to resume at an earlier stage e: the evictions (stage, unit, the stage that reads it
    next), S[e] and stage e-1's row as they stood when stage e began, and the first stage at which each unit
    was a candidate for eviction."""

    def __init__(self, dag: DAG) -> None:
        n = dag.n
        self.dag = dag
        self.start = 0
        """The stage the next pass starts at."""
        self.first_cand = np.full(n, n, dtype=np.int64)
        self.evictions: list[tuple[int, int, int]] = []
        self.S_row = np.zeros((n, n), dtype=bool)
        """S_row[t]: S[t] when stage t began."""
        self.prev_R = np.zeros((n, n), dtype=bool)
        """prev_R[t]: R[t - 1] when stage t began (with its cost and peak below)."""
        self.prev_cost = np.zeros(n)
        self.prev_peak = np.zeros(n, dtype=np.int64)

    def begin(self, t: int, st: StageState) -> None:
        """Stage t begins: keep what stage t may change of the stages before it."""
        self.S_row[t] = st.S[t]
        if t > 0:
            self.prev_R[t], self.prev_cost[t], self.prev_peak[t] = st.R[t - 1], st.cost[t - 1], st.peak[t - 1]

    def rewind(self, e: int, st: StageState) -> None:
        """Set ``st`` and this log back to the beginning of stage e."""
        e = max(0, min(e, self.dag.n - 1))
        self.start = e
        st.S[e] = self.S_row[e]
        st.S[e + 1:] = False  # as a pass from stage 0 finds them: stage t reads S[t + 1] before writing it
        if e > 0:
            st.R[e - 1], st.cost[e - 1], st.peak[e - 1] = self.prev_R[e], self.prev_cost[e], self.prev_peak[e]
        self.evictions = [ev for ev in self.evictions if ev[0] < e]
        self.first_cand[self.first_cand >= e] = self.dag.n

    def replay(self) -> tuple[np.ndarray, _Pending, np.ndarray]:
        """(need, pending, evicted) as they stood when stage ``start`` began (see ``_pass``)."""
        dag = self.dag
        need = dag.last_use.copy()
        pending = _Pending(dag.n)
        evicted = np.zeros(dag.n, dtype=bool)
        for _, v, at in self.evictions:
            evicted[v] = True
            for p in dag.preds[v].tolist():
                pending.add(p, at)
                need[p] = max(need[p], at)
        return need, pending, evicted


def _pass(dag: DAG, budget: int, weight: float, closure: int, net: bool, protected: np.ndarray, *,
          data: _PassData | None = None, st: StageState | None = None, log: _PassLog | None = None):
    """One pass, a generator that yields before each stage and each eviction: returns (the schedule, None),
    or (None, the evicted units recomputed at the stage that did not fit). With ``st`` and ``log`` (from
    ``_passes``), it starts at ``log.start`` on the state a previous pass left there."""
    n = dag.n
    if data is None:
        data = _PassData(dag)
    if st is None:
        st = StageState(dag, budget, np.zeros((n, n), dtype=bool), evaluate=False)
    if log is None:
        log = _PassLog(dag)
    S = st.S
    need, pending, evicted = log.replay()
    """need[u]: the last stage that reads u, counting stages that recompute an evicted child of u.
    pending: the stages that will recompute an evicted child of u (u is read there too)."""
    evictable = ~dag.no_recompute & ~protected
    for t in range(log.start, n):
        yield
        log.begin(t, st)
        if t + 1 < n:
            keep = S[t] | st._row_r(t)
            keep[t + 1:] = False
            keep &= need > t
            S[t + 1] = keep
        if not st._set_row(t):
            return None, _recomputed(st, t) & evicted
        while st.peak[t] > budget:
            yield
            v, at = _victim(dag, st, t, pending, evictable, weight, closure, need if net else None, data,
                            log.first_cand)
            if v < 0:
                return None, _recomputed(st, t) & evicted
            resident = bool(S[t, v])  # then stage t's R row stays as it is (below): only its peak moves
            S[t + 1, v] = False
            evicted[v] = True
            log.evictions.append((t, v, at))
            for p in dag.preds[v].tolist():  # v is recomputed at stage ``at``: its parents are read there
                pending.add(p, at)
                need[p] = max(need[p], at)
            if S[t, v] and not _read_in_stage(dag, st, t, v):
                S[t, v] = False
                if t > 0 and not st._set_row(t - 1):
                    return None, _recomputed(st, t - 1) & evicted
            if resident:  # v was not in R[t]'s start, and no unit of R[t] reads it where it is dropped from S[t]
                st.peak[t] = st._row_peak(t, st.R[t])
            elif not st._set_row(t):
                return None, _recomputed(st, t) & evicted
        if t > 0 and st.peak[t - 1] > budget:  # cannot happen: evictions only free earlier
            return None, None
    return st, None


def _recomputed(st: StageState, t: int) -> np.ndarray:
    """bool[n]: the units stage t computes again (its R row but t itself), as its row stands now."""
    row = st._row_r(t)
    row[t] = False
    return row


def _read_in_stage(dag: DAG, st: StageState, t: int, v: int) -> bool:
    users = dag.succs[v]
    return bool(len(users) and st.R[t, users].any())


def _victim(dag: DAG, st: StageState, t: int, pending: _Pending,
            evictable: np.ndarray, weight: float, closure: int, need: np.ndarray | None,
            data: _PassData, first_cand: np.ndarray) -> tuple[int, int]:
    """(the kept value, other than t and t's parents, of lowest score; the stage that will read it next);
    (-1, -1) when none is left. ``first_cand`` records, for each candidate, the first stage it was one at."""
    if t + 1 >= dag.n:
        return -1, -1
    cand = np.flatnonzero(st.S[t + 1] & evictable)
    cand = np.setdiff1d(cand[cand != t], dag.preds[t], assume_unique=True)
    if not len(cand):
        return -1, -1
    np.minimum.at(first_cand, cand, t)
    rc, size = data.recompute_costs(st.S[t + 1], cand, t)
    # evicting a value whose ancestors are gone recomputes long chains later (and needs their memory
    # then): take values whose recomputation runs at most ``closure`` units, else the fewest there are
    small = size <= max(closure, float(size.min()))
    cand, rc = cand[small], rc[small]
    nxt = data.next_use(cand, t, pending)
    gain = dag.mem[cand]
    if need is not None:  # evicting v keeps its parents until v's recomputation: the bytes that saves, net
        gain = gain - np.array([int(dag.mem[p[need[p] < at]].sum())
                                for p, at in zip((dag.preds[v] for v in cand.tolist()), nxt.tolist())])
    if (gain > 0).any():
        pos = gain > 0
        cand, nxt, gain, rc = cand[pos], nxt[pos], gain[pos], rc[pos]
    h = rc ** weight / (np.maximum(gain, 1) * (nxt - t))
    k = int(np.argmin(h))
    return int(cand[k]), int(nxt[k])


class _PassData:
    """Arrays of one graph that the eviction pass reuses at every stage: ``recompute_costs`` and ``next_use``
    for many units at once."""

    def __init__(self, dag: DAG) -> None:
        self.dag = dag
        n, E = dag.n, dag.edges
        self.parents = _parent_matrix(dag)
        # below SPARSE_FROM units the parents' loop (no SciPy import); above, one solve on arrays built once
        self._system = EdgeSystem(dag) if n >= SPARSE_FROM and len(E) and EdgeSystem.available() else None
        self._rhs = np.stack([dag.cost, np.ones(n)], axis=1)
        self._cap = 1e6 * float(dag.cost.sum()) + 1.0
        self._keys = E[:, 0] * (n + 1) + E[:, 1]  # sorted, as the edges are

    def recompute_costs(self, kept: np.ndarray, units: np.ndarray, t: int) -> tuple[np.ndarray, np.ndarray]:
        """``_recompute_costs(dag, kept, units, t, parents)``, the same values: the system of the whole graph
        (rows after t do not reach rows up to t) solved by ``EdgeSystem`` on arrays built once (0.05 ms a call
        at n = 1000, where building the matrix each call took 0.25 ms). Where this SciPy lacks the solve,
        ``_recompute_costs`` itself."""
        if self._system is None:
            return _recompute_costs(self.dag, kept, units, t, self.parents)
        x = np.nan_to_num(self._system.solve(kept, self._rhs)[units], nan=np.inf, posinf=np.inf)
        return np.minimum(x[:, 0], self._cap), np.minimum(x[:, 1], 1e9)

    def next_use(self, units: np.ndarray, t: int, pending: _Pending) -> np.ndarray:
        """int[k]: for each of ``units``, the first stage after t that reads it (a user's frontier stage or a
        pending recomputation; t + 1 when none), for all of them at once."""
        E, n = self.dag.edges, self.dag.n
        out = np.full(len(units), n + 1, dtype=np.int64)
        if len(E):
            idx = np.searchsorted(self._keys, units * (n + 1) + t, side="right")
            ok = idx < len(E)
            ok[ok] = E[idx[ok], 0] == units[ok]
            out[ok] = E[idx[ok], 1]
        out = np.minimum(out, pending.first_after(units, t))
        out[out > n] = t + 1
        return out


class _Pending:
    """For each unit, the stages that will recompute an evicted child of it (a min-heap each), and the least
    of them after the current stage, for many units at once (stages only advance within a pass)."""

    def __init__(self, n: int) -> None:
        self.n = n
        self._heaps: dict[int, list[int]] = {}
        self._first = np.full(n, n + 1, dtype=np.int64)
        """_first[u]: the least stage in u's heap (n + 1: none); may be at or before the current stage."""

    def add(self, u: int, at: int) -> None:
        heapq.heappush(self._heaps.setdefault(u, []), at)
        if at < self._first[u]:
            self._first[u] = at

    def first_after(self, units: np.ndarray, t: int) -> np.ndarray:
        """int[k]: the least pending stage after t of each of ``units`` (n + 1: none); drops those up to t."""
        for u in units[self._first[units] <= t].tolist():
            h = self._heaps[u]
            while h and h[0] <= t:
                heapq.heappop(h)
            self._first[u] = h[0] if h else self.n + 1
        return self._first[units]


class _Parents:
    """The parents of every unit: lists for the loop, the CSR matrix (float[n, n], 1 at (child, parent)) built on
    first use by the sparse solve."""

    def __init__(self, dag: DAG) -> None:
        self.dag = dag
        self.lists = [dag.preds[v].tolist() for v in range(dag.n)]
        self.cost = dag.cost.tolist()
        self._csr = None

    @property
    def csr(self):
        if self._csr is None:
            import scipy.sparse as sp

            E, n = self.dag.edges, self.dag.n
            self._csr = sp.csr_matrix((n, n)) if not len(E) else \
                sp.csr_matrix((np.ones(len(E)), (E[:, 1], E[:, 0])), shape=(n, n))
        return self._csr


def _parent_matrix(dag: DAG) -> _Parents:
    """The parents of every unit (``_Parents``), for ``_recompute_costs``."""
    return _Parents(dag)


def _recompute_costs(dag: DAG, kept: np.ndarray, units: np.ndarray, t: int,
                     parents: _Parents) -> tuple[np.ndarray, np.ndarray]:
    """(float[k], float[k]) for the k ``units`` (all <= t): each one's cost plus, recursively, that of each
    parent not in ``kept`` (shared ancestors counted once per path, capped): what recomputing it would cost,
    roughly; and how many units that recomputation runs, counted the same way. ``parents``: ``_parent_matrix``.

    The recurrence x = c + A x (A: the edges from parents outside ``kept``) is one triangular solve over the
    units up to t (a loop over the parents' lists below SPARSE_FROM, else SciPy's sparse solve); capping the
    result equals capping each unit's value as it is summed (a capped parent makes its child at least the
    cap). Random layered n = 1000 seed 3 at 0.8: 1.6 ms a call, where the
    recurrence unit by unit took 8.6 ms (74% of the eviction pass's time); the unit diagonal is implied."""
    cap = 1e6 * float(dag.cost.sum()) + 1.0
    if t < SPARSE_FROM:
        x = np.array(_forward_sums(parents, kept.tolist(), t))
    else:
        x = _sparse_sums(dag, kept, t, parents.csr)
    x = np.nan_to_num(x[units], nan=np.inf, posinf=np.inf)
    return np.minimum(x[:, 0], cap), np.minimum(x[:, 1], 1e9)


def _forward_sums(parents: _Parents, kept: list[bool], t: int) -> list[tuple[float, float]]:
    """x = c + A x and y = 1 + A y over the units up to t, one unit after the other (parents come first); a kept
    parent adds nothing, or NaN where its own sum overflowed (as 0 x inf does in the sparse solve)."""
    inf = math.inf
    xs: list[float] = []
    ys: list[float] = []
    cost, lists = parents.cost, parents.lists
    for i in range(t + 1):
        a, b = cost[i], 1.0
        for p in lists[i]:
            if kept[p]:
                if xs[p] == inf:
                    a = math.nan
                continue
            a += xs[p]
            b += ys[p]
        xs.append(a)
        ys.append(b)
    return list(zip(xs, ys))


def _sparse_sums(dag: DAG, kept: np.ndarray, t: int, parents) -> np.ndarray:
    """float[t + 1, 2]: the same sums by one sparse triangular solve (``parents``: the CSR matrix)."""
    import scipy.sparse as sp
    from scipy.sparse.linalg import spsolve_triangular

    ptr = parents.indptr[:t + 2]  # rows 0..t: their parents are all below t + 1
    cols = parents.indices[:ptr[-1]]
    M = sp.csr_matrix((-(parents.data[:ptr[-1]] * ~kept[cols]), cols, ptr), shape=(t + 1, t + 1))
    rhs = np.stack([dag.cost[:t + 1], np.ones(t + 1)], axis=1)
    with np.errstate(over="ignore", invalid="ignore"):
        return spsolve_triangular(M, rhs, lower=True, unit_diagonal=True)


VARIANTS = ((1.0, 1, False), (1.0, 10**9, False), (2.0, 1, False), (1.0, 2, False), (1.0, 1, True), (2.0, 1, True))
"""(weight, closure, net) settings ``evict_search`` runs, in this order: the pass is greedy and which setting
wins varies by graph (random layered n=1000 at 0.8: 5.6-9.5%, or no schedule; ResNet50 at 2277 units:
0.05-8%), and each takes about a second."""


STARTS_SHARE = 0.45
"""Share of ``evict_search``'s time after which, once a schedule fits, no further eviction setting starts and
the repair from checkpoint-all gets at most a sixth of the time left: the rest is the stage search's
``improve``, which lowers the cost far more there than another start (random layered n = 1000 at 0.8:
+29% from the eviction pass, +13.5% after 40 s of ``improve``)."""


STARTED_RUNS_WHOLE = True
"""Once a schedule fits, an eviction setting that started before STARTS_SHARE of the time runs to its end (at most
FIRST_PASS_ROWS rows a unit), cut only by the deadline, not at STARTS_SHARE: cut there, its rows were spent for
nothing (it is not resumed), and whether it ended before the cut depended on the load. ResNet50 at 2277 units from
the ap-sqrtn baseline (+30.5%): the first setting ends at +9.26%, the second at +0.028%, 0.3-0.5 s of CPU each;
`remc compile --strategy approx --time-limit 30` returned +0.04%, +0.96%, +9.26% or the baseline, run to run."""


STARTS_LEAST = 2
"""Once a schedule fits, the first this many eviction settings (``VARIANTS``) run whatever STARTS_SHARE, cut only by
the deadline: whether the second started depended on the load. ResNet50 at 2277 units from the ap-sqrtn baseline
(+30.5%, a captured 30 s compile's solve, approx alone with its 8 s at a load of 8-10): the first setting gives
+9.26%, the second +0.028%, 0.3-0.5 s of CPU each, and ``improve`` lowers neither in the time left; with the second
started only before STARTS_SHARE, 1 run of 3 ended at +0.028% (results/time21)."""


SLICE_ROWS = 600
"""Rows (``StageState.rows``, stage evaluations) each eviction setting (and the repair from checkpoint-all) runs in
turn while none has fitted; the least-memory starts get as many as all of those together. Counted, not timed
(0.5 s each before): which producer fits first, and so the schedule, no longer depends on the machine's load. A
slice ends between two steps (a stage or an eviction of the pass, a whole repair step); 600 rows are 0.3-0.5 s at
1000 units."""


FIRST_PASS_ROWS = 8
"""Rows per unit each eviction setting gets in the first round while nothing fits, and in all once another
producer's schedule fits: a whole pass is 3.1-3.6 rows a unit (three a stage, more where it evicts), and one
retry after a failed stage about as much again. So the first setting that fits in a pass or two is found before
the costlier producers (the repair from checkpoint-all, whose whole step evaluates hundreds of moves at 1000
units, and the least-memory starts) take their slices. Moccasin's random layered n = 500 and 1000 at 0.8 and 0.9:
every setting fits in one pass (3.1-3.6 rows a unit); own layered n = 1000 seed 21 at 0.8: one setting fits after
7.9 rows a unit, the others fail after 15-24."""
FIRST_ROUND_ROWS = 4
"""Rows per unit each eviction setting gets first, in turn, before any gets the rest of its FIRST_PASS_ROWS: one
pass of a setting that fits in one (3.1-3.6 rows a unit on Moccasin's random layered n = 500 and 1000 at 0.8 and 0.9,
so there the first setting still fits in its first turn), so that a setting that fails slowly does not hold back
the next one for two passes. Own layered n = 250 seed 12 at 0.8: the first setting fails after 7.4 rows a unit
(0.56-0.71 s of CPU: its evictions cost more than its rows), the second fits after 3.2 (0.04-0.05 s); with a whole
FIRST_PASS_ROWS first, checkmate's stage search under a load of 15 found nothing in its share at 10 s, where
main's 0.5 s wall slices found the second setting's schedule (+20.1%)."""
SETTINGS_GIVE_UP = True
"""While nothing fits (with a deadline), an eviction setting that has not fitted within its first round
(FIRST_PASS_ROWS rows a unit) gets no further turns, as once another producer's schedule fits: its retries rarely
fit, and they took the repair's and the least-memory starts' time. Each setting alone on 29 graph-ratio cases (Moccasin's
random layered n = 100-1000, own layered n = 120-1000, 0.8 and 0.9; ``results/any18/evset_*.log``): 125 fits, all
within 5.3 rows a unit but one (own n = 1000 seed 3 at 0.8, 14.7, where the least-memory start gives the search's first
schedule either way), 46 failures after 5.6-33.5. The search's first schedule, CPU to it (``results/any18/by_side.log``):
own layered n = 250 seed 11 at 0.9, 12.5 -> 9.0 s (the same schedule); n = 500 seed 21 at 0.8, 33.4 -> 28.0 s and
+1207.7% -> +441.4% (the repair's schedule now comes first)."""
AFTER_FIT_REPAIR_ROWS = 10
"""Rows per unit the repair from checkpoint-all may still evaluate once another producer's schedule fits (besides
its time share): counted, so that where it stops does not depend on the load. At 500-1000 units it rarely ends
in time (Moccasin's n = 500 at 0.9: not done after 94k rows, 65 s under load), and its time went from
``improve``."""


class _LeastMemoryRun:
    """The least-memory starts (``stagesearch.least_memory``, without its bisection), resumable like
    ``EvictRun``: span by span, longest first, each repaired until it fits or no move helps."""

    name = "least-memory start, repaired"

    def __init__(self, dag: DAG, budget: int) -> None:
        from .stagesearch import least_memory_spans
        self.dag, self.budget = dag, budget
        self._spans = iter(least_memory_spans(dag.n))
        self._st: StageState | None = None
        self.least = int(checkpoint_all(dag).peak(dag))
        """The least peak of any schedule seen (a budget at which one is known to exist)."""
        self.result: StageState | None = None
        self.done = False
        self._rows = 0  # rows of the spans given up

    @property
    def rows(self) -> int:
        return self._rows + (0 if self._st is None else self._st.rows)

    def advance(self, until: float | None, rows: int | None = None) -> bool:
        """Repair until ``until`` (None: to the end), until ``rows`` more rows are evaluated (whole repair steps;
        None: no count) or a span fits; True when done."""
        from . import stagesearch
        from .stagesearch import repair_steps, span_start
        stop_at = None if rows is None else self.rows + rows
        while not self.done:
            if self._st is None:
                span = next(self._spans, None)
                if span is None:
                    self.done = True
                    break
                self._st = StageState(self.dag, self.budget, span_start(self.dag, span))
                self.least = min(self.least, int(self._st.peak.max()))
            out = repair_steps(self._st, until, None if stop_at is None else stop_at - self._rows,
                               kicks=stagesearch.SPAN_KICKS)
            self.least = min(self.least, int(self._st.peak.max()))
            if out == "fit":
                self.result, self.done = self._st, True
            elif out == "stuck":
                self._rows += self._st.rows
                self._st = None  # no move helps; the next span
            else:
                break
        return self.done


class _RepairRun:
    """The stage search's repair from checkpoint-all, resumable like ``EvictRun``."""

    name = "stage search repair"

    def __init__(self, dag: DAG, budget: int) -> None:
        self.dag, self.budget = dag, budget
        self._st: StageState | None = None
        self._built = 0  # built at its first turn (n rows, not interruptible: 1.5-4 s at 1000
        # units under load, before: at the search's start, even where a setting fitted in the first round)
        self.result: StageState | None = None
        self.done = False

    @property
    def rows(self) -> int:
        return 0 if self._st is None else self._st.rows - self._built  # (the build not counted, as before)

    def advance(self, until: float | None, rows: int | None = None) -> bool:
        """Repair until ``until``, until ``rows`` more rows are evaluated (whole repair steps) or the end."""
        from .stagesearch import repair_steps
        if self._st is None:
            self._st = StageState(self.dag, self.budget, checkpoint_all(self.dag).S)
            self._built = self._st.rows
        out = repair_steps(self._st, until, None if rows is None else self._st.rows + rows)
        if out == "fit":
            self.result, self.done = self._st, True
        elif out == "stuck":
            self.done = True  # no move helps
        return self.done


class EvictSearch:
    """``evict_search``'s producers for one (dag, budget), resumable across calls: the eviction settings
    (``VARIANTS``), the repair from checkpoint-all and the least-memory starts, and where their turns stand while
    nothing fits. A caller that runs the search in several phases (approx's stage search, then again with the time
    left; checkmate's stage search from nothing, then approx's steps) passes the same object to each call, so that a
    later call goes on where the earlier one stopped instead of redoing its rows: own random layered n = 250 seed 11
    at 0.9 needs ~12 s of CPU to its first schedule, and each phase alone had less. Its turns are counted in rows,
    so the producers' sequence of steps, and the first schedule, are those of one search of the summed length."""

    def __init__(self, dag: DAG, budget: int) -> None:
        self.dag, self.budget = dag, budget
        self.runs = [EvictRun(dag, budget, weight=w, closure=c, net=net) for w, c, net in VARIANTS]
        self.rep = _RepairRun(dag, budget)
        self._least: _LeastMemoryRun | None = None  # (built at its first turn: checkpoint-all's peak, a row each)
        self._credit: dict[int, int] = {}  # rows each producer may still use: a whole step past its slice is a debt
        self._turns = self._feasibility()
        self._deadline: float | None = None
        self.found: StageState | None = None
        """The cheapest schedule within budget a producer found (None until one did)."""
        self.how = ""
        self.calls = 0
        """Calls of ``evict_search`` that used this search (the first builds nothing more: a test's count)."""

    @property
    def least(self) -> _LeastMemoryRun:
        if self._least is None:
            self._least = _LeastMemoryRun(self.dag, self.budget)
        return self._least

    @property
    def rows(self) -> int:
        """Rows the producers evaluated so far, in all calls."""
        return sum(r.rows for r in self.runs) + self.rep.rows + (0 if self._least is None else self._least.rows)

    def exhausted(self) -> bool:
        """Whether every producer ended without a schedule (a later call finds nothing more)."""
        return self.found is None and self._least is not None and self._least.done \
            and self.rep.done and all(r.done or self._given_up(r) for r in self.runs)

    def _turn(self, r: EvictRun | _RepairRun | _LeastMemoryRun, rows: int):
        """Generator: ``r`` advanced by ``rows`` more rows of credit (to its end without a deadline), yielding
        where the deadline cut it (it resumes there at the next call) and after it."""
        if self._deadline is None:
            r.advance(None)
            yield r
            return
        key = id(r)
        self._credit[key] = self._credit.get(key, 0) + rows
        while self._credit[key] > 0 and not r.done:
            before = r.rows
            r.advance(self._deadline, self._credit[key])
            self._credit[key] -= r.rows - before
            if r.done or self._credit[key] <= 0 or r.rows == before \
                    and time.perf_counter() < self._deadline:
                break
            yield None  # cut by the deadline: the rest of its credit at the next call
        yield r

    def _given_up(self, r: EvictRun | _RepairRun | _LeastMemoryRun) -> bool:
        """Whether ``r`` is an eviction setting that has not fitted within FIRST_PASS_ROWS rows a unit, given up while
        nothing fits (SETTINGS_GIVE_UP; not without a deadline, where each producer runs to its end)."""
        return SETTINGS_GIVE_UP and self._deadline is not None and isinstance(r, EvictRun) and not r.done \
            and r.rows >= FIRST_PASS_ROWS * self.dag.n

    def _feasibility(self):
        """Generator of the turns while nothing fits: each eviction setting's first turn (FIRST_ROUND_ROWS), then
        rounds of every producer left (the rest of a whole pass and a retry of each setting in the first round,
        FIRST_PASS_ROWS in all; SLICE_ROWS after, the settings that have not fitted by then given up:
        SETTINGS_GIVE_UP) and the least-memory starts (as many as all of those together).
        Yields after each step of a turn; a producer that ended is yielded as it is (the caller takes its result)."""
        n = self.dag.n
        for run in self.runs:
            yield from self._turn(run, FIRST_ROUND_ROWS * n)
        first = True
        others: list[EvictRun | _RepairRun] = [*self.runs, self.rep]
        while not (self.least.done and all(r.done or self._given_up(r) for r in others)):
            active = [r for r in others if not r.done and (first or not self._given_up(r))]
            for r in active:
                yield from self._turn(r, (FIRST_PASS_ROWS - FIRST_ROUND_ROWS) * n
                                      if first and isinstance(r, EvictRun) else SLICE_ROWS)
            first = False
            if not self.least.done:
                yield from self._turn(self.least, SLICE_ROWS * max(len(active), 1))

    def feasible(self, deadline: float | None, take: Callable[[Any], None]) -> None:
        """Producers' turns until one finds a schedule, all end, or ``deadline``; ``take`` hears each producer
        that ended (its ``result`` a schedule or None)."""
        self._deadline = deadline
        while self.found is None:
            if deadline is not None and time.perf_counter() >= deadline:
                break
            r: Any = next(self._turns, False)
            if r is False:
                break
            if r is not None and r.done:
                take(r)


def evict_search(dag: DAG, budget: int, *, deadline: float | None = None, improve_share: float = 1.0,
                 start: np.ndarray | None = None, info: dict | None = None,
                 on_best: Callable[[float], None] | None = None,
                 search: EvictSearch | None = None,
                 enough: float = -math.inf) -> tuple[np.ndarray, np.ndarray, int, str] | None:
    """(R, S, evaluations, how) of the cheapest schedule within ``budget`` of the eviction pass over
    ``VARIANTS``, of the stage search's repair from checkpoint-all and of ``start`` (an S within budget, e.g.
    a warm start), improved by the stage search's ``improve`` until ``deadline``. None when none finds one in
    time.

    Feasibility first: while nothing fits, every setting and the repair run in turn, SLICE_ROWS each, and
    the least-memory starts (``stagesearch.least_memory``'s spans: values kept only shortly before their reads,
    repaired) as long as all of them together (each resumed where it stopped), until one fits or the
    deadline; so a setting that fails slowly (random layered n = 1000 seed 3 at 0.8: 42-78 s) does not hold
    back one that fits, and a schedule is found wherever one of them finds it in the time. Once a schedule
    fits, the settings left run one after the other, none started after STARTS_SHARE of the time, and the
    repair gets at most a third of the time left (a sixth after STARTS_SHARE): the rest is ``improve``'s.
    ``info`` (a dict), when given, receives ``least_peak``: the least peak of any schedule the least-memory
    starts saw (None when they did not run), and ``first_fit_seconds``: the seconds from the start to the first
    schedule within budget, where a producer found it (absent where ``start`` fitted or none did).
    ``on_best``, when given, hears the cost of each cheaper schedule as it is found and the cost after ``improve``
    (for a live display: a 1000-unit search runs for minutes). ``search`` (an ``EvictSearch`` of this dag and
    budget), when given, holds the producers: this call resumes them where an earlier call left them (their turns,
    their rows), and starts from the cheapest schedule one of them found there; without it, a search of its own.
    ``enough``: a schedule that costs at most this ends the search (a caller's proven bound within its gap target:
    checkmate's ``_approx_alone``); the settings left, the repair and ``improve`` are not run once one does."""
    from .stagesearch import improve
    best, how, st0 = None, "", None
    if start is not None:
        st0 = StageState(dag, budget, start)
        if st0.peak.max() <= budget:
            best, how = st0, "the given schedule"
    t0 = time.perf_counter()
    starts_end = None if deadline is None else t0 + STARTS_SHARE * (deadline - t0)
    if search is None or search.dag is not dag or search.budget != budget:
        search = EvictSearch(dag, budget)
    search.calls += 1
    runs, rep = search.runs, search.rep

    def take(r) -> None:
        nonlocal best, how
        if r.result is not None and (best is None or r.result.total_cost() < best.total_cost()):
            if best is None and info is not None:
                info["first_fit_seconds"] = time.perf_counter() - t0
            best, how = r.result, r.name
            if search.found is None or best.total_cost() < search.found.total_cost():
                search.found, search.how = best, how
            if on_best is not None:
                on_best(float(best.total_cost()))

    if best is None and search.found is not None:  # an earlier call's producer found it
        best, how = search.found, search.how
        if on_best is not None:
            on_best(float(best.total_cost()))
    if best is None:  # nothing fits yet: every producer in turn, a slice each (to its end without a deadline),
        search.feasible(deadline, take)  # each resumed where an earlier call with this search stopped
        if info is not None:
            info["least_peak"] = search.least.least
    # something fits: the settings left, one after the other, until STARTS_SHARE of the time, each to at most
    # FIRST_PASS_ROWS rows a unit in all (counted: a setting still failing there is given up)
    for k, r in enumerate(runs):
        if best is not None and best.total_cost() <= enough:
            break
        if r.done or (deadline is not None and r.rows >= FIRST_PASS_ROWS * dag.n):
            continue
        now = time.perf_counter()
        if best is None or (deadline is not None and now >= deadline):
            break
        if starts_end is not None and now >= starts_end and k >= STARTS_LEAST:
            break  # the rest is improve's (random layered n = 1000 at 0.8: the variants took all 70 s)
        # (a setting started runs to its end, within its rows, cut only by the deadline: one cut at STARTS_SHARE
        # would have spent its rows for nothing, STARTED_RUNS_WHOLE)
        until = None if deadline is None or starts_end is None else \
            deadline if STARTED_RUNS_WHOLE else min(deadline, starts_end)
        if r.advance(until, None if deadline is None else FIRST_PASS_ROWS * dag.n - r.rows):
            take(r)
    # the repair from checkpoint-all too, within a third of the time left: the eviction pass is greedy and
    # sometimes far off (random layered n=500 at 0.9: +226%, where the repair gives +14%)
    if best is not None and not rep.done and best.total_cost() > enough:
        left = None if deadline is None else deadline - time.perf_counter()
        until = None if left is None else time.perf_counter() + left / 3
        if until is not None and starts_end is not None and left is not None:
            until = min(until, max(starts_end, time.perf_counter() + left / 6))
        if left is None or left > 0:
            if rep.advance(until, None if deadline is None else AFTER_FIT_REPAIR_ROWS * dag.n):
                take(rep)
    if best is None:
        return None
    if best.total_cost() <= enough or deadline is not None and time.perf_counter() >= deadline:  # (no search left: no rebuild, n rows, 1.5-4 s at
        return best.R.copy(), best.S.copy(), best.evals, how   # 1000 units under load, past the deadline)
    if best is not st0:  # (the given start, untouched since it was built, is fresh: not built again, 0.5-1 s at 2277 units)
        best = StageState(dag, budget, best.S)  # fresh rows for the search
    if info is not None:  # (improve's start: checkmate's _deep_improve may go on from it with whole repairs)
        info["improve_start"] = best.S.copy()
    # the moves that fit as they are first (a few rows each), then those that need a repair: from own layered
    # n = 1000 seed 21 at 0.8 (+502%), 60 s of that sweep reached +320%, 60 s of improve with repairs +446%
    improve(best, deadline, repairs=False, enough=enough)
    improve(best, deadline, enough=enough)
    if on_best is not None:
        on_best(float(best.total_cost()))
    return best.R.copy(), best.S.copy(), best.evals, how
