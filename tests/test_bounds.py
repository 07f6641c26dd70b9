"""The retention-gap lower bound (passes/bounds.py): never above the exhaustive optimum, above the sum of
costs where memory forces recomputation, infinite where a stage cannot fit."""
from __future__ import annotations

import math

import numpy as np
from _milp_dags import exhaustive_optimum, random_dag, training_graph

from remc.ir.dag import DAG
from remc.ir.schedule import checkpoint_all
from remc.passes.bounds import gap_bound


def test_gap_bound_never_exceeds_the_optimum_and_often_beats_the_sum_of_costs():
    rng = np.random.default_rng(60)
    checked = above = 0
    for k in range(24):
        dag = random_dag(int(rng.integers(4, 6)), rng, p=0.5, workspace=k % 2 == 0, no_recompute=k % 5 == 0)
        peak = checkpoint_all(dag).peak(dag)
        for budget in range(peak, 0, -max(1, peak // 10)):
            best = exhaustive_optimum(dag, budget)
            b = gap_bound(dag, budget)
            if best is None:
                break
            assert b.bound <= best + 1e-9
            checked += 1
            above += b.bound > float(dag.cost.sum()) + 1e-9
    assert checked >= 20 and above >= 3


def test_gap_bound_is_the_sum_of_costs_when_nothing_must_be_dropped():
    rng = np.random.default_rng(61)
    dag = training_graph(6, rng, skips=((0, 5),))
    b = gap_bound(dag, checkpoint_all(dag).peak(dag))
    assert b.bound <= float(dag.cost.sum()) and b.stages_over == 0


def test_gap_bound_of_a_dropped_skip_is_its_cost():
    # a -> b -> c -> d -> e and a -> e: keeping a (4 bytes) across stage 2 (b and c resident, 12 bytes)
    # exceeds a budget of 14, so a is computed again (cost 5); recomputing it at e fits, so 9 + 5 is optimal
    dag = DAG(tuple("abcde"), np.array([5.0, 1.0, 1.0, 1.0, 1.0]), np.array([4, 4, 8, 2, 2]),
              np.array([(0, 1), (0, 4), (1, 2), (2, 3), (3, 4)]))
    b = gap_bound(dag, 14)
    assert math.isclose(b.bound, 14.0, rel_tol=1e-6)
    assert exhaustive_optimum(dag, 14) == 14.0


def test_gap_bound_is_infinite_when_a_stage_cannot_fit():
    dag = DAG(("a", "b", "c"), np.ones(3), np.array([4, 4, 4]), np.array([(0, 2), (1, 2)]))
    assert gap_bound(dag, 11).bound == math.inf
