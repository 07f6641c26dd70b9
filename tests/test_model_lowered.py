"""remc's live-bytes model of a plan against what its lowered graph keeps live on ONNX Runtime.

``tools/model_vs_lowered.py`` compares the two node by node on a compiled model.

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


def test_every_output_is_read_or_released() -> None:
    """The Split in ``unet_train`` is recomputed for one of its parts: the other, a required output, gets an
    Identity reader (else ONNX Runtime would keep it to the end of the run)."""
    graph, _, plan = keep_nothing("unet_train")
    lowered = lower(graph, plan)
    read = {x for n in lowered.graph.node for x in n.input} | {o.name for o in lowered.graph.output}
    released = [n for n in lowered.graph.node if n.op_type == "Identity" and "/release" in n.name]
    assert released, "the partly read Split copy got no Identity"
    for n in lowered.graph.node:
        if n in released:
            continue
        assert all(o in read for o in n.output if o), f"{n.name} has an output nothing reads"


def test_identity_releases_an_unread_output_on_onnx_runtime() -> None:
    """Measured: a LayerNormalization whose Y nothing reads holds Y to the end of the run; an Identity reading
    Y frees it when it ends. ONNX Runtime's peak in use equals ``passes.arena``'s replay in both."""
    from onnx import TensorProto
    from onnx import helper as h

    from remc.backends import runtime
    from remc.passes.arena import replay

    n = 1 << 16
    def model(release: bool) -> onnx.ModelProto:
        nodes = [h.make_node("LayerNormalization", ["x", "g", "b"], ["y", "mean"], axis=-1, name="ln")]
        nodes += [h.make_node("Identity", ["y"], ["y/released"], name="ln/release0")] if release else []
        nodes += [h.make_node("ReduceSum", ["mean"], ["s1"], keepdims=0, name="rs1"),
                  h.make_node("Relu", ["x"], ["big"], name="relu"), h.make_node("Neg", ["big"], ["big2"], name="neg"),
                  h.make_node("ReduceSum", ["big2"], ["s2"], keepdims=0, name="rs2")]
        g = h.make_graph(nodes, "ln", [h.make_tensor_value_info("x", TensorProto.FLOAT, [4, n // 4])],
                         [h.make_tensor_value_info(s, TensorProto.FLOAT, []) for s in ("s1", "s2")],
                         [h.make_tensor(w, TensorProto.FLOAT, [n // 4], np.full(n // 4, v, np.float32))
                          for w, v in (("g", 1.0), ("b", 0.0))])
        return h.make_model(g, opset_imports=[h.make_opsetid("", 17)])
    feeds = {"x": np.random.default_rng(0).random((4, n // 4), dtype=np.float32)}
    peaks = {}
    for release in (False, True):
        m = model(release)
        measured = runtime.profiler_peak(m, "cpu", feeds=feeds).peak
        assert measured == replay(graph_events(m, "cpu"), runtime.arena_config("cpu")).peak_in_use
        peaks[release] = measured
    assert peaks[True] <= peaks[False] - 4 * n  # Y (4 n bytes) no longer held beside the later tensors


@pytest.mark.parametrize("name", ["unet", "vit"])
def test_zoo_keep_nothing_lowered_holds_no_more_than_the_model(name: str) -> None:
    """Test-size zoo models on coarse units, nothing kept across stages (every unit recomputed for each later
    reader): at every lowered node the arena tensors are within remc's model (``passes.livecheck``). U-Net's
    Concat gradients are Splits, ViT's LayerNormalizations have Mean/InvStdDev. On main: 7200 nodes over on
    U-Net (first ``block1/conv1/re3`` beside an unread ``block1/pool``), 12978 on ViT."""
    from remc import zoo
    from remc.passes.coarsen import coarse_units
    from remc.passes.livecheck import compare, lowered_excess

    cfg = {k: v for k, v in zoo.small_config(name).items() if k != "batch"}
    graph = import_model(zoo.export(name, 2, train=True, **cfg))
    units = coarse_units(graph)
    dag = build_dag(graph, {n.name: 1.0 for n in graph.nodes}, units, granularity="coarse")
    S = pin_no_recompute(dag, np.zeros((dag.n, dag.n), dtype=bool))
    plan = generate_plan(dag, Schedule(solve_r(dag, S), S, strategy="keep-nothing"), graph_name=name)
    rows = compare(graph, plan, lower(graph, plan))
    over = lowered_excess(rows)
    assert not over, f"{len(over)} nodes: first {over[0].node} holds {over[0].extra[:3]} beyond the model"
