"""Random nodes get fixed seeds in training graphs, so compiled graphs compare exactly with the original."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper

from remc import zoo
from remc.passes.random_ops import RANDOM_OPS, random_outputs, seed_random_ops, unseeded_random_nodes


def remc(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "remc.cli", *args], capture_output=True, text=True,
                          timeout=600, cwd=cwd)


def _one_op_model(op: str) -> onnx.ModelProto:
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [32, 32])
    y = helper.make_tensor_value_info("y", TensorProto.INT32 if op == "Multinomial" else TensorProto.FLOAT, None)
    inits, nodes = [], []
    if op == "Dropout":
        inits = [helper.make_tensor("r", TensorProto.FLOAT, [], [0.5]),
                 helper.make_tensor("t", TensorProto.BOOL, [], [True])]
        nodes = [helper.make_node("Dropout", ["x", "r", "t"], ["y"], name="d")]
    elif op in ("RandomUniform", "RandomNormal"):
        nodes = [helper.make_node(op, [], ["y"], shape=[32, 32], name="r")]
    elif op == "Bernoulli":
        nodes = [helper.make_node("Sigmoid", ["x"], ["p"]), helper.make_node("Bernoulli", ["p"], ["y"], name="b")]
    elif op == "Multinomial":
        nodes = [helper.make_node("Multinomial", ["x"], ["y"], sample_size=4, name="m")]
    else:
        nodes = [helper.make_node(op, ["x"], ["y"], name="r")]
    g = helper.make_graph(nodes, "g", [x], [y], inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)


@pytest.mark.parametrize("op", sorted(RANDOM_OPS))
def test_onnxruntime_honours_the_seed_attribute(op: str) -> None:
    """Two fresh sessions of a seeded random op draw the same numbers, run after run, and the draws
    advance from run to run (so a training loop gets new masks each step)."""
    model = _one_op_model(op)
    assert seed_random_ops(model, 3) and not unseeded_random_nodes(model)
    x = np.random.default_rng(0).standard_normal((32, 32)).astype(np.float32)
    runs = []
    for _ in range(2):
        sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
        runs.append([sess.run(None, {"x": x})[0] for _ in range(2)])
    assert all(np.array_equal(a, b) for a, b in zip(*runs))
    assert not np.array_equal(runs[0][0], runs[0][1])


def test_seed_attribute_types_and_override() -> None:
    m = onnx.parser.parse_model("""<ir_version: 8, opset_import: ["" : 17]>
    g (float[4] x) => (float[4] y, float[4] z, float[4] w) {
        a, mask = Dropout <seed = 5> (x)
        u = RandomUniformLike (x)
        y = Add (a, u)
        z = Relu (x)
        w = Mul (z, u)
    }""")
    assert unseeded_random_nodes(m) == ["RandomUniformLike_1"]
    assert seed_random_ops(m, 0) == ["RandomUniformLike_1"]
    seeds = {n.op_type: helper.get_attribute_value(n.attribute[0]) for n in m.graph.node if n.attribute}
    assert seeds["Dropout"] == 5 and isinstance(seeds["RandomUniformLike"], float)
    assert seed_random_ops(m, 1, override=True) == ["Dropout_0", "RandomUniformLike_1"]
    assert random_outputs(m) == {"y": ["Dropout_0", "RandomUniformLike_1"], "w": ["RandomUniformLike_1"]}


def test_training_graph_seeds_every_random_node() -> None:
    cfg = {k: v for k, v in zoo.small_config("gpt2").items() if k != "batch"}
    fwd = zoo.build("gpt2", 2, **cfg)
    for n in fwd.graph.node:  # as a torch export would have them: no seeds
        if n.op_type == "Dropout":
            del n.attribute[:]
    from remc.passes.grad import build_training_graph
    a = build_training_graph(fwd)
    b = build_training_graph(fwd, seed=7)
    assert not unseeded_random_nodes(a) and any(n.op_type == "Dropout" for n in a.graph.node)
    seeds = [[helper.get_attribute_value(x) for n in m.graph.node if n.op_type == "Dropout"
              for x in n.attribute if x.name == "seed"] for m in (a, b)]
    assert len(set(seeds[0])) == len(seeds[0]) and seeds[0] != seeds[1]


def _compile_and_compare(train: Path, budget: str, tmp: Path) -> dict:
    out = tmp / "out.onnx"
    res = remc("compile", "--cost", "flops", "--no-fit", str(train), "--budget", budget, "-o", str(out), "--strategy", "checkmate",
               "--time-limit", "60", "--json")
    assert res.returncode == 0, res.stderr
    assert json.loads(res.stdout)["recomputes"] > 0
    res = remc("run", str(out), "--compare", str(train), "--iters", "2", "--json")
    assert res.returncode == 0, res.stderr
    return json.loads(res.stdout)


def test_zoo_dropout_compiled_graph_compares_exactly(tmp_path: Path) -> None:
    train = tmp_path / "vgg.onnx"
    assert remc("zoo", "export", "vgg16", "--size", "small", "--batch", "2", "--train", "-o", str(train)).returncode == 0
    # 680 KiB: checkpoint-all needs 699589 bytes in remc's model (733397 with the gradients held from the start)
    rep = _compile_and_compare(train, "680KiB", tmp_path)
    assert rep["outputs_match"] and "(||a-b|| 0," in rep["compare_worst"]
    assert rep["random_nodes"] == ["fc1/dropout", "fc2/dropout"] and "loss" in rep["random_outputs"]
    assert rep["unseeded_random_nodes"] == []


def test_unseeded_dropout_is_reported(tmp_path: Path) -> None:
    """Without seeds two sessions of the same graph differ, and the error names the cause."""
    train = tmp_path / "vgg.onnx"
    assert remc("zoo", "export", "vgg16", "--size", "small", "--batch", "2", "--train", "-o", str(train)).returncode == 0
    m = onnx.load(train)
    for n in m.graph.node:
        if n.op_type == "Dropout":
            del n.attribute[:]
    onnx.save(m, train)
    res = remc("run", str(train), "--compare", str(train), "--iters", "1")
    assert res.returncode != 0 and "Traceback" not in res.stderr
    assert "no seed attribute" in res.stderr and "fc1/dropout" in res.stderr


STOCHASTIC_DEPTH_NET = '''
import sys, torch, torch.nn as nn

def stochastic_depth(x, p):
    """torchvision.ops.stochastic_depth(x, p, mode="row", training=True), written out."""
    noise = torch.empty([x.shape[0]] + [1] * (x.ndim - 1), dtype=x.dtype).bernoulli_(1.0 - p)
    return x * noise.div_(1.0 - p)

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.c1, self.c2, self.c3 = (nn.Conv2d(3 if i == 0 else 8, 8, 3, padding=1) for i in range(3))
        self.drop, self.fc = nn.Dropout(0.3), nn.Linear(8, 5)
    def forward(self, x):
        x = torch.relu(self.c1(x))
        x = x + stochastic_depth(torch.relu(self.c2(x)), 0.2)
        x = x + stochastic_depth(torch.relu(self.c3(x)), 0.2)
        return self.fc(self.drop(x.mean((2, 3))))

torch.manual_seed(0)
torch.onnx.export(Net().train(), (torch.randn(4, 3, 16, 16),), sys.argv[1], dynamo=False,
                  training=torch.onnx.TrainingMode.TRAINING, do_constant_folding=False,
                  input_names=["x"], output_names=["logits"])
'''


@pytest.mark.torch
def test_torch_stochastic_depth_compiled_graph_compares_exactly(tmp_path: Path) -> None:
    pytest.importorskip("torch")
    fwd, train = tmp_path / "sd.onnx", tmp_path / "sd_train.onnx"
    res = subprocess.run([sys.executable, "-c", STOCHASTIC_DEPTH_NET, str(fwd)], capture_output=True, text=True,
                         timeout=600)
    assert res.returncode == 0, res.stderr
    ops = [n.op_type for n in onnx.load(fwd).graph.node]
    assert ops.count("RandomUniformLike") == 2 and "Dropout" in ops
    assert remc("grad", str(fwd), "-o", str(train)).returncode == 0
    rep = _compile_and_compare(train, "200KiB", tmp_path)
    assert rep["outputs_match"] and "(||a-b|| 0," in rep["compare_worst"]
    assert len(rep["random_nodes"]) == 3 and rep["unseeded_random_nodes"] == []
