"""Typed options are validated where they are made; reports are typed, their gap on the recomputation
overhead; tiny costs are not free in the model; the solver strategies are anytime."""
from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
from _milp_dags import exhaustive_optimum, random_dag, training_graph

from remc.backends.strategies import make_options, solve, solve_approx, solve_milp
from remc.ir.errors import RemcError
from remc.ir.report import SolveReport, gap_of
from remc.ir.schedule import check, checkpoint_all
from remc.passes.milp_model import COST_EPS, build_model
from remc.passes.options import ApproxOptions, CheckmateOptions


@pytest.mark.parametrize("field,value", [("gap", math.nan), ("gap", -1.0), ("gap", 1.0), ("gap", 2.0),
                                         ("threads", 0), ("threads", -2), ("time_limit", math.nan),
                                         ("time_limit", math.inf), ("time_limit", 0.0), ("time_limit", -5.0),
                                         ("solver", "cplex")])
def test_checkmate_options_out_of_range_are_refused(field: str, value) -> None:
    with pytest.raises(RemcError) as err:
        CheckmateOptions(**{field: value})
    assert "\n" not in str(err.value)


@pytest.mark.parametrize("field,value", [("eps", 1.5), ("rounding", "greedy"), ("time_limit", math.nan),
                                         ("threads", 0), ("refine_seconds", 0.0)])
def test_approx_options_out_of_range_are_refused(field: str, value) -> None:
    with pytest.raises(RemcError):
        ApproxOptions(**{field: value})


def test_make_options_names_unknown_fields() -> None:
    with pytest.raises(RemcError, match="no option gapp"):
        make_options("checkmate", gapp=0.1)
    assert make_options("approx", refine=False, time_limit=None) == ApproxOptions(refine=False)
    with pytest.raises(RemcError, match="takes CheckmateOptions"):
        solve("checkmate", random_dag(3, np.random.default_rng(1)), 10**6, ApproxOptions())


def test_report_reads_typed_and_as_a_mapping() -> None:
    rep = SolveReport.from_dict({"status": "optimal", "cost": 3.0, "rule": "x"})
    assert rep.cost == 3.0 and rep["rule"] == "x" and rep.extras == {"rule": "x"}
    assert dict(rep.items()) == {"status": "optimal", "cost": 3.0, "rule": "x"}
    assert gap_of(12.0, 11.0, 10.0) == pytest.approx(0.5) and gap_of(12.0, 11.0, 10.0, "total") == pytest.approx(1 / 12)
    assert gap_of(12.0, None, 10.0) == math.inf and gap_of(10.0, 10.0, 10.0) == 0.0


def test_gap_is_measured_on_the_overhead() -> None:
    rng = np.random.default_rng(5)
    dag = training_graph(7, rng, skips=((0, 5),))
    budget = int(0.75 * checkpoint_all(dag).peak(dag))
    for sched in (solve_milp(dag, budget, threads=1), solve_approx(dag, budget, threads=1)):
        r = sched.report
        assert r.gap_measure == "overhead" and r.bound <= r.cost + 1e-9
        base = float(dag.cost.sum())
        if r.cost > base:
            assert r.gap == pytest.approx((r.cost - r.bound) / (r.cost - base))


def test_tiny_costs_are_not_free_and_optimal_means_optimal() -> None:
    """Costs spanning 1e-12..1 (FLOP costs of a ReLU beside a convolution): the model never treats a unit as
    free, its bound stays valid, and "optimal" is the exhaustive optimum."""
    rng = np.random.default_rng(7)
    checked = 0
    for k in range(12):
        base = random_dag(int(rng.integers(4, 7)), rng, p=0.5)
        cost = base.cost.copy()
        cost[rng.random(base.n) < 0.4] = 1e-12 * cost.max()
        dag = dataclasses.replace(base, cost=cost)
        model = build_model(dag, checkpoint_all(dag).peak(dag))
        assert (model.col_cost[model.r[model.r >= 0]] > 0).all()
        for budget in range(checkpoint_all(dag).peak(dag), 0, -1):
            best = exhaustive_optimum(dag, budget)
            if best is None:
                break
            sched = solve_milp(dag, budget, threads=1, gap=0.0, warm_start=k % 2 == 0)
            r = sched.report
            assert not check(dag, sched.R, sched.S) and sched.peak(dag) <= budget
            assert r.bound <= best * (1 + 1e-9) + 1e-12
            if r.status == "optimal":
                assert sched.cost(dag) == pytest.approx(best, rel=1e-9, abs=1e-15)
            checked += 1
    assert checked >= 10
    assert COST_EPS > 0


def test_anytime_returns_a_fitting_baseline_when_time_is_short() -> None:
    """With almost no time, approx and checkmate still return a schedule within budget (a baseline's at
    least), with a proven bound and its gap, not "no schedule"."""
    rng = np.random.default_rng(8)
    dag = training_graph(30, rng, skips=((0, 29), (5, 20)))
    budget = int(0.8 * checkpoint_all(dag).peak(dag))
    for name in ("approx", "checkmate"):
        sched = solve(name, dag, budget, make_options(name, time_limit=1e-3))
        assert sched.peak(dag) <= budget and not check(dag, sched.R, sched.S)
        assert sched.report.status == "time_limit"
        assert sched.report.bound is not None and sched.report.gap is not None


def test_every_strategys_report_gives_its_schedules_cost_and_peak() -> None:
    """``solve``'s report carries the schedule's own cost and peak for every strategy (cpsat's had neither: None
    in the Python API, while the CLI filled them in)."""
    from remc.backends.strategies import names

    rng = np.random.default_rng(12)
    dag = training_graph(6, rng, skips=((0, 3),))
    budget = int(0.85 * checkpoint_all(dag).peak(dag))
    ran = 0
    for name in names():
        if name == "cpsat":
            pytest.importorskip("ortools")
        try:
            sched = solve(name, dag, budget if name != "checkpoint-all" else None)
        except RemcError:  # a baseline that does not fit, or one that needs a chain
            continue
        assert sched.report.cost == pytest.approx(sched.cost(dag)), name
        assert sched.report.peak == sched.peak(dag), name
        ran += 1
    assert ran >= 4
