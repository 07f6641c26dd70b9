"""A plan checked against its graph: the DAG of the graph partitioned as the plan's units say."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .ir.errors import PlanError

PLAN_DIGEST_KEY = "remc.plan.sha256"
"""Metadata key of a compiled model: the SHA-256 of the plan text it was lowered from (``stamp_plan``)."""


def plan_digest(text: str) -> str:
    """The SHA-256 of a plan's text (plans are deterministic: the same compile writes the same bytes)."""
    import hashlib
    return hashlib.sha256(text.encode()).hexdigest()


def stamp_plan(model: Any, text: str) -> None:
    """Record in the compiled ONNX ``model``'s metadata which plan (its text) it was lowered from."""
    keep = [(p.key, p.value) for p in model.metadata_props if p.key != PLAN_DIGEST_KEY]
    del model.metadata_props[:]
    for k, v in keep + [(PLAN_DIGEST_KEY, plan_digest(text))]:
        e = model.metadata_props.add()
        e.key, e.value = k, v


def check_plan_matches_model(plan_path: str, model_path: str) -> bool:
    """PlanError when the model at ``model_path`` was compiled from another plan than ``plan_path``'s (its
    ``PLAN_DIGEST_KEY``); True when it was compiled from this plan, False when it records none (not written by
    ``remc compile``, e.g. the unmodified training graph)."""
    import onnx
    model = onnx.load(model_path, load_external_data=False)
    want = next((p.value for p in model.metadata_props if p.key == PLAN_DIGEST_KEY), None)
    if want is None:
        return False
    if plan_digest(Path(plan_path).read_text()) != want:
        raise PlanError(f"{model_path} was not compiled from {plan_path}: that plan was written by another "
                        f"compile (give the plan written next to {model_path} with --plan, or none)")
    return True


def dag_for_plan(plan: Any, graph_path: str, batch: int | None, device: str | None = None) -> Any:
    """The DAG of ``graph_path`` partitioned as the plan's units say, with the plan's unit costs, for
    ``device`` (default: the plan's own), whose kernel scratch is part of the workspace.

    Memory and dependencies come from the graph alone; costs are the plan's (they are not a safety property
    and may come from a profile the checker cannot repeat).
    """
    from .backends.runtime import import_model
    return dag_for_graph(plan, import_model(graph_path, batch=batch), device)


def dag_for_graph(plan: Any, graph: Any, device: str | None = None) -> Any:
    """See dag_for_plan."""
    from .passes.dagbuild import build_dag
    by_name = {n.name: n for n in graph.nodes}
    units, costs = [], {}
    for u in plan.units:
        missing = [m for m in u.members if m not in by_name]
        if missing:
            raise PlanError(f"plan unit {u.name!r} names node {missing[0]!r}, which graph {graph.name!r} lacks")
        units.append([by_name[m] for m in u.members])
        for i, m in enumerate(u.members):
            costs[m] = u.cost if i == 0 else 0.0
    covered = {n for u in units for n in u}
    extra = [n.name for n in graph.nodes if n not in covered]
    if extra:
        raise PlanError(f"the plan does not cover node {extra[0]!r} of graph {graph.name!r} ({len(extra)} nodes)")
    return build_dag(graph, costs, units, granularity=plan.granularity, device=device or plan.device)


def check_plan(plan: Any, graph_path: str, batch: int | None = None, device: str | None = None,
               budget: int | None = None) -> Any:
    """Validate ``plan`` against the graph at ``graph_path`` (dependencies, use after free, memory within
    ``budget``, default the plan's own); the simulation. PlanError naming the first violation."""
    from .outputs import check_readable
    from .passes.validate import validate
    check_readable(Path(graph_path))
    dag = dag_for_plan(plan, graph_path, batch, device)
    return validate(plan, dag, budget=live_budget(plan, budget if budget is not None else plan.budget),
                    measured_workspace=on_own_device(plan, device))


def live_budget(plan: Any, budget: int | None) -> int | None:
    """The budget remc's live-bytes model checks ``plan`` against: ``budget``, or ``Plan.live_budget`` when
    ``budget`` is the plan's own (its compile may have solved above it; ``check_plan_on_device`` holds the
    device's need to ``budget`` itself)."""
    return plan.live_budget if budget is not None and budget == plan.budget else budget


def on_own_device(plan: Any, device: str | None) -> bool:
    """Whether a check of ``plan`` for ``device`` is for the device it was made for, whose measured kernel
    scratch (cuDNN's workspaces, MLAS' im2col buffers) may be in its workspace
    (``passes.validate.check_against``)."""
    own = str(getattr(plan, "device", "") or "")
    return bool(own) and (device is None or device == own)


@dataclass(frozen=True)
class PlanCheck:
    """What ``check_plan_on_device`` checked: remc's live-bytes model and the replayed ONNX Runtime arena."""

    sim: Any
    """The simulation of the plan on its graph (live bytes within the budget)."""
    budget: int | None
    device: str
    arena: Any = None
    """``remc.fit.ArenaPrediction`` of the lowered plan on ``device``; None when not replayed."""


def check_plan_on_device(plan: Any, graph_path: str, batch: int | None = None, device: str | None = None,
                         budget: int | None = None, *, arena: bool = True) -> PlanCheck:
    """``check_plan``, then (with ``arena``) lower the plan onto the graph and replay ONNX Runtime's arena on
    ``device`` (``remc.fit.predict``): PlanError when the replayed arena plus the bytes outside it exceed the
    budget, which is what a run under a cap of the budget would hit."""
    from .backends.runtime import import_model
    from .ir.errors import PlanError
    from .ir.onnx_io import load_model
    from .ir.sizes import format_size
    from .outputs import check_readable
    from .passes.validate import validate
    check_readable(Path(graph_path))
    dev = device or plan.device
    budget = budget if budget is not None else plan.budget
    graph = import_model(load_model(graph_path, with_data=arena), batch=batch)
    sim = validate(plan, dag_for_graph(plan, graph, dev), budget=live_budget(plan, budget),
                   measured_workspace=on_own_device(plan, device))
    if not arena or not budget:
        return PlanCheck(sim, budget, dev)
    from .fit import predict
    from .passes.lower import lower
    pred = predict(lower(graph, plan), dev)
    if pred.total > budget:
        raise PlanError(f"the plan keeps {format_size(sim.peak)} live in remc's model, but its lowered graph needs "
                        f"{pred.total} bytes on ONNX Runtime {dev} ({'remc layout' if pred.placement == 'remc' else 'replayed arena'} {pred.arena} + {pred.outside} "
                        f"outside it), above the budget of {budget} bytes: it would run out of memory under a cap "
                        f"of the budget (compiled with --no-fit?)")
    return PlanCheck(sim, budget, dev, pred)
