"""The retention-gap covering with one column per gap as a MILP (passes/coverbound.py ``gap_cover_bound``): a proven
bound (never above an exhaustive optimum), above the Lagrangian where the covering's LP is fractional, and what
checkmate's cover phase runs above the covering MILP's column limit."""
from __future__ import annotations

import functools

import numpy as np
from _milp_dags import exhaustive_optimum, layered_dag
from test_chains import _bn_sub, _multi_dag

from remc.backends.highs import HighsBackend
from remc.ir.schedule import checkpoint_all
from remc.passes.bounds import gap_bound, gap_rows
from remc.passes.coverbound import gap_cover_bound


def _gcb(dag, budget) -> float:
    return gap_cover_bound(dag, budget, HighsBackend(), time_limit=None, threads=1).bound


def test_gap_cover_bound_never_exceeds_the_exhaustive_optimum_and_beats_the_lagrangian():
    """Three of tests/test_chains.py's perturbed DAGs (seed 2) where the Lagrangian is well below the optimum and the
    covering MILP reaches it (results/bound19/scratch/scan.py checks 150 DAGs at every budget: none above), and
    ``_bn_sub`` (its chain through a parent of several children: the MILP's costs are the Lagrangian's)."""
    rng = np.random.default_rng(2)
    dags = [_multi_dag(rng) for _ in range(60)]
    checked = higher = 0
    for dag in [dags[k] for k in (26, 27, 31)] + [_bn_sub()]:
        total = float(dag.cost.sum())
        for budget in range(checkpoint_all(dag).peak(dag), 0, -1):
            best = exhaustive_optimum(dag, budget)
            if best is None:
                break
            b = _gcb(dag, budget)
            assert b <= best + 1e-9 * total, (budget, b, best)
            checked += 1
            higher += b > gap_bound(dag, budget, iterations=100).bound + 1e-6 * total
    assert checked >= 15 and higher >= 5, (checked, higher)


def test_gap_cover_bound_is_the_sum_of_costs_with_nothing_over_and_infinite_where_nothing_fits():
    dag = _bn_sub()
    peak = checkpoint_all(dag).peak(dag)
    assert _gcb(dag, peak) == float(dag.cost.sum())
    assert gap_rows(dag, 1).infeasible and _gcb(dag, 1) == float("inf")


def test_checkmate_cover_phase_runs_the_gap_cover_above_the_column_limit(monkeypatch):
    """Above the covering MILP's column limit (lowered to 5 columns here), checkmate's cover phase also solves the
    covering with one column per gap, and keeps the better of it and the windows."""
    import remc.passes.coverbound as cb
    from remc.backends.strategies import COVER_SOURCE, _cover_phase
    from remc.passes.solver_api import Clock
    dag = layered_dag(24, 4, 1, skip=0.3)
    budget = int(0.8 * checkpoint_all(dag).peak(dag))
    monkeypatch.setattr(cb, "cover_bound", functools.partial(cb.cover_bound, max_columns=5))
    monkeypatch.setattr(cb, "window_bound", functools.partial(cb.window_bound, window_columns=30))
    bounds: dict[str, float] = {}
    notes: dict[str, str] = {}
    _cover_phase(dag, budget, Clock(None), 1, bounds, notes)
    assert notes["cover_bound"].startswith("one column per gap: optimal"), notes
    assert bounds[COVER_SOURCE] >= _gcb(dag, budget) > float(dag.cost.sum()), bounds
