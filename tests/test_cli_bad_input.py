"""The CLI's bad-input table: every case ends with exit != 0, exactly one line on stderr (no traceback),
its inputs unchanged and no output (or temporary file) left behind.

Node-link JSON value cases (negative or NaN sizes and costs, unknown links) live with ir/nodelink.py's
tests; this table covers arguments, paths and graphs.
"""
from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import onnx
import onnx.helper as oh
import onnx.parser
import pytest

GRAPHS = Path(__file__).parent / "graphs"


def remc(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "remc.cli", *args], capture_output=True, text=True, cwd=cwd,
                          timeout=300)


def snapshot(folder: Path) -> dict[str, str]:
    """Every file under ``folder`` (hidden ones too) with a hash of its bytes."""
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file() else "dir"
            for p in sorted(folder.rglob("*"))}


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder with a training graph (chain.onnx), a forward-only model (fwd.onnx), a model with an op no
    runtime knows (unknown_op.onnx), the chain as node-link
    JSON (chain.json), a compiled chain with its plan (chain_remat.onnx, chain.plan) and an empty
    subfolder (sub/)."""
    folder = tmp_path_factory.mktemp("template")
    onnx.save(onnx.parser.parse_model((GRAPHS / "chain_train.onnxtxt").read_text()), folder / "chain.onnx")
    x = oh.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [2, 4])
    y = oh.make_tensor_value_info("y", onnx.TensorProto.FLOAT, [2, 4])
    fwd = oh.make_model(oh.make_graph([oh.make_node("Relu", ["x"], ["h"], name="r"),
                                       oh.make_node("Neg", ["h"], ["y"], name="n")], "fwd", [x], [y]),
                        opset_imports=[oh.make_opsetid("", 17)])
    onnx.save(fwd, folder / "fwd.onnx")
    xd = oh.make_tensor_value_info("x", onnx.TensorProto.FLOAT, ["N", 4])
    yd = oh.make_tensor_value_info("y", onnx.TensorProto.FLOAT, ["N", 4])
    onnx.save(oh.make_model(oh.make_graph([oh.make_node("Relu", ["x"], ["y"], name="r")], "fwd", [xd], [yd]),
                            opset_imports=[oh.make_opsetid("", 17)]), folder / "fwd_dynamic.onnx")
    unknown = oh.make_model(oh.make_graph([oh.make_node("FooBar", ["x"], ["y"], name="foo", domain="my.ops")],
                                          "unk", [x], [y]),
                            opset_imports=[oh.make_opsetid("", 17), oh.make_opsetid("my.ops", 1)])
    onnx.save(unknown, folder / "unknown_op.onnx")
    js = subprocess.run([sys.executable, "-m", "remc.cli", "opt", str(GRAPHS / "chain_train.onnxtxt"), "-p",
                         "import,costs,units"], capture_output=True, text=True, check=True, timeout=120)
    (folder / "chain.json").write_text(js.stdout)
    subprocess.run([sys.executable, "-m", "remc.cli", "compile", "--cost", "flops", "chain.onnx", "--budget", "1MiB", "-o",
                    "chain_remat.onnx", "--plan", "chain.plan", "--strategy", "checkpoint-all",
                    "--granularity", "fine"], cwd=folder, check=True, capture_output=True, timeout=120)
    (folder / "sub").mkdir()
    return folder


@pytest.fixture()
def work(template: Path, tmp_path: Path) -> Path:
    """A fresh copy of ``template`` for one test."""
    return Path(shutil.copytree(template, tmp_path / "work"))


COMPILE = ["compile", "--cost", "flops", "chain.onnx", "--budget", "1MiB", "--strategy", "checkpoint-all", "--granularity", "fine"]

CASES: dict[str, tuple[list[str], str]] = {
    # files
    "output-folder-missing": (COMPILE + ["-o", "nowhere/out.onnx"], "does not exist"),
    "output-folder-unwritable": (COMPILE + ["-o", "/proc/remc-out.onnx"], "cannot write"),
    "output-is-dot": (COMPILE + ["-o", "."], "directory"),
    "output-is-folder": (COMPILE + ["-o", "sub/"], "directory"),
    "plan-folder-missing": (COMPILE + ["-o", "out.onnx", "--plan", "nowhere/out.plan"], "does not exist"),
    "input-unreadable": (["compile", "/proc/self/mem", "--budget", "1MiB", "-o", "out.onnx"], "cannot read"),
    "input-is-folder": (["compile", "sub", "--budget", "1MiB", "-o", "out.onnx"], "directory"),
    "input-missing": (["compile", "nope.onnx", "--budget", "1MiB", "-o", "out.onnx"], "no such file"),
    "grad-output-folder-missing": (["grad", "fwd.onnx", "-o", "nowhere/train.onnx"], "does not exist"),
    "zoo-export-output-folder-missing": (["zoo", "export", "vgg16", "--size", "small", "-o", "nowhere/v.onnx"],
                                         "does not exist"),
    "zoo-export-output-is-folder": (["zoo", "export", "vgg16", "--size", "small", "-o", "sub"], "directory"),
    "run-model-unreadable": (["run", "/proc/self/mem"], "cannot read"),
    "run-model-is-folder": (["run", "sub"], "directory"),
    "plan-check-unreadable-graph": (["plan", "check", "chain.plan", "--graph", "/proc/self/mem"], "cannot read"),
    "plan-show-folder": (["plan", "show", "sub"], "directory"),
    "plan-show-unreadable": (["plan", "show", "/proc/self/mem"], "cannot read"),
    # outputs that would overwrite an input or each other
    "output-is-input": (COMPILE + ["-o", "chain.onnx"], "refusing to overwrite"),
    "plan-is-input": (COMPILE + ["-o", "out.onnx", "--plan", "chain.onnx"], "refusing to overwrite"),
    "plan-is-output": (COMPILE + ["-o", "out.onnx", "--plan", "out.onnx"], "two different files"),
    "plan-is-output-other-spelling": (COMPILE + ["-o", "./sub/../out.onnx", "--plan", "out.onnx"],
                                      "two different files"),
    "solve-plan-is-input": (["solve", "chain.json", "--budget", "1MiB", "--strategy", "checkpoint-all",
                             "--plan", "chain.json"], "refusing to overwrite"),
    "grad-output-is-input": (["grad", "fwd.onnx", "-o", "fwd.onnx"], "refusing to overwrite"),
    # sizes
    "budget-infinite": (COMPILE + ["-o", "out.onnx", "--budget", "1e999"], "too large"),
    "budget-half-byte": (COMPILE + ["-o", "out.onnx", "--budget", "0.5"], "whole number of bytes"),
    "budget-below-a-byte": (COMPILE + ["-o", "out.onnx", "--budget", "1e-12GiB"], "less than 1 byte"),
    "budget-zero": (COMPILE + ["-o", "out.onnx", "--budget", "0"], "positive"),
    "budget-text": (COMPILE + ["-o", "out.onnx", "--budget", "lots"], "lots"),
    "budget-unit": (COMPILE + ["-o", "out.onnx", "--budget", "5parsecs"], "5parsecs"),
    # numbers
    "batch-zero": (COMPILE + ["-o", "out.onnx", "--batch", "0"], "at least 1"),
    "batch-negative": (COMPILE + ["-o", "out.onnx", "--batch=-3"], "at least 1"),
    "batch-fraction": (COMPILE + ["-o", "out.onnx", "--batch", "1.5"], "not an integer"),
    "gap-nan": (COMPILE + ["-o", "out.onnx", "--gap", "nan"], "gap"),
    "gap-negative": (COMPILE + ["-o", "out.onnx", "--gap=-1"], "gap"),
    "gap-above-one": (COMPILE + ["-o", "out.onnx", "--gap", "2"], "gap"),
    "threads-zero": (COMPILE + ["-o", "out.onnx", "--threads", "0"], "at least 1"),
    "time-limit-nan": (COMPILE + ["-o", "out.onnx", "--time-limit", "nan"], "seconds"),
    "time-limit-zero": (COMPILE + ["-o", "out.onnx", "--time-limit", "0"], "seconds"),
    "time-limit-negative": (COMPILE + ["-o", "out.onnx", "--time-limit=-5"], "seconds"),
    "solve-gap-nan": (["solve", "chain.json", "--budget", "1MiB", "--gap", "nan"], "gap"),
    "run-iters-zero": (["run", "chain.onnx", "--iters", "0"], "at least 1"),
    "run-mem-limit-half-byte": (["run", "chain.onnx", "--mem-limit", "0.5"], "whole number of bytes"),
    "demo-fraction-zero": (["demo", "--fraction", "0"], "fraction"),
    "demo-fraction-nan": (["demo", "--fraction", "nan"], "fraction"),
    "demo-batch-zero": (["demo", "--batch", "0"], "at least 1"),
    "zoo-export-batch-zero": (["zoo", "export", "vgg16", "--batch", "0", "-o", "v.onnx"], "at least 1"),
    "maxbatch-threads-zero": (["maxbatch", "chain.onnx", "--budget", "1MiB", "--threads", "0"], "at least 1"),
    # usage
    "unknown-strategy": (COMPILE + ["-o", "out.onnx", "--strategy", "best"], "invalid choice"),
    "unknown-option": (COMPILE + ["-o", "out.onnx", "--fast"], "unrecognized arguments"),
    "missing-budget": (["compile", "chain.onnx", "-o", "out.onnx"], "required"),
    "missing-command": ([], "missing command"),
    "missing-action": (["plan"], "missing action"),
    "unknown-command": (["frobnicate"], "invalid choice"),
    # graphs
    "forward-only-graph": (["compile", "fwd.onnx", "--budget", "1MiB", "-o", "out.onnx"], "remc grad"),
    "sweep-forward-only-graph": (["sweep", "fwd.onnx", "-o", "sweep.png"], "remc grad"),
    # a forward model whose import fails first (an unbound dimension; a torch export's computed Slice ends):
    # the shape error and that it is no training graph
    "forward-only-dynamic": (["compile", "fwd_dynamic.onnx", "--budget", "1MiB", "-o", "out.onnx"],
                             "not a training graph"),
    "budget-below-need": (COMPILE + ["-o", "out.onnx", "--plan", "out.plan", "--budget", "150"], "150"),
    "plan-show-foreign-graph": (["plan", "show", "chain.plan", "--graph", "fwd.onnx"], "lacks"),
    "run-unknown-op": (["run", "unknown_op.onnx", "--iters", "1"], "no kernel in onnxruntime on cpu or function body for op 'FooBar'"),
    "run-unknown-op-capped": (["run", "unknown_op.onnx", "--mem-limit", "1MiB", "--iters", "1"],
                              "no kernel in onnxruntime on cpu or function body for op 'FooBar'"),
    "run-plan-foreign-graph": (["run", "chain_remat.onnx", "--plan", "chain.plan", "--compare", "fwd.onnx",
                                "--iters", "1"], "lacks"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_bad_input(case: str, work: Path) -> None:
    args, needle = CASES[case]
    before = snapshot(work)
    res = remc(*args, cwd=work)
    assert res.returncode != 0, res.stdout
    assert "Traceback" not in res.stderr, res.stderr
    lines = [ln for ln in res.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1, res.stderr
    assert needle in lines[0], lines[0]
    assert snapshot(work) == before  # inputs unchanged, no output and no temporary file left


def test_hand_edited_plan_is_caught_with_the_graph(work: Path) -> None:
    """A plan that frees a value right after computing it, before a later unit reads it (a use after free),
    is structurally fine: 'plan show' alone accepts it and says it did not check it against the graph;
    with --graph it fails, and so does 'remc run --plan' with the training graph to compare against."""
    lines = (work / "chain.plan").read_text().splitlines()
    i = next(i for i, ln in enumerate(lines) if ln.strip().startswith("deallocate"))
    reg = re.search(r"%(\d+)", lines[i]).group(1)
    defined = next(j for j, ln in enumerate(lines) if ln.strip().startswith(f"%{reg} = compute"))
    lines.insert(defined + 1, lines.pop(i))
    (work / "bad.plan").write_text("\n".join(lines) + "\n")
    alone = remc("plan", "show", "bad.plan", cwd=work)
    assert alone.returncode == 0, alone.stderr
    assert "not checked against its graph" in alone.stdout
    # the compiled model records its plan's digest: `remc run` refuses the edited plan before anything else;
    # a copy without the record (as an older remc wrote it) reaches the validator, which catches the free
    stamped = onnx.load(work / "chain_remat.onnx")
    res = remc("run", "chain_remat.onnx", "--plan", "bad.plan", "--iters", "1", cwd=work)
    assert res.returncode != 0 and "was not compiled from bad.plan" in res.stderr, res.stderr
    unstamped = onnx.ModelProto()
    unstamped.CopyFrom(stamped)
    del unstamped.metadata_props[:]
    onnx.save(unstamped, work / "chain_remat_nodigest.onnx")
    for args in (["plan", "show", "bad.plan", "--graph", "chain.onnx"],
                 ["plan", "check", "bad.plan", "--graph", "chain.onnx"],
                 ["run", "chain_remat_nodigest.onnx", "--plan", "bad.plan", "--compare", "chain.onnx", "--iters", "1"]):
        res = remc(*args, cwd=work)
        assert res.returncode != 0, (args, res.stdout)
        lines_err = res.stderr.strip().splitlines()
        assert len(lines_err) == 1 and "not resident" in lines_err[0], (args, res.stderr)
    good = remc("plan", "show", "chain.plan", "--graph", "chain.onnx", cwd=work)
    assert good.returncode == 0 and "checked against graph chain.onnx: ok" in good.stdout, good.stderr


def test_mem_limit_below_the_inputs_fails(work: Path) -> None:
    """`remc run --mem-limit` below what the graph's inputs and parameters alone need (the chain's constant
    is 108 bytes) fails in one line, whether the runtime enforces the cap (out of memory) or not (the CLI
    sees the arena above the limit); it never prints a peak above the limit and exits 0."""
    res = remc("run", "chain_remat.onnx", "--mem-limit", "100", "--iters", "1", cwd=work)
    assert res.returncode != 0, res.stdout
    assert "Traceback" not in res.stderr
    assert len(res.stderr.strip().splitlines()) == 1, res.stderr


def test_files_are_one_line_errors_even_when_everything_else_is_fine(work: Path) -> None:
    """The same compile succeeds with a good output path (the table's failures come from the paths)."""
    res = remc(*COMPILE, "-o", "out.onnx", "--plan", "out.plan", cwd=work)
    assert res.returncode == 0, res.stderr
    assert (work / "out.onnx").is_file() and (work / "out.plan").is_file()
    assert not [p for p in os.listdir(work) if p.startswith(".")]
