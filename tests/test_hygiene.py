"""The repository's contracts, checked as CI runs them: layers (import-linter), lint (ruff), types (mypy on
ir/ and passes/), one version string, ONNX Runtime builds that cannot be installed together."""
from __future__ import annotations

import importlib.metadata
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    tomllib = pytest.importorskip("tomli")

ROOT = Path(__file__).resolve().parents[1]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())


def _tool(name: str) -> str:
    exe = Path(sys.executable).with_name(name)
    found = str(exe) if exe.exists() else shutil.which(name)
    assert found, f"{name} is not installed: it comes with the test extra (pip install -e '.[cpu,test]')"
    return found


def _run(cmd: list[str], cwd: Path, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, env={**os.environ, **env}, timeout=600)


def installed_layout(dest: Path) -> Path:
    """The packages laid out as installed (``remc/ir``, ``remc/passes``, ...) from pyproject's package-dir,
    so import-linter sees one package tree (the editable install maps folders that lie side by side)."""
    dirs = PYPROJECT["tool"]["setuptools"]["package-dir"]
    for package, folder in sorted(dirs.items(), key=lambda kv: kv[0].count(".")):
        target = dest.joinpath(*package.split("."))
        shutil.copytree(ROOT / folder, target, dirs_exist_ok=True, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", dest / "pyproject.toml")
    return dest


def test_layers_point_down(tmp_path: Path) -> None:
    """ir <- passes <- backends <- driver, and no runtime or solver import in ir/ or passes/."""
    tree = installed_layout(tmp_path)
    r = _run([_tool("lint-imports"), "--no-cache", "pyproject.toml"], tree, PYTHONPATH=str(tree))
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-2000:]
    assert "broken" in r.stdout and " 0 broken" in r.stdout


def test_every_driver_module_is_in_the_top_layer() -> None:
    """A driver module left out of the contract would be unconstrained (passes could import it)."""
    contract = next(c for c in PYPROJECT["tool"]["importlinter"]["contracts"] if c["type"] == "layers")
    top = {m.strip() for m in contract["layers"][0].split(":")}
    here = {f"remc.{p.stem}" for p in (ROOT / "remc").glob("*.py") if p.stem != "__init__"}
    here |= {f"remc.{p.name}" for p in (ROOT / "remc").iterdir() if (p / "__init__.py").exists()}
    assert here <= top, f"add to the driver layer in pyproject.toml: {sorted(here - top)}"


def test_layer_check_can_fail(tmp_path: Path) -> None:
    """The contract really reads the tree: an upward import in ir/ breaks it."""
    tree = installed_layout(tmp_path)
    (tree / "remc" / "ir" / "upward.py").write_text("from remc.passes import costs  # noqa: F401\n")
    r = _run([_tool("lint-imports"), "--no-cache", "pyproject.toml"], tree, PYTHONPATH=str(tree))
    assert r.returncode != 0 and "remc.ir.upward" in r.stdout


def test_ruff_clean() -> None:
    r = _run([_tool("ruff"), "check", "--no-cache", "."], ROOT)
    assert r.returncode == 0, r.stdout[-4000:]


def test_mypy_clean_on_ir_and_passes() -> None:
    r = _run([_tool("mypy"), "--no-incremental"], ROOT)
    assert r.returncode == 0, r.stdout[-4000:]


def test_one_version_string() -> None:
    import remc
    assert PYPROJECT["project"]["dynamic"] == ["version"]
    assert importlib.metadata.version("remc") == remc.__version__
    out = _run([sys.executable, "-m", "remc.cli", "--version"], ROOT / "tests")
    assert out.stdout.split() == ["remc", remc.__version__]


@pytest.mark.parametrize("extra", ["cpu", "gpu", "test", "gurobi", "torch"])
def test_onnxruntime_builds_never_together(extra: str) -> None:
    """onnxruntime and onnxruntime-gpu install the same package: no extra (nor the base) brings both."""
    project = PYPROJECT["project"]
    deps = project["dependencies"] + project["optional-dependencies"][extra]
    names = {d.split(">")[0].split("=")[0].split("[")[0].strip() for d in deps}
    assert not {"onnxruntime", "onnxruntime-gpu"} <= names
    assert not {"onnxruntime", "onnxruntime-gpu"} & {d.split(">")[0] for d in project["dependencies"]}
