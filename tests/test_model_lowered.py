"""remc's live-bytes model of a plan against what its lowered graph keeps live on ONNX Runtime.

The fit loop can only find a plan when the solver's model counts at least what the lowered graph holds:
for every plan, at every node, the tensors ONNX Runtime's allocation planner keeps live
(``passes.arena.graph_events``; graph outputs and initializers are the model's constant) are within the
validator's live bytes."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import onnx.parser
import pytest

from remc.backends.runtime import import_model
from remc.ir.plan import Compute
from remc.ir.schedule import Schedule, check, pin_no_recompute, solve_r
from remc.passes.arena import graph_events
from remc.passes.dagbuild import build_dag
from remc.passes.lower import lower
from remc.passes.plangen import generate_plan
from remc.passes.validate import simulate

GRAPHS = Path(__file__).parent / "graphs"


def lowered_live_peak(model: onnx.ModelProto) -> tuple[int, str]:
    """The most bytes of arena tensors (graph outputs left out) live while one node of ``model`` runs."""
    outputs = {o.name for o in model.graph.output}
    live: dict[str, int] = {}
    best, where = 0, ""
    for ne in graph_events(model, "cpu").nodes:
        live.update((k, b) for k, b in ne.allocs if k not in outputs)
        if sum(live.values()) > best:
            best, where = sum(live.values()), ne.node
        for k in ne.frees:
            live.pop(k, None)
    return best, where


def keep_nothing(name: str):
    graph = import_model(onnx.parser.parse_model((GRAPHS / f"{name}.onnxtxt").read_text()))
    dag = build_dag(graph, {n.name: 1.0 for n in graph.nodes})
    S = pin_no_recompute(dag, np.zeros((dag.n, dag.n), dtype=bool))
    sched = Schedule(solve_r(dag, S), S, strategy="keep-nothing")
    assert check(dag, sched.R, sched.S) == []
    return graph, dag, generate_plan(dag, sched, graph_name=name)


@pytest.mark.parametrize("name", ["chain_train", "residual_train", "unet_train"])
def test_lowered_graph_holds_no_more_than_the_model(name: str) -> None:
    """Keep nothing across stages: every unit is computed in its own stage (the frontier) and recomputed in
    each later stage that reads it, so its first copy is read by nothing. ONNX Runtime keeps an output
    nothing reads to the end of the run, which remc's model (freed right after its compute) does not count:
    lowering must drop such copies, the first compute's included."""
    graph, dag, plan = keep_nothing(name)
    sim = simulate(plan, dag)
    lowered = lower(graph, plan)
    live, where = lowered_live_peak(lowered)
    assert live <= sim.peak - dag.constant, f"lowered graph holds {live} bytes at {where!r}, " \
                                            f"the model {sim.peak - dag.constant}"


def test_dead_first_copy_is_dropped() -> None:
    """A unit computed in its stage, read by nothing before its recompute: only the recompute is lowered."""
    graph, _, plan = keep_nothing("chain_train")
    lowered = lower(graph, plan)
    names = {n.name for n in lowered.graph.node}
    first = plan.stages[0]
    unit = next(st.unit for st in first if isinstance(st, Compute))
    assert unit in names or any(n.startswith(unit + "/re") for n in names)
    read = {x for n in lowered.graph.node for x in n.input} | {o.name for o in lowered.graph.output}
    for n in lowered.graph.node:
        assert any(o in read for o in n.output if o), f"{n.name} is lowered but nothing reads it"
