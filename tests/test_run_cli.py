"""`remc run` and `remc compile --cost profile` end to end on a small zoo training graph."""
from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import onnx
import pytest

from remc import zoo
from remc.backends import runtime


def remc(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "remc.cli", *args], capture_output=True, text=True, timeout=600)


@pytest.fixture(scope="module")
def compiled(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("run")
    train = d / "train.onnx"
    res = remc("zoo", "export", "vgg16", "--size", "small", "--batch", "2", "--train", "-o", str(train))
    assert res.returncode == 0, res.stderr
    out, plan = d / "out.onnx", d / "out.plan"
    res = remc("compile", "--cost", "flops", str(train), "--budget", "1300000", "-o", str(out), "--plan", str(plan),
               "--strategy", "lin-greedy", "--cost", "profile", "--json")
    assert res.returncode == 0, res.stderr
    return {"train": train, "out": out, "plan": plan, "dir": d, "report": json.loads(res.stdout)}


def test_run_reports_measured_and_predicted(compiled: dict) -> None:
    res = remc("run", str(compiled["out"]), "--compare", str(compiled["train"]), "--plan", str(compiled["plan"]),
               "--iters", "2", "--json")
    assert res.returncode == 0, res.stderr
    rep = json.loads(res.stdout)
    for key in ("measured_peak", "predicted_peak", "median_seconds", "predicted_cost", "outputs_match"):
        assert rep[key] is not None, key
    assert rep["outputs_match"] is True
    assert rep["predicted_held"] == compiled["report"]["arena_predicted"] <= 1300000
    assert rep["predicted_cost"] == pytest.approx(compiled["report"]["cost"])
    # --plan runs under a cap of the plan's budget; the replayed arena predicts the bytes in use exactly
    assert rep["mem_limit"] == 1300000 and rep["measured_peak"] <= 1300000
    assert rep["measured_peak"] == rep["predicted_peak"]


def test_run_detects_different_outputs(compiled: dict, tmp_path: Path) -> None:
    model = onnx.load(compiled["out"])
    for t in model.graph.initializer:
        if t.name == "fc1.weight" or (t.dims and len(t.dims) == 2):
            arr = onnx.numpy_helper.to_array(t) * 1.5
            t.CopyFrom(onnx.numpy_helper.from_array(arr, t.name))
            break
    bad = tmp_path / "bad.onnx"
    onnx.save(model, bad)
    res = remc("run", str(bad), "--compare", str(compiled["train"]), "--iters", "1")
    assert res.returncode != 0 and "Traceback" not in res.stderr and "differ" in res.stderr


@pytest.mark.skipif(runtime.cuda_available(), reason="this machine has a CUDA provider")
def test_run_cuda_without_provider(compiled: dict) -> None:
    res = remc("run", str(compiled["out"]), "--device", "cuda")
    assert res.returncode != 0 and "Traceback" not in res.stderr and "CUDAExecutionProvider" in res.stderr


def test_run_under_a_limit_it_cannot_fit(compiled: dict) -> None:
    res = remc("run", str(compiled["train"]), "--mem-limit", "64KiB", "--iters", "1")
    assert res.returncode != 0 and "Traceback" not in res.stderr and "memory" in res.stderr


def test_plan_show_prints_the_arena(compiled: dict) -> None:
    res = remc("plan", "show", str(compiled["plan"]))
    assert res.returncode == 0, res.stderr
    assert "arena" in res.stdout and "fragmentation" in res.stdout
    assert zoo.list_models()  # the zoo is importable alongside


def test_run_refuses_a_plan_of_another_compile(compiled: dict, tmp_path: Path) -> None:
    """The compiled model records the digest of its plan: `remc run --plan` with another compile's plan (here
    the same plan at another budget) says so instead of running under that plan's cap; the unmodified graph,
    which records none, still runs under a plan's budget, and the output says the plan only gave the cap."""
    text = compiled["plan"].read_text()
    other = tmp_path / "other.plan"
    other.write_text(re.sub(r"^budget (\d+)", lambda m: f"budget {int(m.group(1)) + 4096}", text, count=1, flags=re.M))
    res = remc("run", str(compiled["out"]), "--plan", str(other), "--iters", "1")
    assert res.returncode != 0 and "Traceback" not in res.stderr
    assert "was not compiled from" in res.stderr and str(other) in res.stderr, res.stderr
    res = remc("run", str(compiled["train"]), "--plan", str(compiled["plan"]), "--iters", "1", "--mem-limit", "8MiB")
    assert res.returncode == 0, res.stderr
    assert "the model records no plan" in res.stdout
