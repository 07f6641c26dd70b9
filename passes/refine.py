"""Local search on rounded schedules: repair one that exceeds the budget, then lower its cost.

Two-phase rounding (passes/approx.py) rounds the LP's checkpoint matrix S* entry by entry. On coarse ONNX
units that loses much of what the LP knew: on VGG16 at 0.8 of its checkpoint-all peak the LP is within
0.01% of the optimum, the cheapest rounded schedule within budget 8% above it, and the cheapest rounded
schedule of all (over budget) 0.003% above it. This pass works on S alone, as the rounding does: every
move changes S, then R is solved for it (``solve_rs``), useless entries are dropped (``clean``) and the
result is checked in exact bytes (``memory_profile``).

* ``repair``: while the peak exceeds the budget, at the stage of the peak try (a) dropping each checkpoint
  resident there — its whole run of stages, the run from that stage on, or the run up to it — and (b)
  keeping each unit recomputed there from its previous residency instead; take the move that removes the
  most bytes over budget (summed over every stage and unit) per unit of added cost. When no single move
  removes any, pairs are tried (each move, then each move at the new peak). Stops when no pair helps.
* ``improve``: for each recomputation (most expensive unit first), keep the unit resident from its
  previous residency instead; when that exceeds the budget, repair; accept the first move that lowers
  the cost and start again, until no move does.

Both stop at a deadline or an evaluation cap, returning the best schedule within budget found so far.
"""
from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from ..ir.dag import DAG
from ..ir.schedule import memory_profile, solve_rs
from .milp_model import clean


@dataclass
class Point:
    """A correct schedule with its cost and memory profile."""
    R: np.ndarray
    S: np.ndarray
    cost: float
    U: np.ndarray
    """int64[n, n]: ``memory_profile``."""

    @property
    def peak(self) -> int:
        return int(self.U.max())


class Refiner:
    """Repair and improve schedules of ``dag`` under ``budget`` bytes.

    ``deadline``: a ``time.perf_counter()`` value after which no move is evaluated; ``max_evals``: at most
    this many schedules are evaluated over the refiner's life. ``evals`` counts them; ``stopped`` says
    which limit ended the search early ("time", "evaluations"), None when every search ran to its end."""

    def __init__(self, dag: DAG, budget: int, *, deadline: float | None = None,
                 max_evals: int | None = None) -> None:
        self.dag = dag
        self.budget = int(budget)
        self.deadline = deadline
        self.max_evals = max_evals
        self.evals = 0
        self.stopped: str | None = None
        self._floor = 1e-9 * max(float(dag.total_cost), 1.0)

    def evaluate(self, S: np.ndarray) -> Point:
        """The least R for ``S`` (``solve_rs``), cleaned, with its cost and memory profile."""
        self.evals += 1
        R, S = clean(self.dag, *solve_rs(self.dag, S))
        return Point(R, S, float(R.sum(axis=0) @ self.dag.cost), memory_profile(self.dag, R, S))

    def out_of_budget(self) -> bool:
        """True once the deadline or the evaluation cap is reached (and records which)."""
        if self.max_evals is not None and self.evals >= self.max_evals:
            self.stopped = "evaluations"
        elif self.deadline is not None and time.perf_counter() >= self.deadline:
            self.stopped = "time"
        return self.stopped is not None

    def excess(self, U: np.ndarray) -> int:
        return int(np.maximum(U - self.budget, 0).sum())

    def repair(self, p: Point) -> Point | None:
        """``p`` changed until its peak fits the budget; None when no move helps (or the search stops)."""
        for _ in range(4 * self.dag.n):  # each step removes bytes over budget; this only bounds pathological runs
            if p.peak <= self.budget:
                return p
            ex = self.excess(p.U)
            tried: list[np.ndarray] = []
            best = self._least_excess_per_cost(p, ex, self._evaluated(self._repair_moves(p), tried))
            if best is None:  # no single move helps: try each move followed by one at its own peak
                # (each first move evaluated again here: keeping every evaluated point, whose memory profile is
                # n x n int64, held 2.7 GiB on GPT-2 at 1730 units; its S, bit-packed, is n x n / 8 bytes)
                pairs = (q for q1 in self._evaluated(self._unpacked(tried))
                         for q in self._evaluated(self._repair_moves(q1)))
                best = self._least_excess_per_cost(p, ex, pairs)
            if best is None:
                return None
            p = best
        return p if p.peak <= self.budget else None

    def _evaluated(self, moves, into: list[np.ndarray] | None = None):
        """Each S of ``moves`` evaluated (its S, bit-packed, also appended to ``into``), until the search must
        stop."""
        for S in moves:
            if self.out_of_budget():
                return
            if into is not None:
                into.append(np.packbits(S))
            yield self.evaluate(S)

    def _unpacked(self, packed: list[np.ndarray]):
        """The S matrices of ``_evaluated``'s ``into``, one at a time."""
        n = self.dag.n
        for bits in packed:
            yield np.unpackbits(bits, count=n * n).reshape(n, n).astype(bool)

    def _least_excess_per_cost(self, p: Point, ex: int, points) -> Point | None:
        """Of ``points``, the one removing the most bytes over budget per unit of added cost (None: none
        removes any)."""
        best, best_score = None, -1.0
        for q in points:
            ex_q = self.excess(q.U)
            if ex_q >= ex:
                continue
            score = (ex - ex_q) / max(q.cost - p.cost, self._floor)
            if score > best_score:
                best, best_score = q, score
        return best

    def _repair_moves(self, p: Point):
        """Moves at the stage of ``p``'s peak: drop a resident checkpoint's run (or half of it), or keep a unit
        recomputed there resident instead."""
        dag, S, n = self.dag, p.S, self.dag.n
        t = int(np.unravel_index(np.argmax(p.U), p.U.shape)[0])
        for i in np.flatnonzero(S[t]):
            if dag.no_recompute[i]:
                continue
            col = S[:, i]
            a = t
            while a > 0 and col[a - 1]:
                a -= 1
            b = t
            while b + 1 < n and col[b + 1]:
                b += 1
            for lo, hi in {(a, b), (t, b), (a, t)}:
                S2 = S.copy()
                S2[lo:hi + 1, i] = False
                yield S2
        for i in np.flatnonzero(p.R[t, :t]).tolist():
            yield self._keep(p, t, i)

    @staticmethod
    def _keep(p: Point, t: int, i: int) -> np.ndarray:
        """S with unit i kept resident from its last residency before stage t through stage t."""
        t0 = int(np.flatnonzero(p.R[:t, i] | p.S[:t, i]).max())
        S2 = p.S.copy()
        S2[t0 + 1:t + 1, i] = True
        return S2

    def improve(self, p: Point) -> Point:
        """``p`` (within budget) with recomputations replaced by residency while that lowers the cost."""
        dag = self.dag
        while True:
            rec = np.argwhere(p.R & ~np.eye(dag.n, dtype=bool))
            rec = rec[np.argsort(-dag.cost[rec[:, 1]], kind="stable")]
            for t, i in rec:
                if self.out_of_budget():
                    return p
                q = self.evaluate(self._keep(p, int(t), int(i)))
                if q.cost >= p.cost:
                    continue
                if q.peak > self.budget:
                    fixed = self.repair(q)
                    if fixed is None or fixed.cost >= p.cost:
                        continue
                    q = fixed
                p = q
                break
            else:
                return p
