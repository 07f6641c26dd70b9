"""The retention-gap covering MILP's bound (passes/coverbound.py): never above the exhaustive or the MILP's optimum,
above the Lagrangian bound (passes/bounds.py) where the covering's integrality matters, infinite where a stage
cannot fit."""
from __future__ import annotations

import dataclasses
import math

import numpy as np
from _milp_dags import exhaustive_optimum, layered_dag, random_dag, training_graph

from remc.backends.highs import HighsBackend
from remc.ir.dag import DAG
from remc.ir.errors import InfeasibleError, NoScheduleInTime
from remc.ir.schedule import checkpoint_all
from remc.passes.bounds import gap_bound
from remc.passes.coverbound import build_cover, cover_bound


def _cover(dag: DAG, budget: int, depth: int = 2) -> float:
    return cover_bound(dag, budget, HighsBackend(), time_limit=None, threads=1, depth=depth, max_columns=None).bound


def test_cover_bound_never_exceeds_the_exhaustive_optimum():
    rng = np.random.default_rng(60)
    checked = above = 0
    for k in range(24):
        dag = random_dag(int(rng.integers(4, 6)), rng, p=0.5, workspace=k % 2 == 0, no_recompute=k % 5 == 0)
        peak = checkpoint_all(dag).peak(dag)
        for budget in range(peak, 0, -max(1, peak // 10)):
            best = exhaustive_optimum(dag, budget)
            if best is None:
                break
            for depth in (0, 1, 2, 4):
                b = _cover(dag, budget, depth)
                assert b <= best + 1e-9, (k, budget, depth, b, best)
            checked += 1
            above += b > float(dag.cost.sum()) + 1e-9
    assert checked >= 20 and above >= 3


def _cases():
    """Random layered DAGs of 14-20 units (shuffled within levels), training graphs with skips and costs 100x apart,
    and random DAGs with workspace: (dag, ratio)."""
    rng = np.random.default_rng(5)
    for k in range(6):
        yield layered_dag(int(rng.integers(14, 21)), int(rng.integers(3, 5)), 100 + k, skip=0.3), 0.9
        yield layered_dag(int(rng.integers(14, 21)), int(rng.integers(3, 5)), 200 + k, skip=0.3), 0.8
    for k in range(4):
        dag = training_graph(int(rng.integers(5, 9)), rng, skips=((0, 3),), workspace=k % 2 == 0)
        yield dataclasses.replace(dag, cost=np.where(rng.random(dag.n) < 0.3, 100.0, 1.0) * rng.uniform(0.5, 1.5, dag.n)), 0.8
        yield random_dag(int(rng.integers(10, 14)), rng, p=0.3, workspace=True, no_recompute=k == 1), 0.8


def test_cover_bound_never_exceeds_the_milp_optimum_and_beats_the_lagrangian():
    """Against remc's MILP solved to optimality: the cover bound is never above the optimum, and on some graphs it is
    above the Lagrangian bound (its integrality: the Lagrangian is only as strong as the covering's LP)."""
    from remc.backends.strategies import solve_milp
    checked = higher = 0
    for dag, ratio in _cases():
        budget = int(ratio * checkpoint_all(dag).peak(dag))
        try:
            opt = solve_milp(dag, budget, time_limit=20, gap=0.0, threads=1).report
        except (InfeasibleError, NoScheduleInTime):
            continue
        if opt.status != "optimal":
            continue
        b = max(_cover(dag, budget, depth) for depth in (1, 4))
        assert b <= opt.cost + 1e-9 * float(dag.cost.sum()), (dag.n, ratio, b, opt.cost)
        checked += 1
        higher += b > gap_bound(dag, budget).bound + 1e-6
    print(f"checked {checked}, above the Lagrangian {higher}")
    assert checked >= 10 and higher >= 2


def test_cover_bound_is_infinite_when_a_stage_cannot_fit_and_the_sum_of_costs_when_nothing_is_over():
    dag = DAG(("a", "b", "c"), np.ones(3), np.array([4, 4, 4]), np.array([(0, 2), (1, 2)]))
    assert _cover(dag, 11) == math.inf
    rng = np.random.default_rng(61)
    dag = training_graph(6, rng, skips=((0, 5),))
    assert _cover(dag, checkpoint_all(dag).peak(dag)) == float(dag.cost.sum())


def test_cover_model_is_not_built_above_its_column_limit():
    dag = layered_dag(24, 4, 1, skip=0.3)
    budget = int(0.7 * checkpoint_all(dag).peak(dag))
    cm = build_cover(dag, budget, max_columns=None)
    assert cm is not None and cm.model.num_col > 10
    assert build_cover(dag, budget, max_columns=10) is None
    assert cover_bound(dag, budget, HighsBackend(), time_limit=5, max_columns=10).bound == -math.inf
