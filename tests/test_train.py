"""remc train: the optimizer pass (SGD with momentum, AdamW) against torch.optim, and training steps of a
compiled graph whose losses match the unmodified graph's step for step."""
from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest

from remc import zoo
from remc.backends.trainer import Trainer, split_state
from remc.ir.errors import ModelError
from remc.passes.grad import build_training_graph
from remc.passes.optimizer import OptimizerOptions, append_optimizer, memory_parts, state_inputs


def remc(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "remc.cli", *args], capture_output=True, text=True, timeout=900)


def _small_train(name: str = "vgg16", batch: int = 2) -> onnx.ModelProto:
    cfg = {k: v for k, v in zoo.small_config(name).items() if k != "batch"}
    return zoo.export(name, batch, train=True, **cfg)


def test_step_graph_interface() -> None:
    train = _small_train()
    step = append_optimizer(train, OptimizerOptions("adamw"))
    params = [o.name[5:] for o in train.graph.output if o.name.startswith("grad.")]
    carried = state_inputs(step)
    assert set(carried) == set(params) | {f"{p}.exp_avg" for p in params} | {f"{p}.exp_avg_sq" for p in params} \
        | {"optimizer.step"}
    outs = [o.name for o in step.graph.output]
    assert outs[0] == "loss" and not any(o.startswith("grad.") for o in outs)
    old = {n.name for n in train.graph.node}
    new = [k for k, n in enumerate(step.graph.node) if n.name not in old]
    assert all("/grad/" in step.graph.node[k].name for k in new)
    # each update follows the node completing its gradient, not the end of the backward pass
    pos = {o: k for k, n in enumerate(step.graph.node) for o in n.output}
    first_update = min(k for k in new if "/grad/optimizer" in step.graph.node[k].name)
    assert first_update < len(train.graph.node) - 1
    assert all(pos[f"{p}.updated"] > pos[f"grad.{p}"] for p in params)
    parts = memory_parts(step)
    weights = sum(int(np.prod(t.dims)) * 4 for t in train.graph.initializer if t.name in params)
    assert parts["weights"] == weights == parts["gradients"]
    assert parts["optimizer_state"] == 2 * weights + 4 and parts["updated"] == 3 * weights + 4
    with pytest.raises(ModelError, match="already has an optimizer"):
        append_optimizer(step, OptimizerOptions("adamw"))
    with pytest.raises(ModelError, match="unknown optimizer"):
        append_optimizer(train, OptimizerOptions("lion"))


def _torch_reference(opt_name: str, steps: int):  # noqa: ANN202
    torch = pytest.importorskip("torch")
    nn = torch.nn
    torch.manual_seed(0)
    net = nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.ReLU(), nn.Flatten(), nn.Linear(4 * 6 * 6, 5)).train()
    x = torch.randn(3, 3, 6, 6)
    y = torch.tensor([0, 3, 4])
    buf = io.BytesIO()
    torch.onnx.export(net, (x,), buf, dynamo=False, training=torch.onnx.TrainingMode.TRAINING,
                      do_constant_folding=False, input_names=["x"], output_names=["logits"])
    model = onnx.load_from_string(buf.getvalue())
    opts = (OptimizerOptions("sgd", lr=0.1, momentum=0.9, weight_decay=0.01) if opt_name == "sgd" else
            OptimizerOptions("adamw", lr=0.01, weight_decay=0.1))
    opt = (torch.optim.SGD(net.parameters(), lr=0.1, momentum=0.9, weight_decay=0.01) if opt_name == "sgd" else
           torch.optim.AdamW(net.parameters(), lr=0.01, weight_decay=0.1))
    losses = []
    for _ in range(steps):
        opt.zero_grad()
        loss = nn.functional.cross_entropy(net(x), y)
        loss.backward()
        opt.step()
        losses.append(float(loss))
    weights = {k: v.detach().numpy() for k, v in net.state_dict().items()}
    return model, opts, {"x": x.numpy(), "labels": y.numpy()}, losses, weights


@pytest.mark.torch
@pytest.mark.parametrize("opt_name", ["sgd", "adamw"])
def test_optimizer_matches_torch(opt_name: str) -> None:
    model, opts, feeds, losses, weights = _torch_reference(opt_name, 4)
    step = append_optimizer(build_training_graph(model), opts)
    trainer = Trainer(step)
    got = [trainer.step(feeds) for _ in range(4)]
    np.testing.assert_allclose(got, losses, rtol=1e-5)
    state = trainer.state_numpy()
    for name, w in weights.items():
        np.testing.assert_allclose(state[name], w, rtol=1e-4, atol=1e-6, err_msg=name)


def test_split_state_strips_carried_initializers() -> None:
    step = append_optimizer(_small_train(), OptimizerOptions("sgd"))
    stripped, init = split_state(step)
    names = {t.name for t in stripped.graph.initializer}
    assert not names & set(init) and all(not v.any() for k, v in init.items() if k.endswith(".momentum"))


def test_fixed_buffers_train_like_fresh_bindings() -> None:
    """The fixed-buffer loop (what CUDA graph capture replays: two state sets alternating, data and outputs
    at fixed addresses) gives the same losses and state as binding fresh outputs every step, and its buffers
    outside the arena count against the cap."""
    from remc.backends.runtime import OutOfMemory, random_inputs
    from remc.backends.trainer import train
    step = append_optimizer(_small_train("resnet50"), OptimizerOptions("sgd", lr=0.05))
    feeds = lambda k: random_inputs(step, k % 2)  # noqa: E731
    fresh = train(step, feeds, 5)
    fixed = train(step, feeds, 5, fixed_buffers=True)
    assert fixed.losses == fresh.losses and len(set(fresh.losses)) == 5
    a, b = Trainer(step), Trainer(step, fixed_buffers=True)
    for k in range(3):
        a.step(feeds(k))
        b.step(feeds(k))
    sa, sb = a.state_numpy(), b.state_numpy()
    assert sa.keys() == sb.keys() and all(np.array_equal(sa[n], sb[n]) for n in sa)
    with pytest.raises(OutOfMemory, match="fixed buffers"):
        Trainer(step, fixed_buffers=True, mem_limit=b.fixed_bytes)
    with pytest.raises(ModelError, match="needs --device cuda"):
        Trainer(step, cuda_graph=True)


@pytest.mark.parametrize("placement", ["remc", "arena"])
def test_train_compiled_graph_matches_unmodified_step_for_step(tmp_path: Path, placement: str) -> None:
    """ResNet50 (test size, batch 8) compiled for a 2.8 MiB budget and trained 4 steps under a cap equal to
    the budget: the compiled step recomputes, its predicted need fits the budget, its losses equal the
    unmodified graph's step for step, and the unmodified step graph runs out of memory under the same cap.
    On remc's placement (the default; ``backends.capi``) the measured peak (remc's buffer's high-water mark
    plus the fixed buffers) is the layout's prediction to the byte, every allocation at its planned offset,
    and the unmodified step runs out of memory on both remc's allocator and the arena; on the arena
    (``--placement arena``) the arena's peak is within the budget (the unmodified step's least cap there:
    3076096 bytes = 2.93 MiB). lin-greedy, a deterministic strategy: what this test checks is the training
    loop under the cap, not a solver (with the capped CPU arena one region of the cap, approx's plans at
    this size fragment it past the unmodified graph's need; BENCHMARKS, issue 11)."""
    train = tmp_path / "resnet.onnx"
    assert remc("zoo", "export", "resnet50", "--size", "small", "--batch", "8", "--train", "-o", str(train)).returncode == 0
    out = tmp_path / "step.onnx"
    res = remc("train", str(train), "--steps", "4", "--budget", "2.8MiB", "--strategy", "lin-greedy",
               "--reference", "--json", "-o", str(out), "--placement", placement)
    assert res.returncode == 0, res.stderr
    rep = json.loads(res.stdout)
    assert rep["recomputes"] > 0 and rep["predicted_on_device"] <= rep["budget"] == rep["mem_limit"]
    assert rep["losses"] == rep["reference"]["losses"]
    assert rep["reference"]["fits_cap"] is False, rep["reference"]
    assert len(set(rep["losses"])) == 4
    if placement == "remc":
        assert rep["device_model"] == "remc's layout" and rep["loop"] == "fixed buffers"
        assert rep["measured_peak"] == rep["placed_peak"] == rep["predicted_in_use"] <= rep["budget"], rep
        st = rep["placement"]
        assert st["planned"] == st["calls"] > 0 and st["fallback"] == st["rejected"] == 0, st
        assert rep["reference"]["fits_cap_arena"] is False, rep["reference"]
    else:
        assert rep["device_model"] == "replayed arena" and rep.get("placed_peak") is None
        assert 0 < rep["arena_peak"] <= rep["budget"]
    assert "optimizer.step" in state_inputs(onnx.load(out))


def test_placed_cpu_loop_trains_like_the_arena_and_follows_its_layout() -> None:
    """The fixed-buffer loop on remc's CPU placement (``backends.capi``: state, data and outputs in numpy
    buffers the C-API session reads and writes in place, every other tensor in remc's buffer) gives the
    losses and state of the loop on ONNX Runtime's arena bit for bit; every request lands at its planned
    offset, the buffer's high-water mark is the layout's height ``predict_loop`` predicts, and the peak is
    that plus the fixed buffers. A cap one 256-byte block below the prediction runs out of memory (a one-line
    OutOfMemory, no crash), as does a cap that does not hold the fixed buffers."""
    from remc.backends import capi
    from remc.backends.runtime import DeviceSettings, OutOfMemory, random_inputs
    from remc.fit import predict_loop
    if not capi.available():
        pytest.skip("ONNX Runtime's C library cannot be driven here")
    step = append_optimizer(_small_train("resnet50"), OptimizerOptions("adamw", lr=0.01))
    feeds = lambda k: random_inputs(step, k % 2)  # noqa: E731
    pred = predict_loop(step, "cpu", 3)
    assert pred.placement == "remc"
    placed = Trainer(step, mem_limit=pred.total)
    arena = Trainer(step, mem_limit=4 * pred.total, fixed_buffers=True, settings=DeviceSettings(placement="arena"))
    assert placed.allocator is not None and placed.host_buffers and arena.allocator is None
    losses = [(placed.step(feeds(k)), arena.step(feeds(k))) for k in range(3)]
    assert all(a == b for a, b in losses) and len({a for a, _ in losses}) == 3, losses
    sp, sa = placed.state_numpy(), arena.state_numpy()
    assert sp.keys() == sa.keys() and all(np.array_equal(sp[n], sa[n]) for n in sp)
    st = placed.placement_stats
    assert st["planned"] == st["calls"] > 0 and st["fallback"] == 0, st
    assert placed.placed_peak == pred.peak_total == pred.total and st["high_water"] == pred.arena
    with pytest.raises(OutOfMemory, match="out of memory on cpu"):
        tight = Trainer(step, mem_limit=pred.total - 256)
        for k in range(3):
            tight.step(feeds(k))
    with pytest.raises(OutOfMemory, match="fixed buffers"):
        Trainer(step, mem_limit=placed.fixed_bytes)


def test_train_bad_input(tmp_path: Path) -> None:
    fwd = tmp_path / "fwd.onnx"
    cfg = {k: v for k, v in zoo.small_config("vgg16").items() if k != "batch"}
    onnx.save(zoo.build("vgg16", 1, **cfg), fwd)
    for args, msg in [(["--steps", "0"], "--steps must be >= 1"), (["--device", "gpu"], "unknown device 'gpu'"),
                      (["--lr", "-1"], "learning rate must be > 0"), ([], "no grad.<parameter> outputs")]:
        res = remc("train", str(fwd), *args)
        assert res.returncode != 0 and msg in res.stderr and "Traceback" not in res.stderr, (args, res.stderr)


def test_infeasible_budget_names_the_parts(tmp_path: Path) -> None:
    train = tmp_path / "vgg.onnx"
    assert remc("zoo", "export", "vgg16", "--size", "small", "--batch", "8", "--train", "-o", str(train)).returncode == 0
    res = remc("compile", "--cost", "flops", str(train), "--budget", "1MiB", "--strategy", "lin-greedy", "-o", str(tmp_path / "x.onnx"))
    assert res.returncode != 0 and "Traceback" not in res.stderr
    assert ("held by every schedule (inputs and parameters from the start, outputs from their computation on): data "
            "inputs 96.1 KiB, parameters 235.8 KiB, gradients 235.4 KiB, loss and other outputs 4 B (together "
            "567.3 KiB)") in res.stderr
    assert "no schedule of this graph can need less than" in res.stderr  # the activations' part of the bound
    res = remc("train", str(train), "--budget", "1MiB", "--strategy", "lin-greedy")
    assert res.returncode != 0 and "Traceback" not in res.stderr
    assert ("always resident: data inputs 96.1 KiB, parameters 235.8 KiB, optimizer state 470.9 KiB, updated weights "
            "and state 706.3 KiB, loss and other outputs 4 B (together 1.5 MiB)") in res.stderr, res.stderr
    assert "no schedule of this graph can need less than" in res.stderr, res.stderr


def test_constant_parts_add_up_to_the_dag_constant() -> None:
    """The parts compile names when a budget is infeasible are the whole constant overhead and the kept outputs
    (held from their computation on, ``DAG.kept``), no more."""
    from remc.pipeline import State, compile_pipeline, constant_parts, run, stages
    train = _small_train()
    for model in (train, append_optimizer(train, OptimizerOptions("adamw"))):
        state = run(stages(compile_pipeline(), last="units"), State(model=model))
        parts = constant_parts(state.graph)
        assert sum(parts.values()) == state.dag.constant + state.dag.kept.sum()
        assert parts["parameters"] > 0 and parts["data"] > 0
    assert parts["optimizer_state"] == memory_parts(model)["optimizer_state"] and parts["gradients"] == 0
    assert parts["updated"] == memory_parts(model)["updated"]


@pytest.mark.parametrize(("opt_name", "fixed"), [("sgd", True), ("adamw", True), ("sgd", False), ("adamw", False)])
def test_training_loop_replay_is_the_measured_arena(opt_name: str, fixed: bool) -> None:
    """The replay of remc train's loop predicts, at every cap, the step at which ONNX Runtime runs out of
    memory, and the least cap the same search finds, to the byte: measured by running the steps under each
    cap. Both loops: fixed buffers (state, data and outputs outside the arena, every step the same) and
    fresh outputs (the carried state is the arena's from the second step on, the data outside it), where
    caps around the need include ones that fail only after a few steps (the state drifts)."""
    import dataclasses

    from remc.backends import runtime
    from remc.backends.runtime import OutOfMemory, random_inputs
    from remc.backends.trainer import least_cap, train_events
    from remc.fit import predict_loop
    from remc.passes.arena import replay
    step = append_optimizer(_small_train("resnet50", 4), OptimizerOptions(opt_name))
    feeds = lambda k: random_inputs(step, 0)  # noqa: E731
    steps = 5
    arena = runtime.DeviceSettings(placement="arena")
    pred = predict_loop(step, "cpu", steps, fixed_buffers=fixed, settings=arena)
    assert least_cap(step, feeds, "cpu", steps=steps, fixed_buffers=fixed, settings=arena) == pred.total
    ev, carried, outside = train_events(step, "cpu", fixed_buffers=fixed)
    cfg = runtime.arena_config("cpu")
    ran_out = []
    for cap in range(pred.total - 40960, pred.total + 40960, 8192):
        rp = replay(ev, dataclasses.replace(cfg, limit=cap - outside), runs=steps, carried=carried)
        replayed = steps if rp.fits else rp.runs - 1
        measured = 0
        try:
            trainer = Trainer(step, mem_limit=cap, fixed_buffers=fixed, settings=arena)
            for k in range(steps):
                trainer.step(feeds(k))
                measured += 1
        except OutOfMemory:
            pass
        assert replayed == measured, (cap, replayed, measured)
        ran_out.append(measured)
    assert min(ran_out) < steps == max(ran_out)
