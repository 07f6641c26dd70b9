"""remc sweep (table + Fig. 5 picture) and remc plan show --plot (R/S matrices, memory timeline)."""
from __future__ import annotations

import csv
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from remc.ir.plan import read_plan
from remc.passes.validate import simulate

plt = pytest.importorskip("matplotlib.pyplot")


def remc(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "remc.cli", *args], capture_output=True, text=True, timeout=600)


def test_sweep_writes_table_json_and_png(tmp_path: Path) -> None:
    out = tmp_path / "s"
    res = remc("sweep", "vgg16", "--size", "small", "--batch", "2", "--fractions", "1.0,0.8",
               "--strategies", "checkpoint-all,lin-greedy,approx", "--time-limit", "20", "-o", str(out))
    assert res.returncode == 0, res.stderr
    rows = list(csv.DictReader((tmp_path / "s.csv").open()))
    assert [(r["fraction"], r["strategy"]) for r in rows] == [
        ("1.0", "checkpoint-all"), ("1.0", "lin-greedy"), ("1.0", "approx"),
        ("0.8", "checkpoint-all"), ("0.8", "lin-greedy"), ("0.8", "approx")]
    assert float(rows[0]["overhead"]) == 1.0 and rows[3]["status"] == "infeasible"
    data = json.loads((tmp_path / "s.json").read_text())
    for r in data["rows"]:
        if r["overhead"] is not None:
            assert r["peak"] <= r["budget"] and r["overhead"] >= 1.0 - 1e-9
    img = plt.imread(tmp_path / "s.png")
    assert img.shape[0] > 200 and img.shape[1] > 300 and img.std() > 0.01  # drawn, not blank


def test_sweep_bad_input(tmp_path: Path) -> None:
    res = remc("sweep", "vgg16", "--strategies", "nope", "-o", str(tmp_path / "s"))
    assert res.returncode != 0 and "unknown strategies" in res.stderr and "Traceback" not in res.stderr
    res = remc("sweep", "vgg16", "--fractions", "a,b", "-o", str(tmp_path / "s"))
    assert res.returncode != 0 and "--fractions" in res.stderr and "Traceback" not in res.stderr


def test_plan_plot_matches_the_simulator(tmp_path: Path) -> None:
    from remc.plots import memory_timeline, plan_matrices
    train, plan = tmp_path / "t.onnx", tmp_path / "t.plan"
    assert remc("zoo", "export", "vgg16", "--size", "small", "--batch", "2", "--train", "-o", str(train)).returncode == 0
    res = remc("compile", "--cost", "flops", "--no-fit", str(train), "--budget", "700KiB", "--strategy", "lin-greedy", "-o",
               str(tmp_path / "o.onnx"), "--plan", str(plan))
    assert res.returncode == 0, res.stderr
    p = read_plan(plan)
    sim = simulate(p)
    R, S = plan_matrices(p)
    assert memory_timeline(p).max() == sim.peak
    assert R.sum() == sim.computes and R.sum() > len(p.units)          # recomputations are extra R entries
    assert not (np.triu(S, 0)).any()                                    # kept only after being computed
    png = tmp_path / "plan.png"
    res = remc("plan", "show", str(plan), "--plot", str(png))
    assert res.returncode == 0, res.stderr
    assert plt.imread(png).std() > 0.01


def test_maxbatch_chart(tmp_path: Path) -> None:
    png = tmp_path / "mb.png"
    res = remc("maxbatch", "vgg16", "--budget", "16GiB", "--strategy", "checkpoint-all,lin-greedy", "--plot", str(png))
    assert res.returncode == 0, res.stderr
    rows = json.loads((tmp_path / "mb.json").read_text())
    assert [(r["model"], r["strategy"]) for r in rows] == [("vgg16", "checkpoint-all"), ("vgg16", "lin-greedy")]
    assert rows[1]["batch"] >= rows[0]["batch"] > 0 and all(r["peak"] <= r["budget"] for r in rows)
    assert plt.imread(png).std() > 0.01
    res = remc("maxbatch", "vgg16", "--budget", "16GiB", "--strategy", "lin-greedy,nope", "--plot", str(png))
    assert res.returncode != 0 and "unknown strategy 'nope'" in res.stderr


def test_plan_plot_with_a_measured_run(tmp_path: Path) -> None:
    from remc.plots import measured_timeline
    train, plan, out = tmp_path / "t.onnx", tmp_path / "t.plan", tmp_path / "o.onnx"
    assert remc("zoo", "export", "vgg16", "--size", "small", "--batch", "2", "--train", "-o", str(train)).returncode == 0
    assert remc("compile", "--cost", "flops", "--no-fit", str(train), "--budget", "700KiB", "--strategy", "lin-greedy", "-o", str(out),
                "--plan", str(plan)).returncode == 0
    from remc.backends.runtime import measure
    p = read_plan(plan)
    res = measure(out, "cpu", iters=1, warmup=0, mem_method="profiler")
    m = measured_timeline(p, res.node_in_use)
    assert len(m) == simulate(p).computes and np.isfinite(m).mean() > 0.9 and np.nanmax(m) <= res.measured_peak
    png = tmp_path / "plan.png"
    res = remc("plan", "show", str(plan), "--plot", str(png), "--run", str(out))
    assert res.returncode == 0, res.stderr
    assert plt.imread(png).std() > 0.01


def test_compile_status_says_what_comes_before_the_solve() -> None:
    """The live display names each step before the solve (not "solving ..." while costs are timed or kernel
    memory is measured); nothing without a display."""
    from remc.progress import compile_status

    class Live:
        def __init__(self) -> None:
            self.seen: list[str] = []

        def status(self, text: str) -> None:
            self.seen.append(text)

    live = Live()
    show = compile_status(live, "cpu", "profile")
    for done in ("import", "costs", "units", "schedule"):
        show(done)
    assert live.seen == ["timing op costs on cpu ...", "grouping nodes into scheduling units ...",
                         "measuring kernel memory on cpu (cached per op signature) ..."]
    compile_status(None, "cpu", "flops")("import")  # no display: nothing to do, no error


def test_live_line_clock_ticks_between_reports(monkeypatch: pytest.MonkeyPatch) -> None:
    """The live display's seconds advance while a phase runs without reporting (before: the line kept the
    seconds of the last report, '1.9 s stage search' for two minutes on a 1000-unit graph)."""
    from rich.text import Text

    from remc import progress as prog
    from remc.passes.solver_api import ProgressEvent
    now = [100.0]
    monkeypatch.setattr(prog.time, "monotonic", lambda: now[0])
    line = prog._Line(Text)

    class Live:
        def refresh(self) -> None:
            pass
    disp = prog._Display("approx", Live(), line)
    disp(ProgressEvent(1.9, "stage search"))
    assert str(line) == "approx 1.9 s  stage search"
    now[0] += 60.0
    assert str(line) == "approx 61.9 s  stage search" and line.__rich__().plain == str(line)
    disp.note("fit round 2")
    assert str(line) == "fit round 2"
    disp(ProgressEvent(3.0, "lp", incumbent=12.0, bound=10.0, gap=0.5))
    assert str(line) == "fit round 2: approx 3.0 s  lp  best 12  bound 10  gap 50.00% of overhead"
