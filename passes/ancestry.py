"""A lower bound that charges a dropped unit its dead ancestry: the retention-gap rows of passes/bounds.py with
every recomputation's inputs followed back through the values past their last read, solved as a Lagrangian
whose inner problem is a minimum-weight closure (one max-flow per multiplier vector).

Notation as in passes/bounds.py: stage t ends with unit t's computation; S[t+1] is what is kept across stage t,
all of it resident while unit t runs, beside ``fixed_t`` (unit t, its parents, workspace, the constant and the
kept outputs). A unit p is *dead at t* when t > last_p (its last frontier read, ``DAG.last_use``): it is then
neither unit t, nor a parent of t, nor in a retention gap. Over-budget stages (e_t > 0, ``gap_excess``) are the
rows.

What every schedule pays. Fix a schedule and define, for a droppable gap g of unit i (stages lo..hi, read at
b = hi + 1), each row t in it, and each unit p dead at a row t:

    d[g,t] = [i not in S[t+1]],  x[g] = [i computed in a stage of lo+1..b],  z[p] = [p computed in a stage > last_p],
    c[p,t] = [p computed in a stage > t],  a[p,t] = [p in S[t+1]] or c[p,t].

Then (each line a fact about every schedule, so each holds for the 0/1 values above):
(1) d[g,t] <= x[g]: i is read at b, so dropped across t it is computed again in t+1..b.
(2) d[g,t] <= a[p,t] for each parent p of i dead at t: that computation of i, at a stage s in t+1..b, needs p
    resident, so p is computed in t+1..s or was kept across every stage t..s-1, across t in particular.
(3) c[p,t] <= a[q,t] for each parent q of p dead at t: the same argument for p's computation after t.
(4) c[p,t] <= a[p,t], c[p,t] <= z[p] (t > last_p), c[p,t'] <= c[p,t] and a[p,t'] <= a[p,t] for rows t < t' of p
    (computed after t' is computed after t; kept across t' and not computed in t+1..t' is kept across t).
(5) Row t: sum_g M_i d[g,t] - sum_p M_p (a[p,t] - c[p,t]) >= e_t: unit t's memory is fixed_t + the gaps kept +
    every dead unit in S[t+1] <= budget, e_t = fixed_t + every gap's M - budget, and a - c = 1 only for a p
    in S[t+1]. (Dead units left out of the model only drop terms with a minus sign: still valid.)
(6) The recomputation cost is at least sum_g C_i x[g] + sum_p C_p z[p]: x[g]'s computation lies in lo+1..b, inside
    [i+1, last_i]; distinct gaps of i have disjoint ranges; z[p]'s lies after last_p: all distinct computations,
    none of them a unit's first (in its own stage). No-recompute units have z forced to 0 (infinite cost).

(5') Row t's drop coefficients are tightened to min(M_i, e_t + A_t), A_t the bytes of every dead unit modeled at
    row t (``AncestryModel.coef``): for 0/1 values with some drop of M_i > e_t + A_t the tightened row still holds,
    min(...) - (dead bytes <= A_t) >= e_t; otherwise it is (5) itself.

(7) Row t of the covering alone: sum_g min(M_i, e_t) d[g,t] >= e_t (passes/bounds.py's tight row: (5) without the
    dead units' bytes, which only add to the bytes to free, tightened as there), priced by its own mu_t >= 0. So
    the bound is never below the tight covering's Lagrangian at the same multipliers (lambda = 0, mu).

So the least of sum C x + sum C z over (1)-(7) is a lower bound on the optimal cost less the sum of costs. Each
of (1)-(4) has the form u <= v, so with the rows (5') priced by lambda >= 0 and (7) by mu >= 0 the Lagrangian

    L(lambda, mu) = sum_t (lambda_t + mu_t) e_t + min { sum C x + sum C z + sum_t lambda_t (sum_p M_p (a - c)
                    - sum_g a_gt d) - sum_t mu_t sum_g min(M_i, e_t) d }   (a_gt: (5')'s coefficients)

is a minimum-weight closure problem, solved exactly by one max-flow (weights rounded down, so the computed
minimum is at most the true one), and weak duality makes every L(lambda, mu) a proven bound. The sharing between
drops is exact here: one z[p] (or one a[p,t]) serves every drop at every row that needs p, where the strong
relaxation of passes/bounds.py splits p's charge 1/D_p over its D_p possible users; the price is that z[p] counts
at most one recomputation of p after its last read.

Measured (BENCHMARKS.md, branch ``bound22``): on random layered DAGs of 500-1000 units it is above the strong
relaxation already at the strong relaxation's own multipliers and 1.37-2.9x it after 30 s at 0.8 (8 of 8 graphs),
1.57-1.73x at 0.9 (2 of 4; equal on the others); no gain on ResNet50 and GPT-2 at ONNX-node granularity; on graphs of a few
dozen units it is often below the strong relaxation (its z[p] counts one recomputation; its rows are tightened
less), so callers report the higher of both. Checked against exhaustive and MILP optima on small random DAGs
(tests/test_ancestry.py).

Memory: one node per (dead unit, row it may be needed at) for a and for c, per (gap, row) for d, and one per
gap and unit; arcs per (edge, row) (``AncestryModel.nodes`` and ``arcs`` say how many).
"""
from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from ..ir.dag import DAG
from .bounds import gap_excess

SCALE_TOTAL = float(2 ** 52)
"""The weights are scaled so that their absolute sum is about this (int64 capacities, rounded down)."""
INF = 2 ** 61
STEP = 0.25
"""The ascent's first step (Polyak's, toward the schedule's cost); halved after HALVE_AFTER iterations without a
better value. From the strong relaxation's multipliers on random layered n=1000 seed 1 at 0.8, 40 iterations:
0.25 / 5 reached +1.080%, 0.5 / 5 +1.046%, 1.0 / 3 +1.065%; passes/bounds.py's 2.0 / 20 +0.816%."""
HALVE_AFTER = 5
MIN_STEP = 2.0 ** -10
"""The ascent stops once its step is below this share of STEP (ten halvings: 50 iterations without a better value)."""


def _ranges(start: np.ndarray, stop: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(owner, value): for each k, the values start[k]..stop[k]-1, concatenated, with k beside each."""
    cnt = np.maximum(stop - start, 0)
    owner = np.repeat(np.arange(len(start)), cnt)
    off = np.arange(int(cnt.sum())) - np.repeat(np.cumsum(cnt) - cnt, cnt)
    return owner, start[owner] + off


@dataclass
class AncestryBound:
    bound: float
    """Proven lower bound on the cost of every schedule within the budget (the sum of costs if nothing is over)."""
    iterations: int
    nodes: int
    arcs: int
    lam: np.ndarray | None = None


class AncestryModel:
    """The closure graph of the module docstring for one ``dag`` and ``budget``."""

    def __init__(self, dag: DAG, budget: int) -> None:
        n = dag.n
        self.dag, self.n = dag, n
        unit, lo, hi, excess, infeasible = gap_excess(dag, budget)
        self.infeasible = infeasible
        self.excess = excess
        over = np.flatnonzero(excess > 0)
        self.over = over
        K = len(over)
        first = np.searchsorted(over, lo)
        last = np.searchsorted(over, hi, side="right")
        keep = last > first
        unit, first, last = unit[keep], first[keep], last[keep]
        self.unit = unit
        ng = len(unit)
        last_use = dag.last_use
        # each unit's last row (index into over) at which it may be needed dead: the rows of its children's gaps,
        # and its children's own (reverse topological order; a child's index is larger)
        need = np.full(n, -1, dtype=np.int64)
        np.maximum.at(need, unit, last - 1)
        E = dag.edges if len(dag.edges) else np.zeros((0, 2), dtype=np.int64)
        # propagate need[child] to parent; parents in decreasing index (children done first)
        succ_need = need.copy()
        for u in range(n - 1, -1, -1):
            kids = dag.succs[u]
            if len(kids):
                succ_need[u] = max(succ_need[u], int(succ_need[kids].max()))
        r0 = np.searchsorted(over, last_use, side="right")  # first row at which p is dead
        r1 = np.maximum(succ_need + 1, r0)  # rows r0..r1-1
        cnt = r1 - r0
        off = np.concatenate(([0], np.cumsum(cnt)))[:-1]
        na = int(cnt.sum())
        # node ids: a: [0, na), c: [na, 2na), d: [2na, 2na+P), x: next ng, z: next n
        pa_owner, pa_row = _ranges(r0, r1)
        self.pa_owner, self.pa_row = pa_owner, pa_row
        gd_owner, gd_row = _ranges(first, last)
        P = len(gd_owner)
        self.gd_owner, self.gd_row = gd_owner, gd_row
        A0, C0, D0, X0, Z0 = 0, na, 2 * na, 2 * na + P, 2 * na + P + ng
        N = Z0 + n
        self.N, self.na, self.P, self.ng = N, na, P, ng
        self.A0, self.C0, self.D0, self.X0, self.Z0 = A0, C0, D0, X0, Z0

        def aid(p, r):
            return A0 + off[p] + (r - r0[p])

        tails, heads = [], []
        # (4) chains within each unit's rows, c <= a, c <= z
        idx = np.arange(na)
        inner = pa_row > r0[pa_owner]
        tails += [A0 + idx[inner], C0 + idx[inner]]
        heads += [A0 + idx[inner] - 1, C0 + idx[inner] - 1]
        tails += [C0 + idx, C0 + idx]
        heads += [A0 + idx, Z0 + pa_owner]
        # (3) c[p,r] <= a[q,r] for parents q dead at row r (q's rows cover r: r >= r0[q], r < r1[q] as need[q] >= need[p])
        if len(E):
            eq, ep = E[:, 0], E[:, 1]
            eo, er = _ranges(np.maximum(r0[ep], r0[eq]), r1[ep])
            tails.append(C0 + off[ep[eo]] + er - r0[ep[eo]])
            heads.append(aid(eq[eo], er))
        # (1) d <= x; (2) d[g,r] <= a[p,r] for parents p of unit(g) dead at row r
        didx = np.arange(P)
        tails.append(D0 + didx)
        heads.append(X0 + gd_owner)
        if len(E) and P:
            # edges (p -> unit(g)) for each gap g: group edges by child
            by_child = np.argsort(E[:, 1], kind="stable")
            ch = E[by_child, 1]
            cstart = np.searchsorted(ch, np.arange(n))
            cstop = np.searchsorted(ch, np.arange(n), side="right")
            u = unit[gd_owner]
            po, pe = _ranges(cstart[u], cstop[u])  # po: index into gd pairs, pe: position in by_child
            par = E[by_child[pe], 0]
            rr = gd_row[po]
            dead = rr >= r0[par]
            tails.append(D0 + po[dead])
            heads.append(aid(par[dead], rr[dead]))
        self.tails = np.concatenate(tails).astype(np.int64)
        self.heads = np.concatenate(heads).astype(np.int64)
        self.arcs = len(self.tails)
        self.mem = dag.mem.astype(np.float64)
        self.cost = dag.cost.astype(np.float64)
        self.K = K
        # each (gap, row)'s bytes in its row, min(M_i, e_t + A_t), A_t the most dead bytes the row can hold (every
        # modeled dead unit resident): a 0/1 drop never needs to free more than that
        dead_max = np.bincount(pa_row, weights=self.mem[pa_owner], minlength=K)
        self.coef = np.minimum(self.mem[unit[gd_owner]], excess[over][gd_row] + dead_max[gd_row])
        self.cover = np.minimum(self.mem[unit[gd_owner]], excess[over][gd_row])  # rows (7)

    def evaluate(self, lam: np.ndarray) -> tuple[float, np.ndarray]:
        """(L(lambda, mu), a subgradient): ``lam`` is float[2n], lambda (rows (5')) then mu (rows (7)), one per
        stage (only the rows' entries are read); the subgradient likewise."""
        from ortools.graph.python import max_flow

        over, excess = self.over, self.excess
        n = self.n
        lr, mr = lam[:n][over], lam[n:][over]  # per row
        w = np.zeros(self.N)
        wa = lr[self.pa_row] * self.mem[self.pa_owner]
        w[self.A0:self.C0] = wa
        w[self.C0:self.D0] = -wa
        wd = -lr[self.gd_row] * self.coef - mr[self.gd_row] * self.cover
        w[self.D0:self.X0] = wd
        w[self.X0:self.Z0] = self.cost[self.unit]
        w[self.Z0:] = self.cost
        nr = self.dag.no_recompute
        total = float(np.abs(w).sum()) + 1.0
        scale = SCALE_TOTAL / total
        ws = np.floor(w * scale).astype(np.int64)
        ws[self.Z0:][nr] = INF // 4
        N = self.N
        src, snk = N, N + 1
        neg = ws < 0
        pos = ws > 0
        smf = max_flow.SimpleMaxFlow()
        nodes = np.arange(N)
        smf.add_arcs_with_capacity(np.full(int(neg.sum()), src), nodes[neg], -ws[neg])
        smf.add_arcs_with_capacity(nodes[pos], np.full(int(pos.sum()), snk), ws[pos])
        smf.add_arcs_with_capacity(self.tails, self.heads, np.full(self.arcs, INF, dtype=np.int64))
        status = smf.solve(src, snk)
        if status != smf.OPTIMAL:
            raise RuntimeError(f"max-flow status {status}")
        closure_min = int(ws[neg].sum()) + int(smf.optimal_flow())
        val = float((lr + mr) @ excess[over]) + closure_min / scale
        chosen = np.zeros(N + 2, dtype=bool)
        chosen[np.asarray(smf.get_source_side_min_cut(), dtype=np.int64)] = True
        chosen = chosen[:N]
        # subgradient: e_t - freed_t + dead_t
        g = np.zeros(2 * n)
        ya = chosen[self.A0:self.C0].astype(np.float64) - chosen[self.C0:self.D0]
        dead = np.bincount(self.pa_row, weights=ya * self.mem[self.pa_owner], minlength=self.K)
        drop = chosen[self.D0:self.X0]
        freed = np.bincount(self.gd_row, weights=drop * self.coef, minlength=self.K)
        g[over] = excess[over] - freed + dead
        g[n + over] = excess[over] - np.bincount(self.gd_row, weights=drop * self.cover, minlength=self.K)
        return val, g


def ancestry_bound(dag: DAG, budget: int, *, lam: np.ndarray | None = None, upper: float | None = None,
                   iterations: int = 50, deadline: float | None = None, max_arcs: int | None = None) -> AncestryBound:
    """The ancestry lower bound (module docstring) of ``dag`` within ``budget``, its subgradient ascent started
    from ``lam`` (e.g. passes/bounds.py ``GapBound.lam``) for ``iterations`` or until ``deadline``. Above ``max_arcs``
    arcs nothing is solved (the sum of costs, 0 iterations)."""
    base = float(dag.cost.sum())
    model = AncestryModel(dag, budget)
    if max_arcs is not None and model.arcs > max_arcs:
        return AncestryBound(base, 0, model.N, model.arcs)
    if model.infeasible:
        return AncestryBound(float("inf"), 0, model.N, model.arcs)
    if model.K == 0:
        return AncestryBound(base, 0, model.N, model.arcs)
    rows = np.zeros(dag.n, dtype=bool)
    rows[model.over] = True
    if lam is None:
        lam = np.zeros(dag.n)
        lam[rows] = float(np.median(dag.cost / np.maximum(dag.mem, 1)))
    lam = np.where(rows, np.maximum(lam, 0.0), 0.0)
    rows = np.concatenate((rows, rows))
    zero = np.zeros(dag.n)
    # the start: the given multipliers on rows (5') or on rows (7), whichever gives more
    starts = [np.concatenate((lam, zero)), np.concatenate((zero, lam))]
    vals = [model.evaluate(x) for x in starts]
    k = int(np.argmax([v for v, _ in vals]))
    lam = starts[k]
    first: tuple[float, np.ndarray] | None = vals[k]
    target = None if upper is None else max(upper - base, 0.0)
    best, best_lam, step, since, done = -np.inf, lam, STEP, 0, 0
    for done in range(1, iterations + 1):  # noqa: B007 (the count is returned)
        if deadline is not None and time.perf_counter() >= deadline:
            break
        val, g = first if first is not None else model.evaluate(lam)
        first = None
        if val > best:
            best, best_lam, since = val, lam, 0
        else:
            since += 1
            if since >= HALVE_AFTER:
                step, since = step / 2, 0
                if step < STEP * MIN_STEP:  # stalled
                    break
        gg = float(g @ g)
        if gg == 0.0:
            break
        g[~rows] = 0.0
        goal = target if target is not None and target > best else abs(best) * 1.05 + 1.0
        lam = np.maximum(lam + step * max(goal - val, 1e-12 * base) / gg * g, 0.0)
    bound = base + max(best, 0.0)
    return AncestryBound(bound * (1 - 1e-12), done, model.N, model.arcs, best_lam)


ANCESTRY_MAX_ARCS = 2_500_000
"""Largest closure graph (arcs between its nodes) ``last_ancestry`` solves (the model is built, then given up above it).
Random layered n=1000 at 0.8: 0.7-1.6M arcs, 0.2-0.4M nodes, 196-237 MiB max RSS for the whole process, 1-4 s per
iteration under load; ResNet50 at ONNX-node granularity at 0.8: 3.8M arcs, 1.6M nodes, 633 MiB, 6 s per iteration and
no gain over the strong relaxation (BENCHMARKS.md, branch ``bound22``), so it is left out there."""
SOURCE = "ancestry"
"""The report's ``bound_source`` where this bound is the highest."""


def last_ancestry(dag: DAG, budget: int, sched, lam: np.ndarray | None, deadline: float | None, gap: float) -> str:
    """checkmate's last bound phase (backends/strategies.py ``_last_bound``): the ancestry bound's ascent from ``lam``
    (the retention-gap bound's multipliers) until ``deadline``, with the schedule's cost as Polyak's target; the
    report's bound raised where it gets higher (``bound_source`` "ancestry"). Returns a note for the report."""
    from .bounds import raise_bound
    rep = sched.report
    ab = ancestry_bound(dag, budget, lam=lam, upper=rep.cost, iterations=10**9, deadline=deadline,
                        max_arcs=ANCESTRY_MAX_ARCS)
    if ab.arcs > ANCESTRY_MAX_ARCS:
        return f"not run ({ab.arcs} arcs > {ANCESTRY_MAX_ARCS})"
    before = rep.bound if rep.bound is not None else -np.inf
    raise_bound(dag, sched, ab.bound, gap=gap, source=SOURCE, extra="ancestry_bound")
    return (f"{ab.iterations} iterations ({ab.nodes} nodes, {ab.arcs} arcs): "
            f"{'raised' if ab.bound > before else 'not raised'}")

