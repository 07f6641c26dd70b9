"""Every strategy on every zoo model (test sizes): the compiled graph runs on onnxruntime CPU in the plan's
order, and its loss and gradients equal the original training graph's within 1e-6 relative."""
from __future__ import annotations

import functools

import pytest

from remc import zoo
from remc.backends import runtime
from remc.backends.strategies import least_budget_bound
from remc.backends.strategies import names as _names
from remc.ir.errors import InfeasibleError, RemcError
from remc.ir.schedule import checkpoint_all
from remc.pipeline import State, compile_pipeline, run, stages

STRATEGIES = _names()

FRACTION = 0.5
"""The budget lies this far from the least-budget LP bound up to the checkpoint-all peak (coarse units)."""
SOLVER_SECONDS = 6.0
"""Time limit of the solver strategies: they are anytime and use all of it; this test checks that their
schedules run and match, not how good they are (tests/test_milp.py, test_approx.py, test_cpsat.py do)."""
LINEAR_ONLY = {"griewank", "chen-sqrtn", "chen-greedy"}


@functools.cache
def training_graph(name: str):
    """The model, its inputs, reference outputs, the state after import/costs/units and a budget."""
    cfg = dict(zoo.small_config(name))
    batch = cfg.pop("batch")
    model = zoo.export(name, batch, train=True, **cfg)
    feeds = runtime.random_inputs(model, 0)
    ref = runtime.measure(model, "cpu", feeds=feeds, iters=1, warmup=0, mem_method=None).outputs
    state = run(stages(compile_pipeline(), last="units"), State(model=model))
    full, least = checkpoint_all(state.dag).peak(state.dag), least_budget_bound(state.dag, time_limit=60)
    return model, feeds, ref, state, int(least + FRACTION * (full - least))


@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize("name", zoo.list_models())
def test_strategy_runs_and_matches(name: str, strategy: str) -> None:
    model, feeds, ref, base, budget = training_graph(name)
    solver = strategy in ("checkmate", "approx", "cpsat")
    from remc.backends.strategies import make_options
    options = make_options(strategy, time_limit=SOLVER_SECONDS) if solver else None
    passes = compile_pipeline(strategy=strategy, options=options)
    # Solvers get a tight budget; baselines their own default schedule (their budget fit is tested in
    # tests/test_baselines.py), since most cannot reach a budget this tight on these graphs.
    state = State(model=model, graph=base.graph, costs=base.costs, units=base.units, dag=base.dag,
                  granularity=base.granularity, budget=budget if solver else None)
    try:
        run(passes[3:], state)
    except RemcError as e:
        if strategy in LINEAR_ONLY and "linear forward graph" in str(e):
            pytest.skip(f"{strategy} applies to linear forward graphs only: {e}")
        if not solver and isinstance(e, InfeasibleError):
            pytest.skip(f"{strategy} cannot fit the budget: {e}")
        raise
    assert state.budget is None or state.sim.peak <= state.budget
    out = runtime.measure(state.lowered, "cpu", feeds=feeds, iters=1, warmup=0, mem_method=None).outputs
    ok, worst = runtime.compare_outputs(out, ref, rtol=1e-6)
    assert ok, worst
    if strategy == "checkmate":  # ORT's profiler shows the nodes ran exactly in the file's order
        executed = runtime.executed_order(state.lowered, "cpu", feeds=feeds)
        assert executed == [n.name for n in state.lowered.graph.node if n.op_type != "Constant"]
