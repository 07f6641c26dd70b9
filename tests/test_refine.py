"""Local search after rounding (passes/refine.py, approx's ``refine``): every move keeps the schedule correct,
repair fits the budget or gives up, improve never raises the cost, and approx with it is never worse than
Algorithm 2 alone."""
from __future__ import annotations

import time

import numpy as np
import pytest
from _milp_dags import exhaustive_optimum, random_dag, training_graph

from remc import zoo
from remc.backends.strategies import solve_approx, solve_milp
from remc.ir.errors import InfeasibleError
from remc.ir.schedule import check, checkpoint_all, memory_profile, solve_rs
from remc.passes.refine import Refiner


def _random_start(dag, rng):
    """A correct schedule from a random lower-triangular S."""
    S = np.tril(rng.random((dag.n, dag.n)) < 0.4, -1)
    R, S = solve_rs(dag, S)
    assert not check(dag, R, S)
    return S


def test_repair_and_improve_keep_schedules_correct_and_within_budget():
    rng = np.random.default_rng(31)
    repaired = gave_up = 0
    for k in range(40):
        dag = training_graph(int(rng.integers(4, 10)), rng, skips=((0, 3),) if k % 2 else (),
                             workspace=k % 3 == 0, dropout=(1,) if k % 4 == 0 else ())
        full = checkpoint_all(dag).peak(dag)
        budget = int(rng.uniform(0.5, 0.95) * full)
        ref = Refiner(dag, budget)
        start = ref.evaluate(_random_start(dag, rng))
        assert not check(dag, start.R, start.S)
        p = ref.repair(start)
        if p is None:
            gave_up += 1
            continue
        repaired += 1
        assert not check(dag, p.R, p.S) and p.peak <= budget
        assert p.peak == memory_profile(dag, p.R, p.S).max()
        q = ref.improve(p)
        assert not check(dag, q.R, q.S) and q.peak <= budget
        assert q.cost <= p.cost + 1e-9
        assert q.cost == pytest.approx(float(q.R.sum(axis=0) @ dag.cost))
        assert (q.R.sum(axis=0)[dag.no_recompute] == 1).all()
    assert repaired >= 25


def test_repair_leaves_a_schedule_within_budget_unchanged():
    rng = np.random.default_rng(32)
    dag = training_graph(8, rng, skips=((1, 6),))
    ref = Refiner(dag, checkpoint_all(dag).peak(dag))
    p = ref.evaluate(checkpoint_all(dag).S)
    assert ref.repair(p) is p


def test_refined_approx_is_never_worse_than_rounding_and_never_below_the_optimum():
    rng = np.random.default_rng(33)
    checked = optimal = 0
    for k in range(16):
        dag = random_dag(int(rng.integers(4, 6)), rng, p=0.5, workspace=k % 2 == 0, no_recompute=k % 3 == 0)
        for budget in range(checkpoint_all(dag).peak(dag), 0, -1):
            best = exhaustive_optimum(dag, budget)
            if best is None:
                break
            try:
                plain = solve_approx(dag, budget, refine=False).cost(dag)
            except InfeasibleError:
                plain = None
            try:
                sched = solve_approx(dag, budget)
            except InfeasibleError as err:
                assert plain is None and err.least_feasible <= budget
                continue
            assert not check(dag, sched.R, sched.S) and sched.peak(dag) <= budget
            assert sched.cost(dag) >= best - 1e-9
            rep = sched.report
            if rep.extras["lp"] == "not needed":  # checkpoint-all fits: nothing to round or refine
                assert rep.status == "optimal" and sched.cost(dag) == pytest.approx(best)
                checked += 1
                optimal += 1
                continue
            assert rep["refined"] and rep["refine_evals"] > 0
            if plain is None:
                assert rep["rounded_cost"] is None
            else:
                assert rep["rounded_cost"] == pytest.approx(plain)
                assert sched.cost(dag) <= plain + 1e-9
            optimal += sched.cost(dag) <= best + 1e-9
            checked += 1
    assert checked >= 20 and optimal >= 0.8 * checked


def test_refine_false_is_algorithm_2_alone():
    rng = np.random.default_rng(34)
    dag = training_graph(8, rng, skips=((0, 7),), workspace=True)
    budget = int(0.8 * checkpoint_all(dag).peak(dag))
    sched = solve_approx(dag, budget, refine=False)
    rep = sched.report
    assert rep["refined"] is False and rep["refine_evals"] is None
    assert rep.cost == pytest.approx(rep["rounded_cost"])
    assert "refined" not in rep["rule"]


def test_refine_stops_at_its_evaluation_cap_and_deadline():
    rng = np.random.default_rng(35)
    dag = training_graph(30, rng, skips=((2, 20), (5, 25)), workspace=True)
    budget = int(0.7 * checkpoint_all(dag).peak(dag))
    sched = solve_approx(dag, budget, refine_evals=5)
    assert sched.report["refine_evals"] <= 6 and sched.report["refine_stopped"] == "evaluations"
    ref = Refiner(dag, budget, deadline=time.perf_counter() - 1)
    p = ref.evaluate(checkpoint_all(dag).S)
    assert ref.repair(p) is None and ref.stopped == "time"


def test_vgg16_at_paper_size_within_the_papers_ratio_of_the_optimum():
    """The paper's target (Table 3: two-phase rounding within 1.06 of the optimum) on VGG16 at batch 256 and
    0.8 of its checkpoint-all peak, where rounding alone is 1.08 above it; and at 0.6, where rounding alone
    finds nothing within budget and the MILP proves the optimum only after minutes."""
    from remc.pipeline import State, compile_pipeline, run

    cfg = dict(zoo.paper_config("vgg16"))
    batch = cfg.pop("batch")
    dag = run(compile_pipeline()[:3], State(model=zoo.export("vgg16", batch, train=True, weights="shape-only",
                                                             **cfg))).dag
    full = checkpoint_all(dag).peak(dag)
    budget = int(0.8 * full)
    opt = solve_milp(dag, budget, time_limit=120, threads=1)
    assert opt.report["status"] == "optimal"
    sched = solve_approx(dag, budget, threads=1)
    assert not check(dag, sched.R, sched.S) and sched.peak(dag) <= budget
    assert sched.cost(dag) <= 1.06 * opt.cost(dag)
    assert sched.report["rounded_cost"] > 1.06 * opt.cost(dag)  # what refine is for
    low = solve_approx(dag, int(0.6 * full), threads=1)
    assert low.report["rounded_cost"] is None and low.peak(dag) <= int(0.6 * full)


@pytest.mark.parametrize("seed", range(3))
def test_random_training_dags_solvers_pass_the_validator(seed):
    """72 random training DAGs (test_baselines' generator, which also runs every baseline on 240; a third
    renumbered so that forward and backward interleave) through approx, and every fourth through checkmate,
    at 0.85 and 0.7 of the checkpoint-all peak: every schedule becomes a plan that the independent validator
    (passes/validate.py) replays within budget, at the peak and cost the schedule reports; checkmate is never
    above approx."""
    from test_baselines import random_training_dag, shuffled_order

    from remc.passes.plangen import generate_plan
    from remc.passes.validate import validate

    rng = np.random.default_rng(100 + seed)
    solved = 0
    for k in range(24):  # (70 a seed took 16 of CI's 46 minutes)
        dag = random_training_dag(rng)
        if k % 3 == 0:
            dag = shuffled_order(dag, rng)
        for frac in (0.85, 0.7):
            budget = int(frac * checkpoint_all(dag).peak(dag))
            # (the local search's evaluations: 2000 a case took 71.5 s of approx's CPU on seed 0, 300 take 55.4 s;
            # the validator replays what the search returns whatever its length)
            solvers = [("approx", lambda: solve_approx(dag, budget, refine_evals=300))]
            if k % 4 == 0:
                solvers.append(("checkmate", lambda: solve_milp(dag, budget, time_limit=60)))
            costs = {}
            for name, solve in solvers:
                try:
                    sched = solve()
                except InfeasibleError as err:
                    if name == "checkmate":  # a proof: the least feasible budget is above this one
                        assert err.least_feasible > budget
                    continue
                sim = validate(generate_plan(dag, sched), dag, budget)
                assert sim.peak <= budget and sim.peak == sched.peak(dag)
                assert sim.cost == pytest.approx(sched.cost(dag))
                costs[name] = sched.cost(dag)
                solved += 1
            if "approx" in costs and k % 4 == 0:  # approx's schedule proves the budget feasible
                assert "checkmate" in costs and costs["checkmate"] <= costs["approx"] * (1 + 1e-4) + 1e-9
    assert solved >= 20
