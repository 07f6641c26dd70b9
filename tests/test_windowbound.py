"""The window bound (passes/windowbound.py): eq. (9) on windows of stages, each relaxed at its start, the
windows' bounds summed. Never above the optimum (exhaustive on small DAGs, the MILP on training graphs);
one window over every stage solved as a MILP is the optimum itself (so no row is missing or extra)."""
from __future__ import annotations

import numpy as np
from _milp_dags import exhaustive_optimum, random_dag, training_graph

from remc.backends.highs import HighsBackend
from remc.backends.strategies import solve_milp
from remc.ir.schedule import checkpoint_all
from remc.passes.windowbound import cut_windows, window_lp_bound


def test_window_bounds_never_exceed_the_exhaustive_optimum_and_one_window_is_exact():
    rng = np.random.default_rng(7)
    exact = above_once = 0
    for _ in range(8):
        dag = random_dag(int(rng.integers(4, 7)), rng, p=0.4)
        peak = checkpoint_all(dag).peak(dag)
        for ratio in (0.7, 0.8, 0.9):
            budget = int(peak * ratio)
            opt = exhaustive_optimum(dag, budget)
            if opt is None:
                continue
            for stages in (2, dag.n):
                for integral in (False, True):
                    wb = window_lp_bound(dag, budget, HighsBackend(), windows=cut_windows(dag, 10**9, stages),
                                         integral=integral)
                    assert wb.bound <= opt + 1e-6 * opt
                    above_once += wb.bound > float(dag.cost.sum()) + 1e-9
                    if stages == dag.n and integral:
                        assert abs(wb.bound - opt) <= 2e-6 * opt  # HiGHS proves it within its relative gap, 1e-6
                        exact += 1
    assert exact >= 3 and above_once >= 3  # (the cases are not trivial)


def test_window_bounds_never_exceed_the_milp_optimum_on_training_graphs():
    rng = np.random.default_rng(7)
    checked = 0
    for layers in (6, 8):
        dag = training_graph(layers, rng, skips=((0, layers - 2),))
        peak = checkpoint_all(dag).peak(dag)
        for ratio in (0.7, 0.8):
            sched = solve_milp(dag, int(peak * ratio), time_limit=60)
            if sched.report.status != "optimal":
                continue
            opt = sched.report.cost
            for stages in (3,):
                for integral in (False, True):
                    wb = window_lp_bound(dag, int(peak * ratio), HighsBackend(),
                                         windows=cut_windows(dag, 10**9, stages), integral=integral)
                    assert wb.bound <= opt + 1e-6 * opt and wb.solved >= 0
            checked += 1
    assert checked >= 3
