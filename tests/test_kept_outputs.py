"""Kept outputs (graph outputs: parameter gradients, the loss) are held from the first computation of the unit
that produces them, as the device holds them, not from the start as the paper's U_init counts them
(``DAG.kept``): every solver, the schedule's memory profile and the plan simulator agree on it, and on a real
training graph remc's model at checkpoint-all is the bytes remc's CPU placement has live."""
from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from _milp_dags import budgets_against_exhaustive, exhaustive_optimum, random_dag, training_graph

from remc.backends.strategies import least_budget_bound, solve_milp
from remc.ir.errors import InfeasibleError
from remc.ir.plan import parse_plan, print_plan
from remc.ir.schedule import check, checkpoint_all, memory_profile, stage_peaks
from remc.passes.milp_model import simple_lower_bound
from remc.passes.plangen import generate_plan
from remc.passes.validate import simulate


def kept_cases(count: int, seed: int) -> list:
    rng = np.random.default_rng(seed)
    out = []
    for k in range(count):
        dag = random_dag(int(rng.integers(3, 6)), rng, workspace=k % 2 == 0, constant=int(rng.integers(0, 3)))
        kept = rng.integers(1, 4, dag.n) * (rng.random(dag.n) < 0.6)
        first = rng.integers(0, kept + 1)  # what the first computation holds of them while it runs
        out.append(dataclasses.replace(dag, kept=kept, kept_first=first))
    return out


def test_profile_peaks_and_plan_agree_on_kept_outputs():
    rng = np.random.default_rng(3)
    kept = np.r_[np.zeros(5, np.int64), rng.integers(1, 9, 4)]
    dag = dataclasses.replace(training_graph(4, rng, skips=((0, 2),), workspace=True), kept=kept,
                              kept_first=kept // 2)
    s = checkpoint_all(dag)
    prof = memory_profile(dag, s.R, s.S)
    assert (stage_peaks(dag, s.R, s.S) == np.where(s.R, prof, -1).max(axis=1)).all()
    plan = generate_plan(dag, s)
    assert simulate(plan, dag).peak == s.peak(dag)
    assert print_plan(parse_plan(print_plan(plan))) == print_plan(plan)
    assert parse_plan(print_plan(plan)).units == plan.units and any(u.kept for u in plan.units)
    # the paper's accounting holds them from the start: never less, and more here
    start = dag.kept_from_start()
    assert checkpoint_all(start).peak(start) > s.peak(dag)


@pytest.mark.parametrize("memory_form", ["dense", "recurrence"])
def test_milp_with_kept_outputs_equals_exhaustive_search(memory_form):
    for dag in kept_cases(10, seed=len(memory_form)):
        for budget in range(checkpoint_all(dag).peak(dag), -1, -1):
            best = exhaustive_optimum(dag, budget)
            if best is None:
                with pytest.raises(InfeasibleError) as err:
                    solve_milp(dag, budget, memory_form=memory_form, warm_start=False)
                assert budget < err.value.least_feasible <= budget + 1, err.value
                assert simple_lower_bound(dag) <= budget + 1
                assert least_budget_bound(dag) <= budget + 1
                break
            sched = solve_milp(dag, budget, memory_form=memory_form, warm_start=False)
            assert sched.cost(dag) == pytest.approx(best), (dag.edges.tolist(), dag.kept.tolist(), budget)
            assert not check(dag, sched.R, sched.S) and sched.peak(dag) <= budget
            assert simulate(generate_plan(dag, sched), dag).peak == sched.peak(dag)


def test_cpsat_with_kept_outputs_equals_exhaustive_search():
    pytest.importorskip("ortools")
    from remc.backends.cpsat import CpSatOptions, solve_cpsat
    for dag in kept_cases(8, seed=5):
        opts = CpSatOptions(copies=dag.n, threads=1, time_limit=60)
        budgets_against_exhaustive(dag, lambda b: solve_cpsat(dag, b, opts))  # noqa: B023


def test_checkpoint_all_model_is_what_remc_places_on_cpu():
    """GPT-2 test size on remc's CPU placement: the model's checkpoint-all peak is within 1% of the bytes the
    layout has live at once (its lower bound; the height adds the layout's fragmentation) plus the bytes
    outside the buffer. With the kept outputs in the constant from the start it was 9.6% above (156865 vs
    143104 + 30208 ...: the gradients do not exist before the backward pass), without the initializers'
    256-byte rounding 7% below."""
    from remc import zoo
    from remc.fit import dag_with_measured_scratch, predict
    from remc.pipeline import State, compile_pipeline, run
    cfg = dict(zoo.small_config("gpt2"))
    batch = cfg.pop("batch")
    st = run(compile_pipeline(strategy="checkpoint-all"),
             State(model=zoo.export("gpt2", batch, train=True, **cfg), budget=1 << 50))
    dag_with_measured_scratch(st, "cpu")
    model = checkpoint_all(st.dag).peak(st.dag)
    pred = predict(st.lowered, "cpu")
    live = pred.in_use_peak + pred.outside
    assert abs(model - live) <= 0.01 * live, (model, live)
