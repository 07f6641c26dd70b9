"""LP relaxation + two-phase rounding (passes/approx.py) against the MILP and exhaustive search."""
from __future__ import annotations

import numpy as np
import pytest
from _milp_dags import exhaustive_optimum, random_dag, training_graph

from remc.backends.strategies import solve_approx, solve_milp
from remc.ir.errors import InfeasibleError, RemcError
from remc.ir.schedule import check, checkpoint_all
from remc.passes.approx import default_thresholds


def assert_valid(dag, sched, budget):
    assert not check(dag, sched.R, sched.S)
    assert sched.peak(dag) <= budget
    assert sched.report["peak"] == sched.peak(dag)
    assert sched.report.cost == pytest.approx(sched.cost(dag))


def test_bounds_sandwich_the_optimum_on_tiny_graphs():
    rng = np.random.default_rng(21)
    checked = failed = 0
    for k in range(16):
        dag = random_dag(int(rng.integers(4, 6)), rng, p=0.5, workspace=k % 2 == 0, no_recompute=k % 3 == 0)
        for budget in range(checkpoint_all(dag).peak(dag), 0, -1):
            best = exhaustive_optimum(dag, budget)
            if best is None:
                break
            try:
                sched = solve_approx(dag, budget, eps_search=True)
            except InfeasibleError as err:
                assert err.least_feasible <= budget  # rounding failed on a feasible budget: bound stays valid
                failed += 1
                continue
            assert_valid(dag, sched, budget)
            assert sched.cost(dag) >= best - 1e-9
            assert sched.report.bound <= best + 1e-6
            checked += 1
    assert checked >= 3 * failed and checked >= 20


@pytest.mark.parametrize("rounding", ["deterministic", "randomized"])
def test_approx_against_milp(rounding):
    rng = np.random.default_rng(22)
    dag = training_graph(8, rng, skips=((0, 7), (2, 5)), workspace=True, dropout=(4,))
    found = 0
    for frac in (0.95, 0.9, 0.85, 0.8, 0.75):
        budget = int(frac * checkpoint_all(dag).peak(dag))
        try:
            opt = solve_milp(dag, budget)
        except InfeasibleError:
            continue
        try:
            sched = solve_approx(dag, budget, rounding=rounding, eps_search=True, samples=20)
        except InfeasibleError as err:  # rounding may miss a feasible budget; its bound must hold
            assert err.least_feasible <= budget
            continue
        found += 1
        assert_valid(dag, sched, budget)
        assert sched.cost(dag) >= opt.cost(dag) - 1e-9
        assert sched.report["lp_bound"] <= opt.cost(dag) + 1e-6
        assert sched.recomputes()[4] == 0
        assert sched.report["rounding"] == rounding
    assert found >= 2


def test_lp_bound_is_at_the_true_budget():
    rng = np.random.default_rng(23)
    dag = training_graph(7, rng, skips=((1, 6),))
    budget = int(0.8 * checkpoint_all(dag).peak(dag))
    bounds = {solve_approx(dag, budget, eps=e).report["lp_bound"] for e in (0.0, 0.1)}
    assert len({round(b, 6) for b in bounds}) == 1


def test_eps_search_is_no_worse_than_one_eps():
    rng = np.random.default_rng(24)
    dag = training_graph(9, rng, skips=((0, 8),), mem_hi=20)
    budget = int(0.75 * checkpoint_all(dag).peak(dag))
    one = solve_approx(dag, budget, eps=0.1)
    many = solve_approx(dag, budget, eps_search=True)
    assert many.cost(dag) <= one.cost(dag) + 1e-9
    assert len(many.report["eps_tried"]) >= 6
    assert {"eps", "rule", "candidates", "seconds", "lp_bound"} <= set(many.report)


def test_failed_eps_falls_back_to_the_list():
    rng = np.random.default_rng(25)
    dag = training_graph(6, rng)
    budget = int(0.8 * checkpoint_all(dag).peak(dag))
    try:
        sched = solve_approx(dag, budget, eps=0.9)
    except InfeasibleError:
        pytest.skip("no rounding fits this budget")
    assert sched.report["eps_fallback"] and sched.report["eps"] != 0.9
    assert_valid(dag, sched, budget)


def test_infeasible_budget_raises_with_lower_bound():
    rng = np.random.default_rng(26)
    dag = training_graph(5, rng, constant=10)
    with pytest.raises(InfeasibleError) as err:
        solve_approx(dag, dag.constant + 2)
    assert err.value.least_feasible > dag.constant + 2


def test_default_thresholds():
    S = np.array([[0.0, 0.2], [0.7, 1.0]])
    taus = default_thresholds(S, 64)
    assert taus[0] == 0.5
    assert all((S > t).sum() in (1, 2, 3) for t in taus)
    assert len(default_thresholds(np.linspace(0, 1, 500).reshape(20, 25), 10)) <= 11


def test_bad_rounding_name():
    dag = random_dag(3, np.random.default_rng(27))
    with pytest.raises(RemcError, match="rounding"):
        solve_approx(dag, 10**6, rounding="greedy")


def test_safe_dual_bound_is_below_the_lp_for_any_duals():
    """safe_dual_bound is a lower bound for every dual vector, and the LP optimum at the optimal duals."""
    from remc.backends.highs import LpSession
    from remc.passes.milp_model import build_model, safe_dual_bound

    rng = np.random.default_rng(5)
    for k in range(6):
        dag = training_graph(4 + k % 3, rng, skips=((0, 2),) if k % 2 else (), workspace=k % 2 == 0)
        budget = int(0.8 * checkpoint_all(dag).peak(dag))
        model = build_model(dag, budget, usefulness=False, memory_form="dense" if k % 2 else "recurrence")
        session = LpSession(model)
        res = session.solve(budget)
        if res.status != "optimal":
            continue
        y = np.asarray(session._h.getSolution().row_dual)
        assert res.bound == pytest.approx(res.objective, rel=1e-7, abs=1e-9)
        assert res.bound <= res.objective + 1e-12
        for scale in (0.0, 0.5, 1.5, -1.0):
            assert safe_dual_bound(model, scale * y) <= res.objective + 1e-9
        for _ in range(5):
            noisy = y + rng.normal(0, 0.1, len(y))
            assert safe_dual_bound(model, noisy) <= res.objective + 1e-9


def test_lp_stopped_at_its_time_limit_still_gives_a_valid_bound():
    """With presolve off, a dual simplex stopped by the time limit leaves duals: their bound is finite and
    below the LP optimum."""
    from remc.backends.highs import LpSession
    from remc.passes.milp_model import build_model

    dag = training_graph(40, np.random.default_rng(3), skips=((2, 9), (12, 30)), workspace=True)
    budget = int(0.7 * checkpoint_all(dag).peak(dag))
    model = build_model(dag, budget, usefulness=False, memory_form="dense")
    stopped = LpSession(model).solve(budget, time_limit=1e-6)
    full = LpSession(model).solve(budget)
    assert stopped.status == "time_limit" and full.status == "optimal"
    assert np.isfinite(stopped.bound)
    assert stopped.bound <= full.objective + 1e-9
    assert full.bound == pytest.approx(full.objective, rel=1e-7)
