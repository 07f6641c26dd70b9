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

Parents (the strong relaxation, ``_strong_ascent``). The covering above lets a dropped gap free its bytes
over the whole gap as if the recomputation cost nothing but C_i. A recomputation of i at stage s (a+2 <= s
<= b) frees i only before s, and needs every parent p of i resident at s. A parent past its last frontier
read (last_p < s) is there only if it was kept from last_p + 1 to s (bytes M_p on those stages, which no
gap counts) or computed again after last_p (cost C_p, which no gap of p pays: p's gaps end by last_p).
One such retention or recomputation serves at most D_p drops (the droppable gaps of p's children that end
after last_p), so each drop is charged 1/D_p of it. So each gap chooses a recomputation stage (one per over-
budget stage it spans, the earliest s with the same freed stages) and, per parent, the cheaper of the two,
priced by the multipliers; the coefficients are tightened to min(M_g, e_t + A_t), A_t the most bytes the
retentions can add at t. Every iterate is a proven bound (weak duality), as above; the best of both
relaxations is reported. Measured against the MILP's optimum on random layered DAGs of 24-40 units (no
case above it) and at scale in BENCHMARKS.md (1.5-2.4x the covering bound on random layered DAGs, 1.4-1.8x
on ResNet50 and GPT-2 at ONNX-node granularity).

Chains of equal parents (``_chains``; the loose, tight and strong relaxations). A parent p of unit i whose only
child is i is past its last read for the whole of every gap of i (last_p = i < a + 1). If M_p >= M_i, keeping p
across a stage of i's gap instead of i frees nothing there; the relaxations above let such a drop free M_i and
charge p's recomputation at most once in D_p (strong) or not at all (loose, tight). ``_chains`` charges it in
full: tree(i) is grown from i through parents p whose only child is already in the tree, with M_p >= M_i and p
recomputable (ResNet50 at ONNX-node granularity: BatchNorm's Mul -> Add -> Relu, three units of one size). A gap of
i counts as dropped at stage t (z_t = 1) only where no unit of {i} + tree(i) is kept across t; its row keeps
M_i (1 - z_t), which holds for every schedule: where z_t = 0 some unit of the set, of at least M_i bytes, is
resident while unit t runs. Each such byte is counted once: a tree member c is past its last read at t (its
own gaps end before it, it is no parent of unit t, and it lies in the tree of i alone together with the
units below it on its single-child path, whose gaps end by their last read, before i's gaps start). Where
z_t = 1, reading i at b = hi + 1 needs i computed in a stage of t+1..b, which needs its tree parents resident
then, none of which is kept across t: each is computed in t+1..b, and so on up the tree: a cost of
C_i + sum of C_c over tree(i). These computations are distinct from every other one the bound charges: i's as
before; c's fall after t > i >= last_c, so after every stage a gap of c (ending by last_c) charges, in a range
t+1..b disjoint from i's other gaps', and after the gaps of the units between c and i, which end before i;
the strong relaxation's terms for a parent p of a gap's unit charge p's retention or recomputation up to that
gap's b: tree parents are left out of them (their recomputation is in the gap's cost), and a parent outside
tree(i) is in no tree but those of i's descendants', whose charges fall after i's last read. The nested
relaxation keeps the plain costs (its deeper terms may charge a tree member shared 1/D).

Parents read before i (``_chains(multi=True)``). A parent p with several children, all at stages <= i (last_p <= i),
is past its last read at every stage of every gap of i too, and the argument above holds for it unchanged: kept
across t, it holds M_p >= M_i bytes that no other term of row t counts (not ``fixed``: it is no parent of unit
t > last_p; not its own gaps: they end by last_p); absent at t, it is computed again in t+1..b (a tree child
computed there reads it). On ResNet50 at ONNX-node granularity: BatchNorm's normalized input (``bn1/7``, read
again by the backward pass) needs x - mean (``bn1/1``: read by the variance and by ``bn1/7``), which needs the
conv (read by the mean and by ``bn1/1``): all three as large, so dropping ``bn1/7`` pays for all three unless
one of them is kept instead, freeing nothing. What the single-child case had for free has to be ensured:
(1) a unit is counted, in bytes and in recomputations, for at most one gap at any stage. A root i's *span* is
the stages of its droppable gaps (those spanning a stage over budget; the others are never dropped, lambda = 0
off those stages) and their reads, lo..hi + 1: its rows and the recomputations it charges lie there. A
several-children parent joins tree(i) only where no tree holding it has a span that meets i's (roots take them
by decreasing M_i). Two trees holding one unit p otherwise are nested (one root in the other's tree, whose
span ends by its last read, before the other root's gaps start) or part at a unit with several children,
itself held by both, which the rule forbids where their spans meet. (2) The strong relaxation's parent terms
charge p's retention or recomputation over last_p+1..b for a gap of a child of p read at b; such a term is left
out wherever b reaches the first stage of a span of a tree holding p (then p's bytes or recomputation may be
that tree's); before it, the two ranges are disjoint (every span starts after last_p). For the single-child
trees this is the rule above (a root's own tree parents are left out of its gaps' terms; a member's single
child's gaps end by its last read, before the span). Leaving a term out only lowers a drop's charge. Checked
against exhaustive optima on 120 random 6-unit DAGs built around such a parent (results/bound17/scratch/scan.py,
340 budgets, none above; five mutants above, tests/test_chains.py). The strong relaxation can lose by (2): on random
layered DAGs the terms left out were worth more than the trees' charges (+0.33% against +0.58% on 1000 units at
0.8), so it runs with and without the several-children parents, a quarter of its iterations each, and goes on
with the better (``GapBound.multi``); each is a bound on its own, so the better one is too. The loose and tight
relaxations have no parent terms, and a larger gap cost never lowers their Lagrangian.

Nested drops (``_Nested``). The strong relaxation charges a parent's recomputation C_p alone; but recomputing p
needs p's own parents, and so on up a chain of values past their last read (attention at ONNX-node
granularity: softmax needs mask, scale and the scores MatMul). The nested relaxation follows that chain to
NESTED_DEPTH levels (class docstring), charging each drop the most of its parents' chains. On a cut-down GPT-2
(one layer, 190 units) at 0.9, whose optimum CP-SAT proves (+0.585% over computing each unit once), it proves
+0.362% where the strong relaxation proved +0.022% (BENCHMARKS.md, branch ``sched12``).
"""
from __future__ import annotations

import dataclasses
import math
import time
from dataclasses import dataclass

import numpy as np

from ..ir.dag import DAG

BOUND_SHARE = 0.2
"""Share of a strategy's time left that the bound may take (``bound_deadline``): the strong relaxation takes
30-40 s at 2277 units for 2000 iterations, and a schedule matters more than a tighter bound."""
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
    strong: bool = False
    """The bound came from the relaxation with recomputation stages and parents (``_strong_ascent``)."""
    nested: bool = False
    """The bound came from the relaxation with nested drops (``_Nested``, ``_nested_ascent``)."""
    lam: np.ndarray | None = None
    """float[n]: the multipliers (per stage, per byte over the budget) at which the winning relaxation reached
    ``bound`` (None where no stage is over); passes/coverbound.py splits gap costs over windows by them."""
    kind: str = ""
    """The relaxation that won: "loose", "tight", "strong" or "nested" ("" where no stage is over or none fits);
    ``gap_bound(resume=...)`` goes on with that one from ``lam``."""
    multi: bool = True
    """The chains had parents of several children (``gap_bound(multi=...)``; the strong relaxation tries both)."""


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


def gap_excess(dag: DAG, budget: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, bool]:
    """The retention gaps a schedule may drop (``_gaps``' unit, lo, hi, without the no-recompute units'), each
    stage's bytes over ``budget`` with every gap kept (float64[n]: unit t running in stage t with its inputs, the
    constant, the kept outputs and every gap held across t, less the budget), and whether the gaps that must be
    kept (no-recompute units') already exceed the budget at some stage, so that no schedule fits."""
    n = dag.n
    fixed = dag.constant + dag.kept_before + dag.kept_first + dag.workspace + dag.mem  # unit t running in stage t
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
    infeasible = bool((fixed + np.cumsum(forced)[:n] > budget).any())
    excess = (fixed + np.cumsum(load)[:n] - budget).astype(np.float64)
    free = ~pinned
    return unit[free], lo[free], hi[free], excess, infeasible


def gap_bound(dag: DAG, budget: int, *, upper: float | None = None, iterations: int = 500,
              deadline: float | None = None, strong: bool = True, nested: bool = True,
              resume: GapBound | None = None, chains: bool = True, multi: bool = True) -> GapBound:
    """The retention-gap lower bound (module docstring) on the cost of every schedule of ``dag`` within
    ``budget`` bytes. ``upper``: the cost of a known schedule (guides the step size; not needed for
    validity). Stops after ``iterations`` or at ``deadline`` (a ``time.perf_counter()`` value).
    ``strong``: also the relaxation with recomputation stages and parents (``_strong_ascent``); ``nested``: also
    the relaxation with nested drops (``_Nested``). ``chains``: a gap's cost includes its unit's chain of
    equal parents in the loose, tight and strong relaxations (module docstring, ``_chains``); ``multi``: with
    parents of several children read before the unit (module docstring, "Parents read before i").

    ``resume``: an earlier result of this function for the same ``dag`` and ``budget``: only the relaxation that
    won there (``resume.kind``) is run, its ascent started from ``resume.lam`` with a fresh step (``_Steps``), and
    the better of both is returned. Still a bound: every multiplier vector lambda >= 0 gives one (weak duality;
    the ascent's projection keeps lambda >= 0), whatever it starts from; the start only decides how high the
    ascent gets in the time it has (a tighter ``upper``, e.g. the final schedule's cost, gives Polyak's step a
    nearer target: checkmate's last phase)."""
    n = dag.n
    base = float(dag.cost.sum())
    unit, lo, hi, excess, infeasible = gap_excess(dag, budget)
    if infeasible:
        return GapBound(float("inf"), 0, len(unit), n)
    c0, m = dag.cost[unit], dag.mem[unit].astype(np.float64)
    rows = excess > 0
    if not rows.any():
        return GapBound(base, 0, len(unit), 0)
    # (gap, stage over budget) pairs; coefficient min(M_g, e_t): a 0/1 gap never frees more than the
    # excess at a stage, so the tightened rows hold for every schedule and cut off fractional drops
    over = np.flatnonzero(rows)
    first = np.searchsorted(over, lo)
    last = np.searchsorted(over, hi, side="right")
    cnt = last - first
    span_lo, span_hi = np.full(n, n + 1), np.full(n, -1)  # each root's span: its gaps over a stage over budget
    np.minimum.at(span_lo, unit[cnt > 0], lo[cnt > 0])  # (the others are never dropped)
    np.maximum.at(span_hi, unit[cnt > 0], hi[cnt > 0] + 1)

    def chain_costs(with_multi: bool) -> tuple[np.ndarray, np.ndarray]:
        """Each gap's cost with its unit's chain, and own_lo (``_Parents``)."""
        extra, tree = _chains(dag, (span_lo, span_hi), with_multi)
        own = np.full(n, np.inf)
        for i, members in tree.items():
            idx = np.fromiter(members, dtype=np.int64)
            own[idx] = np.minimum(own[idx], span_lo[i])
        return c0 + extra[unit], own

    # a dropped gap's cost: its unit's and its chain's (c0: the nested relaxation's)
    c, own_lo = chain_costs(multi) if chains else (c0, np.full(n, np.inf))
    # the strong relaxation without the several-children parents: their trees leave them out of other gaps' parent
    # terms, which lowered it on random layered DAGs (BENCHMARKS.md, branch bound17); both are tried, the better kept
    alt = chain_costs(False) if chains and multi else None
    if alt is not None and np.array_equal(alt[0], c) and np.array_equal(alt[1], own_lo):
        alt = None
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

    if resume is not None and resume.kind and resume.lam is not None and len(resume.lam) == n:
        if resume.kind == "strong" and not resume.multi and alt is not None:
            c, own_lo = alt
        return _resume(resume, dag, unit, lo, hi, G, T, over, excess, rows, c, c0, own_lo, m, base, target,
                       iterations, deadline, {"loose": (loose, loose_freed), "tight": (tight, tight_freed)})
    lam = np.zeros(n)
    lam[rows] = _median(c / np.maximum(m, 1.0))
    # the loose rows converge quickly; the tight Lagrangian is at least as high at the same multipliers
    best, lam, k1 = _ascent(excess, rows, c, loose, loose_freed, lam, iterations, target, base, deadline)
    tight_best, k2, k3 = -np.inf, 0, 0
    lam_t = lam_s = lam_n = lam
    strong_multi = multi
    strong_best = -np.inf
    if len(G) <= MAX_PAIRS:
        tight_best, lam_t, k2 = _ascent(excess, rows, c, tight, tight_freed, lam, max(iterations // 4, 1), target,
                                        base, deadline)
        if strong and len(G) * 4 <= MAX_PAIRS:
            variants = [(c, own_lo, multi)] + ([] if alt is None else [(alt[0], alt[1], False)])
            trial = iterations if len(variants) == 1 else max(iterations // 4, 1)
            tried = []
            for k, (cv, ov, flag) in enumerate(variants):  # each a quarter of the time left (all of it if alone)
                share = 1.0 if len(variants) == 1 else 1.0 / (4 - k)
                dl = None if deadline is None else time.perf_counter() + share * max(deadline - time.perf_counter(), 0.0)
                par = _Parents(dag, unit, lo, hi, G, T, over, excess, ov)
                a_s = np.minimum(m[G], excess[T] + par.added_max[T])  # tightened, allowing for added load
                sb, kk, ls = _strong_ascent(excess, rows, cv, G, T, a_s, par, lam_t, trial, target, base, dl)
                tried.append((sb, kk, ls, cv, par, a_s, flag))
                k3 += kk
            strong_best, _, lam_s, cv, par, a_s, strong_multi = max(tried, key=lambda x: x[0])
            if len(variants) > 1:  # the better one goes on from its best multipliers
                sb, kk, ls = _strong_ascent(excess, rows, cv, G, T, a_s, par, lam_s, iterations - trial, target,
                                            base, deadline)
                k3 += kk
                if sb > strong_best:
                    strong_best, lam_s = sb, ls
    nested_best, k4 = -np.inf, 0
    if nested and len(G) and len(G) <= MAX_PAIRS and n * len(over) <= MAX_NESTED_CELLS:
        nest = _Nested(dag, unit, G, over)
        nested_best, k4, lam_n = _nested_ascent(excess, rows, c0, G, T, m[G], nest, lam_t, max(iterations // 2, 1), target,
                                         base, deadline)
    strong_won = strong_best > max(tight_best, -1e300) and strong_best >= best
    nested_won = nested_best > max(best, tight_best, strong_best)
    won = lam_n if nested_won else lam_s if strong_won else lam_t if tight_best > best else lam
    kind = "nested" if nested_won else "strong" if strong_won else "tight" if tight_best > best else "loose"
    best, k = max(best, tight_best, strong_best, nested_best), k1 + k2 + k3 + k4
    bound = base + max(best, 0.0)
    return GapBound(bound * (1 - 1e-12), k, len(unit), int(rows.sum()), strong=strong_won and not nested_won,
                    nested=nested_won, lam=won, kind=kind, multi=strong_multi if kind == "strong" else multi)


@dataclass
class Covering:
    """The tight covering's rows (module docstring) with each gap's cost including its chain (``_chains``,
    ``multi``), as the loose and tight relaxations price them: ``gap_rows``. passes/coverbound.py ``gap_cover_bound``
    solves it as a MILP (its integer optimum, not only its LP's, is a bound on every schedule)."""

    unit: np.ndarray
    """int64[gaps]: each droppable gap's unit (units that may be recomputed)."""
    cost: np.ndarray
    """float[gaps]: a drop's cost, C_i plus the chain's."""
    G: np.ndarray
    """int64[pairs]: the gap of each (gap, stage over budget) pair."""
    T: np.ndarray
    """int64[pairs]: its stage."""
    a: np.ndarray
    """float[pairs]: the bytes a drop frees there, min(M_i, e_t)."""
    excess: np.ndarray
    """float[n]: e_t, the bytes stage t exceeds the budget with every gap kept (<= 0: not over)."""
    infeasible: bool
    """A stage's fixed part and its unrecomputable gaps alone exceed the budget (no schedule fits)."""
    shared_cost: np.ndarray | None = None
    """float[k]: each shared parent's cost, C_p plus its single-child parents' (``gap_rows``' ``shared``)."""
    shared_roots: list[np.ndarray] | None = None
    """int64 arrays: the units whose droppable gaps each shared parent serves (a drop of one needs it: y_g <= x_p)."""


def _shared(dag: DAG, span_lo: np.ndarray, span_hi: np.ndarray) -> tuple[list[tuple[int, float, np.ndarray]], np.ndarray]:
    """The shared parents of ``gap_rows`` (its docstring): ([(p, cost, roots)], bool[n] of the units taken: each
    shared parent and the single-child parents above it). The roots are found through the single-child chains;
    ``gap_rows`` keeps those that still reach p through their final trees."""
    n = dag.n
    nkids = np.bincount(dag.edges[:, 0], minlength=n) if len(dag.edges) else np.zeros(n, dtype=np.int64)
    _, single = _chains(dag, (span_lo, span_hi), False)
    roots: dict[int, set[int]] = {}
    for i in np.flatnonzero(span_lo <= span_hi).tolist():
        members = {i} | set(single.get(i, ()))
        for v in members:
            for p in dag.preds[v].tolist():
                if p not in members and nkids[p] > 1 and not dag.no_recompute[p] and dag.last_use[p] < span_lo[i]:
                    roots.setdefault(p, set()).add(i)
    taken = np.zeros(n, dtype=bool)
    out = []
    for p in sorted(roots):
        rs = np.array(sorted(roots[p]), dtype=np.int64)
        if len(rs) < 2 or dag.mem[p] < dag.mem[rs].sum() or taken[p]:
            continue
        up, v = [p], p  # the single-child parents above p, as large as p (a chain, as ``_chains``')
        while True:
            nxt = [q for q in dag.preds[v].tolist()
                   if nkids[q] == 1 and not dag.no_recompute[q] and dag.mem[q] >= dag.mem[p] and not taken[q]]
            if not nxt:
                break
            v = nxt[0]
            up.append(v)
        taken[up] = True
        out.append((p, float(dag.cost[up].sum()), rs))
    return out, taken


def gap_rows(dag: DAG, budget: int, multi: bool = True, shared: bool = True) -> Covering:
    """The covering's rows and costs as ``gap_bound`` builds them for its loose and tight relaxations (with chains;
    ``multi``: with parents of several children read before the unit).

    ``shared``: also the *shared parents*, for a MILP (``Covering.shared_cost``, ``shared_roots``): a recomputable
    parent p with several children, past its last read before the droppable gaps of two or more units i (roots:
    p is a parent of i or of a unit of i's single-child chain, and last_p < the first stage of i's droppable gaps),
    at least as large as all of them together (GPT-2 at ONNX-node granularity: attention's split, 72 MB, parent
    of the q, k and v transposes' reshapes, 24 MB each). p and the single-child parents above it as large as p
    join no tree (``_chains``' ``exclude``). Why it is a bound: a gap of such a root i counts as dropped at t only
    where none of {i}, tree(i), p and the units above it is kept across t. Where one of p's units is kept, it holds
    at least M_p >= the sum of M_i over p's roots, bytes that no other term of row t counts (past its last read,
    p is no parent of unit t; its own gaps end by last_p; it is in no tree), so every root's M_i (1 - z) fits in
    them. Where a drop of i is counted, i is computed in t+1..b, and so is the member of its chain that p is a
    parent of, which needs p resident then, computed after t (none of p's units was kept across t): one
    recomputation of p and of those above it, after last_p, which no gap of theirs pays, distinct from every
    other charge, charged once (x_p) however many of its roots' gaps are dropped (y_g <= x_p): a count of at
    least one where any is. Measured on GPT-2 fine (BENCHMARKS.md, branch ``bound19``): the 0/1 covering's
    optimum +0.822% at 0.8 with them, +0.625% without (the q and k transposes dropped as if free)."""
    n = dag.n
    unit, lo, hi, excess, infeasible = gap_excess(dag, budget)
    over = np.flatnonzero(excess > 0)
    first = np.searchsorted(over, lo)
    cnt = np.searchsorted(over, hi, side="right") - first
    span_lo, span_hi = np.full(n, n + 1), np.full(n, -1)
    np.minimum.at(span_lo, unit[cnt > 0], lo[cnt > 0])
    np.maximum.at(span_hi, unit[cnt > 0], hi[cnt > 0] + 1)
    groups, taken = _shared(dag, span_lo, span_hi) if shared else ([], None)
    extra, tree = _chains(dag, (span_lo, span_hi), multi, exclude=taken)
    kept_groups = []
    for p, cost, rs in groups:  # the roots for which p is a parent of {i} + tree(i) (p and those above it excluded)
        rs = np.array([i for i in rs.tolist() if any(p in dag.preds[v].tolist() for v in {i} | tree.get(i, set()))],
                      dtype=np.int64)
        if len(rs):
            kept_groups.append((cost, rs))
    G = np.repeat(np.arange(len(unit)), cnt)
    T = over[np.repeat(first - np.cumsum(cnt) + cnt, cnt) + np.arange(len(G))]
    a = np.minimum(dag.mem[unit][G].astype(np.float64), excess[T])
    return Covering(unit, dag.cost[unit] + extra[unit], G, T, a, excess, infeasible,
                    shared_cost=np.array([c for c, _ in kept_groups]), shared_roots=[r for _, r in kept_groups])


RESUME_MIN_STEP = 2.0 ** -8
"""A resumed ascent (``gap_bound(resume=...)``) stops once its step (``_Steps``: 2, halved after each 20 iterations
without a better value) is below this: at least 160 iterations without progress. GPT-2 fine at 0.9, resumed for the
183 s checkmate had left, raised its bound by 1e-12 of it (BENCHMARKS.md, branch lag15); checkmate then returns."""
RESUME_WINDOW = 50
RESUME_MIN_GAIN = 0.005
"""A resumed ascent with a target (``upper``) also stops where its best value rose by less than this share of the
distance to the target over the last RESUME_WINDOW iterations (at that pace it would need 10,000 more to reach it):
GPT-2 fine at 0.8 ran 120 s to the limit for +0.0037 points of its +0.48-point gap."""


def _resume(prev: GapBound, dag: DAG, unit: np.ndarray, lo: np.ndarray, hi: np.ndarray, G: np.ndarray,
            T: np.ndarray, over: np.ndarray, excess: np.ndarray, rows: np.ndarray, c: np.ndarray, c0: np.ndarray,
            own_lo: np.ndarray, m: np.ndarray, base: float, target: float | None, iterations: int, deadline: float | None,
            plain: dict) -> GapBound:
    """``gap_bound(resume=prev)``: the ascent of ``prev.kind`` from ``prev.lam`` (``gap_bound``'s docstring); the
    better of its best value and ``prev.bound``. ``plain``: the loose and tight relaxations' (price, freed) as
    ``gap_bound`` defines them."""
    assert prev.lam is not None
    lam0 = np.where(rows, np.maximum(prev.lam, 0.0), 0.0)
    if prev.kind in plain:
        price, freed = plain[prev.kind]
        best, lam, k = _ascent(excess, rows, c, price, freed, lam0, iterations, target, base, deadline, True)
    elif prev.kind == "strong":
        parents = _Parents(dag, unit, lo, hi, G, T, over, excess, own_lo)
        a_s = np.minimum(m[G], excess[T] + parents.added_max[T])
        best, k, lam = _strong_ascent(excess, rows, c, G, T, a_s, parents, lam0, iterations, target, base, deadline,
                                      True)
    else:
        nest = _Nested(dag, unit, G, over)
        best, k, lam = _nested_ascent(excess, rows, c0, G, T, m[G], nest, lam0, iterations, target, base, deadline,
                                      True)
    bound = (base + max(best, 0.0)) * (1 - 1e-12)
    if not bound > prev.bound:
        return dataclasses.replace(prev, iterations=prev.iterations + k)
    return GapBound(bound, prev.iterations + k, len(unit), int(rows.sum()), strong=prev.kind == "strong",
                    nested=prev.kind == "nested", lam=lam, kind=prev.kind, multi=prev.multi)


def bound_deadline(clock) -> float | None:
    """The ``time.perf_counter()`` value until which ``gap_bound`` may run for a strategy on ``clock`` (a
    ``solver_api.Clock``): BOUND_SHARE of its time left (None: no limit)."""
    left = clock.left()
    return None if left is None else time.perf_counter() + BOUND_SHARE * left


def _median(x: np.ndarray) -> float:
    """``float(np.median(x))`` of a 1-D array without NaN, the same value (the mean of the two middle elements),
    without np.median's NaN check, which imports numpy.ma (0.01-0.03 s of `remc solve`'s start)."""
    k = x.size
    if k == 0:
        return math.nan
    lo, hi = (k - 1) // 2, k // 2
    part = np.partition(x, [lo, hi])
    return float((part[lo] + part[hi]) / 2)


def raise_bound(dag: DAG, sched, bound: float, *, gap: float, source: str = "retention gaps",
                extra: str = "gap_bound") -> None:
    """Raise the report of ``sched`` to ``bound`` (the retention-gap bound of its graph and budget, or another
    relaxation's: ``source``) when that is higher than its own bound (``source`` as ``bound_source``); status
    "optimal" when the gap on the overhead is then within ``gap``. The bound is kept in ``extras[extra]``."""
    rep = sched.report
    if rep.cost is None:
        return
    rep.extras[extra] = bound
    if not np.isfinite(bound) or bound <= (rep.bound if rep.bound is not None else -np.inf):
        return
    rep.bound, rep.bound_source = min(bound, rep.cost), source
    rep.set_gap(float(dag.cost.sum()))
    if rep.gap is not None and rep.gap <= gap + 1e-12:
        rep.status = "optimal"


class _Steps:
    """The step-size rule both subgradient ascents share: remember the best value (and its multipliers), halve
    the step after 20 iterations without improvement, and take Polyak's step toward ``target`` (else 5% above
    the best value) along the subgradient ``g`` restricted to ``rows``."""

    def __init__(self, lam: np.ndarray, target: float | None, base: float, resumed: bool = False) -> None:
        self.best, self.best_lam, self.step, self.since = -np.inf, lam.copy(), 2.0, 0
        self.target, self.base, self.resumed = target, base, resumed
        self.bests: list[float] = []  # the best value after each iteration (a resumed ascent's stall rule)

    def stalled(self) -> bool:
        """A resumed ascent is done (RESUME_MIN_STEP, RESUME_WINDOW, RESUME_MIN_GAIN)."""
        if not self.resumed:
            return False
        if self.step < RESUME_MIN_STEP:
            return True
        if self.target is None or len(self.bests) <= RESUME_WINDOW:
            return False
        gain = self.best - self.bests[-RESUME_WINDOW - 1]
        return gain < RESUME_MIN_GAIN * max(self.target - self.best, 0.0)

    def record(self, val: float, lam: np.ndarray) -> None:
        if self.resumed:
            self.bests.append(max(val, self.best))
        if val > self.best:
            self.best, self.best_lam, self.since = val, lam.copy(), 0
        else:
            self.since += 1
            if self.since >= 20:
                self.step, self.since = self.step / 2, 0

    def move(self, lam: np.ndarray, g: np.ndarray, rows: np.ndarray, val: float) -> np.ndarray | None:
        """The next multipliers (None: the subgradient is zero, or a resumed ascent stalled: the ascent is done);
        ``g`` is overwritten."""
        g[~rows] = 0.0
        gg = float(g @ g)
        if gg == 0.0 or self.stalled():
            return None
        goal = self.target if self.target is not None and self.target > self.best else abs(self.best) * 1.05 + 1.0
        return np.maximum(lam + self.step * max(goal - val, 1e-12 * self.base) / gg * g, 0.0)


def _ascent(excess: np.ndarray, rows: np.ndarray, c: np.ndarray, price, freed, lam: np.ndarray,
            iterations: int, target: float | None, base: float,
            deadline: float | None, resumed: bool = False) -> tuple[float, np.ndarray, int]:
    """Subgradient ascent on L(lambda) = lambda . e + sum_g min(0, c_g - price_g(lambda)): (the best value,
    its multipliers, iterations run). Every value is a proven bound on the covering optimum."""
    steps, done = _Steps(lam, target, base, resumed), 0
    for done in range(1, iterations + 1):  # noqa: B007 (the count is returned)
        if deadline is not None and time.perf_counter() >= deadline:
            break
        p = price(lam)
        drop = c < p
        val = float(lam @ excess + (c - p)[drop].sum())
        steps.record(val, lam)
        nxt = steps.move(lam, excess - freed(drop), rows, val)
        if nxt is None:
            break
        lam = nxt
    return steps.best, steps.best_lam, done


def _chains(dag: DAG, spans: tuple[np.ndarray, np.ndarray] | None = None,
            multi: bool = True, exclude: np.ndarray | None = None) -> tuple[np.ndarray, dict[int, frozenset[int]]]:
    """(float[n]: the sum of C_c over tree(i), {i: tree(i)} where not empty): tree(i) (module docstring, "Chains
    of equal parents") is grown from i through recomputable parents p with M_p >= M_i > 0 whose only child is in
    the tree already, or (``multi``) with several children, last_p <= i, and no other tree holding p whose span
    meets i's ("Parents read before i").

    ``spans``: (lo[n], hi[n]), the first and last stage of each root's droppable gaps' ranges (a gap's stages and
    its read, lo..hi + 1; lo > hi: no tree is grown for that unit); default every unit, i + 1..last_i. Roots take
    their several-children parents by decreasing M_i (ties: by stage). ``exclude``: bool[n], units that join no
    tree (``gap_rows``' shared parents)."""
    n = dag.n
    extra = np.zeros(n)
    tree: dict[int, frozenset[int]] = {}
    nkids = np.bincount(dag.edges[:, 0], minlength=n) if len(dag.edges) else np.zeros(n, dtype=np.int64)
    usable = ~dag.no_recompute if exclude is None else ~dag.no_recompute & ~exclude
    ok = (nkids == 1) & usable
    many = (nkids > 1) & usable if multi else np.zeros(n, dtype=bool)
    if not (ok | many).any():
        return extra, tree
    preds, mem, cost, last = dag.preds, dag.mem, dag.cost, dag.last_use
    if spans is None:
        s_lo, s_hi = np.arange(n) + 1, np.maximum(last, np.arange(n) + 1)
    else:
        s_lo, s_hi = spans
    owned: dict[int, list[tuple[int, int]]] = {}  # several-children parent -> the spans of the trees holding it
    for i in sorted(range(n), key=lambda v: (-int(mem[v]), v)):
        if mem[i] <= 0 or s_lo[i] > s_hi[i]:
            continue
        lo_i, hi_i = int(s_lo[i]), int(s_hi[i])
        seen = {i}
        members: list[int] = []
        frontier = [i]
        while frontier:
            nxt = []
            for v in frontier:
                for p in preds[v].tolist():
                    if p in seen or mem[p] < mem[i]:
                        continue
                    if not ok[p] and not (many[p] and last[p] <= i
                                          and all(e < lo_i or s > hi_i for s, e in owned.get(p, ()))):
                        continue
                    seen.add(p)
                    nxt.append(p)
            members += nxt
            frontier = nxt
        if members:
            for p in members:
                if many[p]:
                    owned.setdefault(p, []).append((lo_i, hi_i))
            tree[i] = frozenset(members)
            extra[i] = float(cost[members].sum())
    return extra, tree


class _Parents:
    """What the strong relaxation needs about the parents of dropped gaps (module docstring, "Parents").

    For each (gap, over stage) pair j, the entries (j, p) of the parents p of the gap's unit whose last
    frontier read is before the pair's stage: a recomputation of the unit at stage T_j + 1 needs p, which
    is then either kept past its last read (bytes M_p on stages last_p+1..T_j) or computed again (C_p).
    One such retention or recomputation of p can serve at most D_p gap drops (the gaps of p's children
    that end after last_p), so each drop is charged 1/D_p of it: the charges never exceed what a schedule
    pays. ``added_max[t]``: the most bytes retention can add at stage t (each p at most M_p)."""

    def __init__(self, dag: DAG, unit: np.ndarray, lo: np.ndarray, hi: np.ndarray, G: np.ndarray, T: np.ndarray,
                 over: np.ndarray, excess: np.ndarray, own_lo: np.ndarray | None = None) -> None:
        n = dag.n
        last = dag.last_use
        has = np.bincount(G, minlength=len(unit)) > 0  # gaps with a stage over budget: the only ones dropped
        pu = [dag.preds[u] for u in unit.tolist()]
        gp_g = np.repeat(np.arange(len(unit)), [len(p) for p in pu])
        gp_p = np.concatenate(pu).astype(np.int64) if len(gp_g) else np.zeros(0, dtype=np.int64)
        serve = has[gp_g] & (hi[gp_g] + 1 > last[gp_p])
        self.D = np.bincount(gp_p[serve], minlength=n).astype(np.float64)
        # pair entries: (pair j, parent p) with last_p <= T_j (p is past its last read at stage T_j + 1)
        starts = np.concatenate(([0], np.cumsum(np.bincount(G, minlength=len(unit)))))
        gp_first = starts[gp_g]
        cnt = (starts[gp_g + 1] - gp_first) * serve
        rep = np.repeat(np.arange(len(gp_g)), cnt)
        j = np.repeat(gp_first - np.cumsum(cnt) + cnt, cnt) + np.arange(len(rep))
        keep = last[gp_p[rep]] <= T[j]
        if own_lo is not None:  # a tree member's retention or recomputation from the first stage of a span of a
            # tree holding it is that tree's to charge (``_chains``): left out where the gap's read reaches it
            keep &= ~(own_lo[gp_p] <= hi[gp_g] + 1)[rep]
        self.pair, self.parent = j[keep], gp_p[rep][keep]
        self.last = last[self.parent]
        self.mem = dag.mem[self.parent].astype(np.float64)
        self.cost = np.where(dag.no_recompute[self.parent], np.inf, dag.cost[self.parent])
        self.share = 1.0 / np.maximum(self.D[self.parent], 1.0)
        top = np.zeros(n + 1)
        ps = np.flatnonzero(self.D > 0)
        reach = np.full(n, -1, dtype=np.int64)  # the last stage a retention of p can reach: its children's b - 1
        np.maximum.at(reach, gp_p[serve], hi[gp_g[serve]])
        np.add.at(top, last[ps] + 1, dag.mem[ps])
        np.add.at(top, np.maximum(reach[ps] + 1, last[ps] + 1), -dag.mem[ps])
        self.added_max = np.cumsum(top)[:n]


def _strong_ascent(excess: np.ndarray, rows: np.ndarray, c: np.ndarray, G: np.ndarray, T: np.ndarray, a: np.ndarray,
                   par: _Parents, lam: np.ndarray, iterations: int, target: float | None, base: float,
                   deadline: float | None, resumed: bool = False) -> tuple[float, int, np.ndarray]:
    """Subgradient ascent on the strong Lagrangian: each gap g of unit i may be dropped with its recomputation
    at stage s = T_j + 1 for one of its pairs j (freeing a_{g,t} on its over stages t <= T_j only), at cost
    C_i plus, per parent p past its last read at s, min(C_p, lambda-price of keeping p from last_p + 1 to
    T_j) / D_p; keeping p adds M_p / D_p to those stages' load. (the best value, iterations run); every value
    is a proven bound on the relaxation, and so on every schedule's overhead."""
    n, npair = len(excess), len(G)
    seg = np.flatnonzero(np.r_[True, G[1:] != G[:-1]]) if npair else np.zeros(0, dtype=np.int64)
    lens = np.diff(np.r_[seg, npair])
    seg_of = np.repeat(np.arange(len(seg)), lens)
    pos = np.arange(npair) - np.repeat(seg, lens)
    steps, done = _Steps(lam, target, base, resumed), 0
    for done in range(1, iterations + 1):  # noqa: B007 (the count is returned)
        if deadline is not None and time.perf_counter() >= deadline:
            break
        cum = np.concatenate(([0.0], np.cumsum(lam)))  # cum[x + 1] = lambda_0 + ... + lambda_x
        keep_price = par.mem * (cum[T[par.pair] + 1] - cum[par.last + 1])
        retain = keep_price < par.cost
        charge = np.bincount(par.pair, weights=np.minimum(keep_price, par.cost) * par.share, minlength=npair)
        val, first_hit, freed = _choose(lam, excess, c[G], charge, T, a, seg, lens, seg_of, pos, n)
        steps.record(val, lam)
        on = np.isin(par.pair, first_hit[first_hit < npair]) & retain
        added = np.zeros(n + 1)
        np.add.at(added, par.last[on] + 1, par.mem[on] * par.share[on])
        np.add.at(added, T[par.pair[on]] + 1, -par.mem[on] * par.share[on])
        nxt = steps.move(lam, excess - freed + np.cumsum(added)[:n], rows, val)
        if nxt is None:
            break
        lam = nxt
    return steps.best, done, steps.best_lam


def _choose(lam: np.ndarray, excess: np.ndarray, cost: np.ndarray, charge: np.ndarray, T: np.ndarray,
            a: np.ndarray, seg: np.ndarray, lens: np.ndarray, seg_of: np.ndarray, pos: np.ndarray,
            n: int) -> tuple[float, np.ndarray, np.ndarray]:
    """One Lagrangian step of the strong and nested relaxations: each (gap, stage) pair's value is its gap's
    ``cost`` plus its parents' ``charge``, less the multipliers of the bytes it frees at the stages up to
    it (``T``: stage, ``a``: bytes; pairs grouped by gap in ``seg``/``lens``, ``pos`` their position in the gap,
    ``seg_of`` their gap); each gap takes its least value where negative. Returns the Lagrangian value, each gap's
    first pair of least value (len(pairs) where not dropped) and the bytes freed per stage by those choices."""
    npair = len(T)
    cw = np.cumsum(lam[T] * a)
    cw -= np.repeat(np.r_[0.0, cw[seg[1:] - 1]], lens)
    v = cost - cw + charge
    vmin = np.minimum.reduceat(v, seg) if npair else v
    drop = vmin < 0
    val = float(lam @ excess + vmin[drop].sum())
    # the chosen option per dropped gap: its first pair of least value
    hit = np.flatnonzero((v == np.repeat(vmin, lens)) & np.repeat(drop, lens))
    first_hit = np.full(len(seg), npair, dtype=np.int64)
    np.minimum.at(first_hit, seg_of[hit], hit)
    chosen_pos = np.where(first_hit < npair, pos[np.minimum(first_hit, max(npair - 1, 0))], -1)
    freed_mask = pos <= np.repeat(chosen_pos, lens)
    return val, first_hit, np.bincount(T[freed_mask], weights=a[freed_mask], minlength=n)


NESTED_DEPTH = 4
"""Ancestor levels the nested relaxation follows below a dropped gap's parents (``_Nested``)."""
MAX_NESTED_CELLS = 250_000
"""Most (unit, stage over budget) cells of the nested relaxation's table; above it the nested relaxation is not
run (each iteration is O(cells x NESTED_DEPTH): ResNet50 fine at 0.9, 2277 units x 659 stages over budget,
took 463 s for 1000 iterations and proved nothing more; GPT-2 fine at 0.9, 1730 x 14, 10 s)."""


class _Nested:
    """Nested drops (a recomputed value whose parent is past its last read pays for that parent, and for the
    parent's own parents when the parent is recomputed too), as a table h[p, k]: a lower bound on what making
    unit p resident at some stage >= o_k + 1 costs (O = o_0 < o_1 < ...: the stages over budget with every gap
    kept; lambda is zero elsewhere), per drop that relies on it:

    * 0 when p has a frontier read after o_k (it may be resident anyway);
    * else the less of (a) keeping p at every over stage from last_p + 1 to o_k (lambda-priced bytes M_p), and
      (b) p absent at some over stage u >= last_p + 1 and computed again at s_p > u: C_p, plus M_p priced on the
      over stages from s_p to o_k, plus what p's parents cost at s_p. Over s_p in (o_k', o_k'+1] the retention
      price is constant and the parents' cost can only grow with s_p (h is nondecreasing in k, by induction),
      so s_p = o_k' + 1 for an over stage o_k' >= last_p + 1, k' <= k, covers every schedule;
    * the parents' cost is the most of any one parent's (a single path up: a unit reached by two paths is never
      charged twice per drop), to NESTED_DEPTH levels (below that: min(keep, C_p), the strong relaxation's term).

    A drop of a gap of unit i recomputed after over stage o_k is charged the most h[p, k] over i's parents p.
    Each unit's retention or recomputation serves at most D_p drops: the droppable gaps of units that reach p
    within NESTED_DEPTH + 1 edges up through units past their last read at some over stage (the only way the
    recursion reaches p), so h charges 1/D_p of p's own terms, as the strong relaxation does with its D_p."""

    def __init__(self, dag: DAG, unit: np.ndarray, G: np.ndarray, over: np.ndarray, depth: int = NESTED_DEPTH) -> None:
        n = dag.n
        self.depth = depth
        self.over = over
        self.last = dag.last_use.astype(np.int64)
        self.mem = dag.mem.astype(np.float64)
        self.cost = np.where(dag.no_recompute, np.inf, dag.cost)
        E = dag.edges
        self.e0 = E[:, 0] if len(E) else np.zeros(0, np.int64)
        self.e1 = E[:, 1] if len(E) else np.zeros(0, np.int64)
        # the first over stage at or after last_p + 1 (index into over; len(over): none)
        self.u = np.searchsorted(over, self.last + 1)
        # D_p: droppable gaps of the units that reach p within depth + 1 edges through pass-through units
        gaps_of = np.bincount(unit[np.unique(G)], minlength=n) if len(G) else np.zeros(n, dtype=np.int64)
        through = self.last <= over[-1]  # past its last read at some over stage: the recursion goes on from it
        D = np.zeros(n)
        preds = dag.preds
        for i in np.flatnonzero(gaps_of).tolist():
            seen = {i}
            frontier = [i]
            for _ in range(depth + 1):
                nxt = []
                for v in frontier:
                    for p in preds[v].tolist():
                        if p not in seen and through[p]:
                            seen.add(p)
                            nxt.append(p)
                frontier = nxt
            seen.discard(i)
            if seen:
                D[np.fromiter(seen, dtype=np.int64)] += gaps_of[i]
        self.share = 1.0 / np.maximum(D, 1.0)
        self.root_unit = unit

    def table(self, lam: np.ndarray) -> np.ndarray:
        """h[p, k] (class docstring) at multipliers ``lam`` (float64[n, len(over)])."""
        over, last, mem = self.over, self.last, self.mem
        m = len(over)
        cum = np.concatenate(([0.0], np.cumsum(lam)))
        cy = cum[over + 1]  # cum[o_k + 1]
        past = last[:, None] < over[None, :] + 1  # p past its last read at o_k + 1 (last_p <= o_k)
        keep_full = mem[:, None] * (cy[None, :] - cum[np.minimum(last + 1, len(lam))][:, None])
        keep_full = np.maximum(keep_full, 0.0)
        sh = self.share[:, None]
        cost = self.cost[:, None] * sh
        keep_full = keep_full * sh
        h = np.where(past, np.minimum(keep_full, cost), 0.0)
        ks = np.arange(m)[None, :]
        allowed_k = ks >= self.u[:, None]  # o_k' >= last_p + 1
        mc = (mem * self.share)[:, None] * cy[None, :]  # M_p cum[o_k + 1] / D_p
        for _ in range(self.depth):
            H = np.zeros_like(h)
            if len(self.e0):
                np.maximum.at(H, self.e1, h[self.e0])
            # min over k' <= k, k' >= u_p of (H[p, k'] - M_p cum[o_k' + 1] / D_p), then + M_p cum[o_k + 1] / D_p
            best = np.minimum.accumulate(np.where(allowed_k, H - mc, np.inf), axis=1) + mc
            h = np.where(past, np.minimum(keep_full, cost + best), 0.0)
        return h


def _nested_ascent(excess: np.ndarray, rows: np.ndarray, c: np.ndarray, G: np.ndarray, T: np.ndarray, a: np.ndarray,
                   nest: _Nested, lam: np.ndarray, iterations: int, target: float | None, base: float,
                   deadline: float | None, resumed: bool = False) -> tuple[float, int, np.ndarray]:
    """Subgradient ascent on the nested Lagrangian: each gap g of unit i may be dropped with its recomputation
    after over stage T_j for one of its pairs j (freeing a_{g,t} on its over stages t <= T_j), at cost C_i plus
    the most ``_Nested.table`` over i's parents at T_j. (the best value, iterations run); every value is a
    proven bound on every schedule's overhead (weak duality, as the other relaxations)."""
    n, npair = len(excess), len(G)
    if not npair:
        return -np.inf, 0, lam
    seg = np.flatnonzero(np.r_[True, G[1:] != G[:-1]])
    lens = np.diff(np.r_[seg, npair])
    seg_of = np.repeat(np.arange(len(seg)), lens)
    pos = np.arange(npair) - np.repeat(seg, lens)
    k_of = np.searchsorted(nest.over, T)
    gunit = nest.root_unit[G]
    # (pair, parent) entries
    preds_cnt = np.bincount(nest.e1, minlength=n) if len(nest.e1) else np.zeros(n, dtype=np.int64)
    order = np.argsort(nest.e1, kind="stable")
    starts = np.concatenate(([0], np.cumsum(preds_cnt)))
    cnt = preds_cnt[gunit]
    pair_rep = np.repeat(np.arange(npair), cnt)
    off = np.arange(len(pair_rep)) - np.repeat(np.cumsum(cnt) - cnt, cnt)
    parent = nest.e0[order][starts[gunit][pair_rep] + off] if len(pair_rep) else np.zeros(0, np.int64)
    steps, done = _Steps(lam, target, base, resumed), 0
    for done in range(1, iterations + 1):  # noqa: B007 (the count is returned)
        if deadline is not None and time.perf_counter() >= deadline:
            break
        h = nest.table(lam)
        charge = np.zeros(npair)
        if len(pair_rep):
            np.maximum.at(charge, pair_rep, h[parent, k_of[pair_rep]])
        val, _, freed = _choose(lam, excess, c[G], charge, T, a, seg, lens, seg_of, pos, n)
        steps.record(val, lam)
        nxt = steps.move(lam, excess - freed, rows, val)
        if nxt is None:
            break
        lam = nxt
    return steps.best, done, steps.best_lam
