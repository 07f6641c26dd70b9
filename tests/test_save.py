"""Every ONNX file remc writes loads in plain ONNX Runtime from any working directory."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest

from remc import zoo
from remc.ir import onnx_io
from remc.ir.errors import ModelError


def remc(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "remc.cli", *args], capture_output=True, text=True,
                          timeout=600, cwd=cwd)


def _load_elsewhere(path: Path, cwd: Path) -> subprocess.CompletedProcess:
    code = ("import sys, onnxruntime as ort; s = ort.InferenceSession(sys.argv[1]); "
            "print(len(s.get_outputs()))")
    return subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True, text=True, cwd=cwd)


@pytest.fixture()
def external_model(tmp_path: Path) -> Path:
    """A zoo forward model saved as a dynamo export would be: every tensor in a .data file beside it."""
    cfg = {k: v for k, v in zoo.small_config("vgg16").items() if k != "batch"}
    src = tmp_path / "in" / "vgg.onnx"
    src.parent.mkdir()
    onnx.save(zoo.build("vgg16", 2, **cfg), src, save_as_external_data=True, location="vgg.onnx.data",
              size_threshold=0)
    return src


def test_grad_and_compile_outputs_load_from_any_directory(external_model: Path, tmp_path: Path) -> None:
    work = tmp_path / "work"
    (work / "sub" / "c").mkdir(parents=True)
    res = remc("grad", str(external_model), "-o", "sub/train.onnx", cwd=work)
    assert res.returncode == 0, res.stderr
    res = remc("compile", "--cost", "flops", "--no-fit", "sub/train.onnx", "--budget", "700KiB", "--strategy", "lin-greedy",
               "-o", "sub/c/out.onnx", cwd=work)
    assert res.returncode == 0, res.stderr
    for p in (work / "sub" / "train.onnx", work / "sub" / "c" / "out.onnx"):
        res = _load_elsewhere(p, tmp_path)
        assert res.returncode == 0, res.stderr
        assert all(t.data_location != onnx.TensorProto.EXTERNAL for t in onnx.load(p).graph.initializer)
    assert sorted(f.name for f in (work / "sub" / "c").iterdir()) == ["out.onnx"]  # no temporaries left
    res = remc("run", str(work / "sub" / "c" / "out.onnx"), "--compare", str(work / "sub" / "train.onnx"),
               "--iters", "1", cwd=tmp_path)
    assert res.returncode == 0, res.stderr


def test_large_models_write_data_beside_the_output(external_model: Path, tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """Above the protobuf limit (lowered here to 1 KiB) the data goes to <output>.data, read back exactly."""
    monkeypatch.setattr(onnx_io, "PROTO_LIMIT", 1024)
    model = onnx_io.load_model(external_model)
    out = tmp_path / "out" / "big.onnx"
    out.parent.mkdir()
    onnx_io.save_model(model, out, data_dir=external_model.parent)
    assert sorted(f.name for f in out.parent.iterdir()) == ["big.onnx", "big.onnx.data"]
    locs = {e.value for t in onnx.load(out, load_external_data=False).graph.initializer
            for e in t.external_data if e.key == "location"}
    assert locs == {"big.onnx.data"}
    assert _load_elsewhere(out, tmp_path).returncode == 0
    a = {t.name: onnx.numpy_helper.to_array(t) for t in onnx.load(external_model).graph.initializer}
    b = {t.name: onnx.numpy_helper.to_array(t) for t in onnx.load(out).graph.initializer}
    assert a.keys() == b.keys() and all(np.array_equal(a[k], b[k]) for k in a)
    x = np.random.default_rng(0).standard_normal((2, 3, 32, 32)).astype(np.float32)
    feeds = {ort.InferenceSession(str(out)).get_inputs()[0].name: x}
    assert np.array_equal(ort.InferenceSession(str(out)).run(None, feeds)[0],
                          ort.InferenceSession(str(external_model)).run(None, feeds)[0])


def test_shape_only_weights_stay_external(tmp_path: Path) -> None:
    model = zoo.build("vgg16", 1, weights="shape-only",
                      **{k: v for k, v in zoo.small_config("vgg16").items() if k != "batch"})
    onnx_io.save_model(model, tmp_path / "s.onnx", data_dir=tmp_path)
    saved = onnx.load(tmp_path / "s.onnx", load_external_data=False)
    assert [t.name for t in saved.graph.initializer] == [t.name for t in model.graph.initializer]
    assert sorted(f.name for f in tmp_path.iterdir()) == ["s.onnx"]


def test_missing_output_folder_is_a_model_error(tmp_path: Path) -> None:
    with pytest.raises(ModelError, match="does not exist"):
        onnx_io.save_model(onnx.ModelProto(), tmp_path / "nope" / "x.onnx")
