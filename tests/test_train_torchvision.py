"""``remc train`` on a torchvision model exported with ``torch.onnx.export``: the compiled step graph trains
under an arena cap equal to its budget, its losses equal the unmodified graph's step for step, and the
unmodified step graph does not fit that cap.

Needs torch and torchvision that import together (extra ``torchvision``). On this project's machines:
``pip install torch==2.14.1 torchvision==0.29.1`` (PyPI's builds, which link CUDA but run on CPU). PyPI's
torchvision wheels are built against PyPI's CUDA torch: torchvision 0.28.0 with the CPU-only torch
2.13.0+cpu fails at import ("operator torchvision::nms does not exist": its ``_C.so`` needs
``libc10_cuda.so``), and 0.29.x needs torch >= 2.14.
"""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
try:
    import torchvision
except Exception as exc:  # noqa: BLE001 - a mismatched build fails with RuntimeError/OSError, not ImportError
    pytest.skip(f"torchvision does not import: {exc}", allow_module_level=True)

pytestmark = pytest.mark.torch

BATCH, SIZE = 8, 96
BUDGET = "140MiB"
"""mobilenet_v2 (10 classes) at batch 8, 96x96, SGD with momentum: the unmodified step graph's least arena cap
measured 158.7 MiB on the 2-core machine (``remc train --least-cap``); lin-greedy's plan for 140 MiB
replays at 129.1 MiB on ONNX Runtime and measured an arena peak of 80.6 MiB under the 140 MiB cap."""


def remc(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "remc.cli", *args], capture_output=True, text=True, timeout=1200)


def export_mobilenet_v2(path: Path) -> None:
    """torchvision's mobilenet_v2 in training mode (BatchNormalization with training_mode=1, Dropout)."""
    torch.manual_seed(0)
    net = torchvision.models.mobilenet_v2(num_classes=10).train()
    x = torch.randn(BATCH, 3, SIZE, SIZE)
    torch.onnx.export(net, (x,), str(path), dynamo=False, training=torch.onnx.TrainingMode.TRAINING,
                      do_constant_folding=False, input_names=["x"], output_names=["y"])


def test_torchvision_mobilenet_v2_trains_under_the_cap(tmp_path: Path) -> None:
    fwd, train = tmp_path / "mnv2.onnx", tmp_path / "mnv2_train.onnx"
    export_mobilenet_v2(fwd)
    res = remc("grad", str(fwd), "-o", str(train))
    assert res.returncode == 0, res.stderr
    res = remc("train", str(train), "--steps", "3", "--optimizer", "sgd", "--lr", "0.01", "--budget", BUDGET,
               "--strategy", "lin-greedy", "--reference", "--json")
    assert res.returncode == 0, res.stderr
    rep = json.loads(res.stdout)
    assert rep["recomputes"] > 0 and rep["predicted_on_device"] <= rep["budget"] == rep["mem_limit"]
    assert rep["losses"] == rep["reference"]["losses"]              # same seeds, same masks, same sums
    assert len(set(rep["losses"])) == 3 and rep["losses"][-1] < rep["losses"][0]
    assert 0 < rep["arena_peak"] <= rep["budget"]
    assert rep["reference"]["fits_cap"] is False, rep["reference"]
    assert rep["reference"]["arena_peak"] > rep["budget"]
