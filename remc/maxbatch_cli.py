"""``remc maxbatch``: the largest batch whose schedule fits a budget at <= 2 forward + backward (eq. 10)."""
from __future__ import annotations

from pathlib import Path
from typing import Any

from .ir.errors import ModelError, RemcError
from .training_graph import forward_only


def _dag_at(model: str, batch: int, cost: str, granularity: str, like: Any = None,
            loss: str = "cross-entropy") -> Any:
    """The compile state (import, costs, units) of ``model`` at ``batch``; with ``like`` (the state at
    another batch), the same units as ``like``'s: coarsening weighs memory, so it may group nodes
    differently at another batch size, and scaling memory between two batches needs the same units.

    ``model``: a zoo name, a training graph with a symbolic batch dimension, or a forward model with one, whose
    training graph (``loss``) is built at ``batch`` as ``remc grad --batch`` builds it (``remc grad`` binds the
    batch, so a user's own model reaches maxbatch this way)."""
    from . import zoo
    from .pipeline import State, compile_pipeline, run, stages
    source: Any
    if model in zoo.list_models() and not Path(model).exists():
        cfg = dict(zoo.paper_config(model))
        cfg.pop("batch", None)
        source = zoo.export(model, batch, train=True, weights="shape-only", **cfg)
        passes = compile_pipeline(cost=cost, granularity=granularity)
    elif forward_only(model):
        from .ir.onnx_io import inline_external_data, load_model
        from .passes.grad import build_training_graph
        proto = inline_external_data(load_model(model), Path(model).parent, max_bytes=1 << 20)
        source = build_training_graph(proto, loss=loss, batch=batch)
        passes = compile_pipeline(cost=cost, granularity=granularity)
    else:
        source = model
        passes = compile_pipeline(batch=batch, cost=cost, granularity=granularity)
    try:
        if like is None:
            return run(stages(passes, last="units"), State(model=source))
        from .passes.coarsen import remap_units
        from .passes.dagbuild import build_dag
        state = run(stages(passes, last="costs"), State(model=source))
    except ModelError as e:
        if "static batch dimension" not in str(e):
            raise
        raise ModelError(f"{e}: remc maxbatch needs a symbolic batch dimension; give it the forward model "
                         f"(exported with a dynamic batch axis), whose training graph it builds at each batch "
                         f"(--loss)") from None
    state.units, state.granularity = remap_units(like.units, state.graph), like.granularity
    state.dag = build_dag(state.graph, state.costs, state.units, granularity=like.granularity)
    return state


def run_maxbatch(model: str, budget: int, strategy: str, *, cost: str = "flops", granularity: str = "coarse",
                 options: Any = None, loss: str = "cross-entropy") -> dict[str, Any]:
    """Max batch of ``model`` (a training graph with a symbolic batch dimension, a forward model with one whose
    training graph with ``loss`` is built at each batch, or a zoo name at the paper's resolution) under
    ``budget`` bytes with ``strategy``; the report as a dict.

    The graph is built at batch 1 and 2: memory is affine in the batch (exact), and the cost bound is
    eq. (10) (scale-free). Checkmate and approx minimize cost under the budget, so a batch is feasible when
    their schedule's cost is within the bound; with a time limit the MILP's answer is a lower bound on the
    true maximum unless it proves optimality at each probe. Their search starts at lin-greedy's batch; a
    probe where the solver found no schedule in its time limit (on a loaded machine even its baseline
    phase may not finish) is listed in ``unfinished_probes`` and decided by lin-greedy's schedules, which
    the solver starts from.
    """
    from .backends.strategies import solve
    from .passes.maxbatch import affine, eq10_cost_limit, max_batch
    s1 = _dag_at(model, 1, cost, granularity, loss=loss)
    d1, d2 = s1.dag, _dag_at(model, 2, cost, granularity, like=s1, loss=loss).dag
    dag, _ = affine(d1, d2, 1, 2)  # memory and the constant (inputs) scale by the batch, measured
    start = None
    unfinished: list[int] = []
    if strategy in ("checkmate", "approx"):
        from .ir.errors import SolverError

        def probe(d: Any, b: int) -> Any:
            try:
                return solve(strategy, d, b, options)
            except SolverError:  # no schedule in the time limit (the baselines it starts from unfinished too)
                unfinished.append(d.meta["batch"])
                return solve("lin-greedy", d, b)  # what it would start from with time to run it
        target: Any = probe
        start = _baseline_start(dag, budget)
    elif strategy == "checkpoint-all":
        target = lambda d, b: solve("checkpoint-all", d, b)  # noqa: E731 (no knob to search)
    else:
        target = strategy
    batch, sched = max_batch(dag, budget, target, 1, start=start)
    from .passes.maxbatch import batch_dag
    at = batch_dag(dag, batch, 1)
    if not isinstance(batch, int) or batch < 1:
        raise RemcError(f"no batch size fits {budget} bytes with {strategy}")
    return {"model": model, "strategy": strategy, "budget": budget, "batch": batch, "peak": sched.peak(at),
            "cost": sched.cost(at), "cost_limit": eq10_cost_limit(at), "status": sched.report.get("status"),
            "units": dag.n, "search_start": start, "unfinished_probes": sorted(unfinished),
            "training_graph": f"built by remc grad, loss {loss}" if Path(model).exists() and forward_only(model)
            else "given"}


def _baseline_start(dag: Any, budget: int) -> int | None:
    """The batch lin-greedy fits (a solver's search starts there: its schedules include lin-greedy's
    in principle, and the probes below would be wasted), or None when it fits none."""
    from .ir.errors import InfeasibleError
    from .passes.maxbatch import max_batch
    try:
        return max_batch(dag, budget, "lin-greedy", 1)[0]
    except InfeasibleError:
        return None


def maxbatch_chart(models: list[str], strategies: list[str], budget: int, plot: str, *, cost: str = "flops",
                   granularity: str = "coarse", solver_kwargs: dict | None = None,
                   on_row: Any = None, loss: str = "cross-entropy") -> list[dict[str, Any]]:
    """``run_maxbatch`` for every model and strategy, and the paper's Fig. 6 (grouped bars) at ``plot``
    with the rows beside it as JSON (``<plot stem>.json``). A strategy that fits no batch gets batch 0."""
    import json

    from .backends.strategies import make_options
    from .ir.onnx_io import write_text_atomic
    from .passes.strategies import SOLVER_NAMES
    from .plots import plot_maxbatch
    rows = []
    for m in models:
        for s in strategies:
            try:
                options = make_options(s, **(solver_kwargs or {})) if s in SOLVER_NAMES else None
                rep = run_maxbatch(m, budget, s, cost=cost, granularity=granularity, options=options, loss=loss)
            except RemcError as e:
                rep = {"model": m, "strategy": s, "budget": budget, "batch": 0, "error": str(e)[:300]}
            rows.append(rep)
            if on_row is not None:
                on_row(rep)
    path = Path(plot)
    write_text_atomic(path.with_suffix(".json"), json.dumps(rows, indent=1, default=float))
    from .ir.sizes import format_size
    plot_maxbatch(rows, path, title=f"largest batch under {format_size(budget)} at <= 2 forward + backward")
    return rows
