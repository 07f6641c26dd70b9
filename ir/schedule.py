"""The schedule type every strategy yields: R, S (and FREE) over frontier-advancing stages.

Indices are 0-based: stage t in 0..n-1 is the stage in which unit t is evaluated for the first time
(paper §4.6). ``R[t, i]``: unit i is (re)computed in stage t. ``S[t, i]``: unit i is resident at the start
of stage t (checkpointed from stage t-1). ``FREE[t, e]`` for edge e = (i, k): unit i may be deallocated in
stage t right after computing k (eq. 5). Memory follows the paper's recurrence (eq. 2-3) with the
implied-constraint elimination of §4.7 (FREE[t, k, k] = 0), plus each unit's workspace while it runs.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .dag import DAG
from .report import SolveReport


@dataclass(eq=False)
class Schedule:
    """A frontier-advancing schedule (R, S) of a DAG; FREE and memory are derived from it."""

    R: np.ndarray
    """bool[n, n], lower triangular with a unit diagonal."""
    S: np.ndarray
    """bool[n, n], strictly lower triangular."""
    strategy: str = ""
    report: SolveReport = field(default_factory=SolveReport)
    """The strategy's report (ir/report.py); a plain dict assigned here becomes a SolveReport."""

    def __setattr__(self, name: str, value) -> None:
        if name == "report" and not isinstance(value, SolveReport):
            value = SolveReport.from_dict(value)
        object.__setattr__(self, name, value)

    def __post_init__(self) -> None:
        self.R = np.asarray(self.R, dtype=bool)
        self.S = np.asarray(self.S, dtype=bool)

    def cost(self, dag: DAG) -> float:
        """Total compute cost sum_t sum_i C_i R[t, i] (eq. 1a)."""
        return float(self.R.sum(axis=0) @ dag.cost)

    def recomputes(self) -> np.ndarray:
        """int[n]: how many times each unit is computed beyond the first."""
        return self.R.sum(axis=0).astype(np.int64) - 1

    def free(self, dag: DAG) -> np.ndarray:
        return free_matrix(dag, self.R, self.S)

    def memory(self, dag: DAG) -> np.ndarray:
        return memory_profile(dag, self.R, self.S)

    def peak(self, dag: DAG) -> int:
        return int(stage_peaks(dag, self.R, self.S).max())


def free_matrix(dag: DAG, R: np.ndarray, S: np.ndarray) -> np.ndarray:
    """bool[n, m]: FREE[t, e] for e = (i, k) per eq. (5): k computed in t, i not kept for t+1, no later user of
    i computed in t."""
    n = dag.n
    e0, e1 = dag.edges[:, 0], dag.edges[:, 1]
    if len(e0) == 0:
        return np.zeros((n, 0), dtype=bool)
    Rk = R[:, e1]
    last = np.full((n, n), -1, dtype=np.int64)
    rows = np.broadcast_to(np.arange(n)[:, None], Rk.shape)
    np.maximum.at(last, (rows, np.broadcast_to(e0, Rk.shape)), np.where(Rk, e1[None, :], -1))
    S_next = np.zeros_like(S)
    S_next[:-1] = S[1:]
    return Rk & ~S_next[:, e0] & (last[:, e0] == e1[None, :])


def memory_profile(dag: DAG, R: np.ndarray, S: np.ndarray) -> np.ndarray:
    """int64[n, n]: U[t, k] + R[t, k] W_k, the bytes in use while unit k runs in stage t (eq. 2-3).

    U[t, k] is the memory after computing k and before freeing its dependencies; freeing after k is
    GC_t(k) = sum over parents i of k of FREE[t, (i, k)] M_i.
    """
    n = dag.n
    free = free_matrix(dag, R, S)
    gc = np.zeros((n, n), dtype=np.int64)
    if free.size:
        np.add.at(gc.T, dag.edges[:, 1], (free * dag.mem[dag.edges[:, 0]][None, :]).T)
    alloc = R * dag.mem[None, :]
    base = dag.constant + (S * dag.mem[None, :]).sum(axis=1)
    freed_before = np.zeros((n, n), dtype=np.int64)
    freed_before[:, 1:] = np.cumsum(gc, axis=1)[:, :-1]
    U = base[:, None] + np.cumsum(alloc, axis=1) - freed_before
    return U + R * dag.workspace[None, :] + kept_profile(dag, R)


def kept_profile(dag: DAG, R: np.ndarray) -> np.ndarray:
    """int64[n, n]: bytes of kept outputs (``DAG.kept``) held at position k of stage t: those of every unit
    first computed before that position, and at a unit's first computation what it holds of its own while it
    runs (``DAG.kept_first``)."""
    n = dag.n
    R = np.asarray(R, dtype=bool)
    out = np.zeros((n, n), dtype=np.int64)
    if not n or not dag.kept.any():
        return out
    done = R.any(axis=0)
    first = np.argmax(R, axis=0)
    A = np.zeros((n, n), dtype=np.int64)
    A[first[done], np.flatnonzero(done)] = dag.kept[done]
    before = np.concatenate([[0], np.cumsum(A.sum(axis=1))[:-1]])
    out = before[:, None] + np.cumsum(A, axis=1)
    out[first[done], np.flatnonzero(done)] -= (dag.kept - dag.kept_first)[done]  # its own, while it runs
    return out


def stage_peaks(dag: DAG, R: np.ndarray, S: np.ndarray) -> np.ndarray:
    """int64[n]: ``memory_profile(dag, R, S).max(axis=1)``, computed over the entries of R only.

    The largest U[t, k] of a stage is at a computed unit (U only falls between computations), so the
    stage's peak needs U at its computed units alone: O(nnz(R) + edges into them) instead of O(n^2)
    dense int64 matrices (ResNet50 at 2277 units: 4 s for memory_profile)."""
    n = dag.n
    R = np.asarray(R, dtype=bool)
    S = np.asarray(S, dtype=bool)
    mem = dag.mem
    s_t, s_i = np.nonzero(S)
    base = dag.constant + np.bincount(s_t, weights=mem[s_i].astype(np.float64), minlength=n).round().astype(np.int64)
    base0 = base
    t_nz, k_nz = np.nonzero(R)  # row-major: stage by stage, units in order
    if len(t_nz) == 0:
        return base
    gc = np.zeros(len(t_nz), dtype=np.int64)
    e = dag.edges
    if len(e):
        order = np.argsort(e[:, 1], kind="stable")
        src = e[order, 0]
        ptr = np.searchsorted(e[order, 1], np.arange(n + 1))
        deg = ptr[k_nz + 1] - ptr[k_nz]
        pos = np.repeat(np.arange(len(t_nz)), deg)  # one entry per (stage, computed unit, parent)
        first = np.repeat(ptr[k_nz] - np.cumsum(deg) + deg, deg)
        par = src[np.arange(len(pos)) + first]
        pt, pk = t_nz[pos], k_nz[pos]
        srt = np.lexsort((pk, par, pt))  # by stage, parent, user
        pos, par, pt = pos[srt], par[srt], pt[srt]
        last = np.ones(len(pos), dtype=bool)  # the parent's last computed user in this stage
        last[:-1] = (pt[:-1] != pt[1:]) | (par[:-1] != par[1:])
        kept = np.zeros(len(pos), dtype=bool)
        nxt = pt + 1 < n
        kept[nxt] = S[pt[nxt] + 1, par[nxt]]
        free = last & ~kept
        gc = np.bincount(pos[free], weights=mem[par[free]].astype(np.float64),
                         minlength=len(t_nz)).round().astype(np.int64)
    alloc = mem[k_nz]
    if dag.kept.any():  # kept outputs from each unit's first computation on (entries are in time order)
        first_at = np.argmax(R, axis=0)
        is_first = t_nz == first_at[k_nz]
        add = np.where(is_first, dag.kept[k_nz], 0)
        by_stage = np.bincount(t_nz, weights=add.astype(np.float64), minlength=n).round().astype(np.int64)
        base = base + np.concatenate([[0], np.cumsum(by_stage)[:-1]])
        held = np.cumsum(add) - np.where(is_first, (dag.kept - dag.kept_first)[k_nz], 0)
    else:
        held = np.zeros(len(t_nz), dtype=np.int64)
    starts = np.flatnonzero(np.r_[True, t_nz[1:] != t_nz[:-1]])
    row_of = np.repeat(np.arange(len(starts)), np.diff(np.r_[starts, len(t_nz)]))
    cs_alloc = np.cumsum(alloc)
    cs_gc = np.cumsum(gc)
    alloc_before_row = (cs_alloc - alloc)[starts][row_of]
    gc_before_row = (cs_gc - gc)[starts][row_of]
    U = base[t_nz] + (cs_alloc - alloc_before_row) - (cs_gc - gc - gc_before_row) + dag.workspace[k_nz]
    if dag.kept.any():  # base[t] has the kept outputs of earlier stages; held counts them too
        U = U - base[t_nz] + base0[t_nz] + held
    peaks = base.copy()
    np.maximum.at(peaks, t_nz, U)
    return peaks


def check(dag: DAG, R: np.ndarray, S: np.ndarray) -> list[str]:
    """Violations of the frontier-advancing constraints (7a-c), correctness (1b, 1c) and no-recompute."""
    n = dag.n
    R = np.asarray(R, dtype=bool)
    S = np.asarray(S, dtype=bool)
    errs: list[str] = []
    if R.shape != (n, n) or S.shape != (n, n):
        return [f"R and S must be {n}x{n}, got {R.shape} and {S.shape}"]
    if not R.diagonal().all():
        errs.append(f"(7a) R[t, t] = 0 at stages {np.flatnonzero(~R.diagonal())[:10].tolist()}")
    if np.triu(S).any():
        errs.append("(7b) S has entries on or above the diagonal")
    if np.triu(R, 1).any():
        errs.append("(7c) R has entries above the diagonal")
    if len(dag.edges):
        i, j = dag.edges[:, 0], dag.edges[:, 1]
        bad = R[:, j] & ~(R[:, i] | S[:, i])
        if bad.any():
            t, e = np.argwhere(bad)[0]
            errs.append(f"(1b) stage {t}: {dag.names[j[e]]!r} computed without {dag.names[i[e]]!r} resident "
                        f"({int(bad.sum())} violations)")
    bad = S[1:] & ~(R[:-1] | S[:-1])
    if bad.any():
        t, k = np.argwhere(bad)[0]
        errs.append(f"(1c) stage {t + 1}: {dag.names[k]!r} kept without being resident in stage {t} "
                    f"({int(bad.sum())} violations)")
    again = (R.sum(axis=0) > 1) & dag.no_recompute
    if again.any():
        errs.append(f"no-recompute unit {dag.names[int(np.argmax(again))]!r} is computed more than once")
    return errs


def pin_no_recompute(dag: DAG, S: np.ndarray) -> np.ndarray:
    """S with every no-recompute unit kept from its frontier stage to its last use."""
    S = np.array(S, dtype=bool)
    for i in np.flatnonzero(dag.no_recompute):
        S[i + 1:dag.last_use[i] + 1, i] = True
    return S


def solve_r(dag: DAG, S: np.ndarray) -> np.ndarray:
    """The least R that makes S correct (Algorithm 2, both correction loops; appendix B).

    First every checkpoint S[t, i] not carried from stage t-1 is materialized in stage t-1; then, per stage
    and in reverse topological order, every parent of a computed unit that is not resident is computed.
    Each entry is set only when a constraint forces it, so R is optimal for the given S.
    """
    n = dag.n
    S = np.asarray(S, dtype=bool)
    R = np.eye(n, dtype=bool)
    R[:-1] |= S[1:] & ~S[:-1]
    preds = dag.preds
    for t in range(n):
        row, have = R[t], S[t]
        # the closure of "a computed unit's parent that is not resident is computed": each unit set is
        # expanded once (a stack, not a scan of the row: O(units computed) per stage, not O(n); ResNet50 at
        # ONNX-node granularity, 2277 units: 1.1 s -> about 0.1 s per call)
        todo = np.flatnonzero(row[:t + 1]).tolist()
        while todo:
            p = preds[todo.pop()]
            new = p[~(have[p] | row[p])]
            if len(new):
                row[new] = True
                todo.extend(new.tolist())
    return R


def solve_rs(dag: DAG, S: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(R, S'): the least R for S, with no-recompute units kept resident wherever R needs them.

    ``pin_no_recompute`` keeps a no-recompute unit until its last user's frontier stage, but a user may be
    recomputed later still (when a later stage needs the user again); then the unit is kept up to that
    stage too and R is solved again, until nothing changes (S only grows, so this terminates).
    """
    S = pin_no_recompute(dag, S)
    pinned = np.flatnonzero(dag.no_recompute)
    while True:
        R = solve_r(dag, S)
        grown = False
        for i in pinned:
            users = dag.succs[i]
            stages = np.flatnonzero(R[:, users].any(axis=1)) if len(users) else np.zeros(0, dtype=np.int64)
            last = int(stages.max()) if len(stages) else int(i)
            if not S[i + 1:last + 1, i].all():
                S[i + 1:last + 1, i] = True
                grown = True
        if not grown:
            return R, S


def checkpoint_all(dag: DAG) -> Schedule:
    """Compute every unit once and keep it until its last use (the paper's 'checkpoint all')."""
    n = dag.n
    t = np.arange(n)[:, None]
    i = np.arange(n)[None, :]
    S = (i < t) & (t <= dag.last_use[None, :])
    return Schedule(np.eye(n, dtype=bool), S, strategy="checkpoint-all")
