"""Max batch size under a budget at <= one extra forward pass (passes/maxbatch.py, paper eq. 10)."""
from __future__ import annotations

import numpy as np
import pytest

from remc.ir.dag import DAG
from remc.ir.errors import InfeasibleError, RemcError
from remc.ir.schedule import checkpoint_all
from remc.passes.baselines import solve_baseline
from remc.passes.maxbatch import batch_dag, eq10_cost_limit, max_batch


def chain(length: int, mem_per_sample: int = 4, base_batch: int = 1, constant: int = 100) -> DAG:
    """f_0..f_{L-1} -> g_{L-1}..g_0; g_i uses g_{i+1} and f_i; unit costs, equal activations."""
    n = 2 * length
    g = [n - 1 - i for i in range(length)]
    edges = [(i, i + 1) for i in range(length - 1)] + [(g[i + 1], g[i]) for i in range(length - 1)]
    edges += [(i, g[i]) for i in range(length)]
    return DAG(tuple([f"f{i}" for i in range(length)] + [f"g{i}" for i in reversed(range(length))]), np.ones(n),
               np.full(n, mem_per_sample * base_batch), np.array(edges), constant, backward=np.arange(n) >= length)


def fits(dag: DAG, name: str, batch: int, budget: int, base: int = 1, per_sample: int = 0) -> bool:
    try:
        s = solve_baseline(name, batch_dag(dag, batch, base, per_sample), budget)
    except InfeasibleError:
        return False
    return s.cost(dag) <= eq10_cost_limit(dag)


def test_eq10_limit_and_scaling():
    dag = chain(5)
    assert eq10_cost_limit(dag) == 2 * 5 + 5
    big = batch_dag(dag, 6, 2, constant_per_sample=10)
    assert big.mem.tolist() == [12] * 10 and big.constant == 100 + 40 and big.cost.tolist() == dag.cost.tolist()


def test_checkpoint_all_batch_is_exact():
    """Checkpoint-all's peak is constant + B * (its peak at batch 1 - constant): the answer is a floor."""
    dag = chain(8)
    per_sample = checkpoint_all(dag).peak(dag) - dag.constant
    for budget in (150, 1000, 12345):
        b, sched = max_batch(dag, budget, "checkpoint-all", 1)
        assert b == (budget - dag.constant) // per_sample
        assert sched.report["peak"] <= budget and sched.report["batch"] == b


@pytest.mark.parametrize("name", ["checkpoint-all", "chen-sqrtn", "chen-greedy", "lin-greedy", "griewank"])
def test_found_batch_fits_and_next_does_not(name):
    dag = chain(16, base_batch=4)
    budget = 3000
    b, sched = max_batch(dag, budget, name, 4)
    assert fits(dag, name, b, budget, base=4) and not fits(dag, name, b + 1, budget, base=4)
    assert sched.report["peak"] <= budget and sched.report["cost"] <= eq10_cost_limit(dag)


def test_monotone_in_budget_and_rematerialization_helps():
    dag = chain(25)
    batches = [max_batch(dag, budget, "chen-greedy", 1)[0] for budget in (500, 1000, 2000, 4000)]
    assert batches == sorted(batches) and batches[0] < batches[-1]
    full = max_batch(dag, 4000, "checkpoint-all", 1)[0]
    sqrtn = max_batch(dag, 4000, "chen-sqrtn", 1)[0]
    assert sqrtn > 2 * full                                    # 25 layers kept vs ~2 sqrt(25)


def test_constant_per_sample_shrinks_the_batch():
    dag = chain(8, constant=1000)
    b0 = max_batch(dag, 5000, "chen-sqrtn", 1)[0]
    b1, s1 = max_batch(dag, 5000, "chen-sqrtn", 1, constant_per_sample=50)
    assert b1 < b0 and s1.report["peak"] <= 5000
    assert fits(dag, "chen-sqrtn", b1, 5000, per_sample=50) and not fits(dag, "chen-sqrtn", b1 + 1, 5000, per_sample=50)
    with pytest.raises(RemcError, match="exceeds the DAG's constant"):
        max_batch(dag, 5000, "chen-sqrtn", 1, constant_per_sample=2000)


def test_cost_limit_excludes_recomputing_schedules():
    dag = chain(9)
    with pytest.raises(InfeasibleError, match="costs at most"):
        max_batch(dag, 5000, "chen-sqrtn", 1, cost_limit=dag.total_cost)     # sqrt(n) recomputes
    b_free = max_batch(dag, 5000, "chen-greedy", 1, cost_limit=dag.total_cost)[0]
    assert b_free == max_batch(dag, 5000, "checkpoint-all", 1)[0]


def test_callable_strategy_gets_the_cost_limit():
    dag = chain(10)
    seen = []

    def strategy(d: DAG, budget: int, cost_limit: float):
        seen.append(cost_limit)
        return solve_baseline("lin-greedy", d, budget)
    b, _ = max_batch(dag, 2000, strategy, 1)
    assert b == max_batch(dag, 2000, "lin-greedy", 1)[0]
    assert seen and set(seen) == {eq10_cost_limit(dag)}

    def plain(d: DAG, budget: int):                             # no cost_limit: checked after the fact
        return solve_baseline("chen-sqrtn", d)
    assert max_batch(dag, 2000, plain, 1)[0] == max_batch(dag, 2000, "chen-sqrtn", 1)[0]


def test_infeasible_and_unbounded():
    dag = chain(6, constant=100)
    with pytest.raises(InfeasibleError, match="even batch 1"):
        max_batch(dag, 101, "chen-sqrtn", 1)
    with pytest.raises(RemcError, match="does not grow"):
        max_batch(chain(6, mem_per_sample=0), 1000, "checkpoint-all", 1, max_batch_size=1 << 10)


def test_inputs_grow_with_the_batch_by_default():
    """A DAG built from a graph scales its inputs (images, labels) with the batch unless told otherwise:
    dagbuild records the inputs' bytes, and the default per-sample constant is their share per sample."""
    import dataclasses
    dag = dataclasses.replace(chain(8, constant=1000), meta={"input_bytes": 2 * 60})   # built at batch 2
    assert batch_dag(dag, 6, 2).constant == 1000 + 60 * 4
    assert batch_dag(dag, 6, 2, constant_per_sample=0).constant == 1000
    b_default = max_batch(dag, 5000, "chen-sqrtn", 2)[0]
    assert b_default == max_batch(dag, 5000, "chen-sqrtn", 2, constant_per_sample=60)[0]
    assert b_default < max_batch(dag, 5000, "chen-sqrtn", 2, constant_per_sample=0)[0]
    measured = dataclasses.replace(dag, meta={**dag.meta, "constant_per_sample": 7})   # affine's, preferred
    assert batch_dag(measured, 3, 2).constant == 1007


def test_zoo_dag_records_its_inputs():
    from remc.maxbatch_cli import _dag_at
    from remc.passes.maxbatch import affine
    s1 = _dag_at("vgg16", 1, "flops", "coarse")
    s2 = _dag_at("vgg16", 2, "flops", "coarse", like=s1)
    image, labels = 3 * 224 * 224 * 4, 8
    assert s1.dag.meta["input_bytes"] == image + labels and s2.dag.meta["input_bytes"] == 2 * (image + labels)
    dag, per_sample = affine(s1.dag, s2.dag, 1, 2)
    assert per_sample == image + labels == dag.meta["constant_per_sample"]
    assert batch_dag(dag, 100, 1).constant == s1.dag.constant + 99 * per_sample


def test_search_from_a_start_batch_finds_the_same_answer():
    """``start`` only saves probes: from below, at, or above the answer the search ends at the same batch."""
    dag = chain(16, base_batch=4)
    want, _ = max_batch(dag, 3000, "lin-greedy", 4)
    for start in (1, want, want + 1, 4 * want):
        b, s = max_batch(dag, 3000, "lin-greedy", 4, start=start)
        assert b == want and s.report["peak"] <= 3000
    tried_from_1 = max_batch(dag, 3000, "lin-greedy", 1)[1].report["batches_tried"]
    assert max_batch(dag, 3000, "lin-greedy", 1, start=want)[1].report["batches_tried"] < tried_from_1


def test_paper_memory_model_vgg19():
    """tools/paper_memory_model.py: Checkmate's Keras graph of VGG19 (one node per layer, ReLU folded into
    Conv/Dense, backward nodes as large as their layer's output, 2 x 4 bytes per parameter fixed, 16 GB):
    checkpoint-all fits batch 222, lin-greedy 289, the batch the paper reports for Checkmate on VGG19."""
    import importlib.util
    from pathlib import Path
    path = Path(__file__).resolve().parents[1] / "tools" / "paper_memory_model.py"
    spec = importlib.util.spec_from_file_location("paper_memory_model", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    dag = mod.paper_dag("vgg19")
    layers = (dag.n - 1) // 2
    assert layers == 16 + 5 + 1 + 3 + 2                       # convs, pools, flatten, dense, dropouts
    assert dag.mem[:layers].tolist() == dag.mem[layers + 1:][::-1].tolist()
    assert 0 <= dag.constant // 8 - 143667240 < 8      # Keras' VGG19 count, plus the graph's scalar constants
    assert batch_dag(dag, 10, 1).constant == dag.constant
    assert max_batch(dag, mod.PAPER_BUDGET, "checkpoint-all", 1)[0] == 222
    assert max_batch(dag, mod.PAPER_BUDGET, "lin-greedy", 1)[0] == 289


def test_forward_model_gets_its_training_graph_at_each_batch(tmp_path) -> None:
    """A forward model with a symbolic batch (what a user exports with a dynamic batch axis) is differentiated
    at each probed batch, as `remc grad --batch` would; it was scheduled as a forward graph before, which has
    no backward pass and so a far larger, wrong max batch. A training graph with a static batch gets a message
    that says what to give instead."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    from remc.ir.errors import ModelError
    from remc.maxbatch_cli import _dag_at, run_maxbatch
    from remc.passes.grad import build_training_graph

    rng = np.random.default_rng(0)
    w1 = numpy_helper.from_array(rng.standard_normal((64, 256)).astype(np.float32), "w1")
    w2 = numpy_helper.from_array(rng.standard_normal((256, 10)).astype(np.float32), "w2")
    nodes = [helper.make_node("MatMul", ["x", "w1"], ["h"], name="fc1"),
             helper.make_node("Relu", ["h"], ["a"], name="relu"),
             helper.make_node("MatMul", ["a", "w2"], ["y"], name="fc2")]
    g = helper.make_graph(nodes, "mlp", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 64])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 10])], [w1, w2])
    fwd = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    path = tmp_path / "mlp.onnx"
    onnx.save(fwd, path)
    for b in (1, 2):  # the same DAG as the training graph remc grad builds at that batch
        got = _dag_at(str(path), b, "flops", "fine").dag
        want = _dag_at_proto(build_training_graph(fwd, batch=b))
        assert got.n == want.n and checkpoint_all(got).peak(got) == checkpoint_all(want).peak(want)
    budget = 4 << 20
    rep = run_maxbatch(str(path), budget, "checkpoint-all", granularity="fine")
    assert rep["training_graph"] == "built by remc grad, loss cross-entropy" and rep["batch"] >= 1
    at = _dag_at_proto(build_training_graph(fwd, batch=rep["batch"] + 1))
    assert checkpoint_all(at).peak(at) > budget  # the next batch's training graph does not fit
    static = tmp_path / "train.onnx"
    onnx.save(build_training_graph(fwd, batch=4), static)
    with pytest.raises(ModelError, match="needs a symbolic batch dimension"):
        run_maxbatch(str(static), budget, "checkpoint-all", granularity="fine")


def _dag_at_proto(model):
    from remc.pipeline import State, compile_pipeline, run, stages
    return run(stages(compile_pipeline(cost="flops", granularity="fine"), last="units"), State(model=model)).dag
