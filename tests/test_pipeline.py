"""Pipeline specs, the pass-level `remc opt` entry (text in, text out), node-link JSON and the CLI reports."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import onnx.parser
import pytest

from remc.backends.runtime import import_model
from remc.ir.errors import RemcError
from remc.ir.nodelink import dag_from_nodelink, load_nodelink, save_nodelink
from remc.ir.plan import parse_plan, print_plan
from remc.passes.dagbuild import build_dag
from remc.pipeline import parse_pipeline, print_pipeline

GRAPHS = Path(__file__).parent / "graphs"


def remc(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "remc.cli", *args], capture_output=True, text=True, timeout=300)


@pytest.mark.parametrize("spec", [
    "import,costs,units,schedule,plan,lower",
    "import{batch=8},costs{method=profile},units{granularity=coarse},schedule{strategy=checkmate,time_limit=60.0},"
    "plan{early_free=False},lower",
])
def test_pipeline_spec_round_trip(spec: str) -> None:
    assert print_pipeline(parse_pipeline(spec)) == spec


@pytest.mark.parametrize("spec, needle", [
    ("import,frobnicate", "unknown pass 'frobnicate'"),
    ("schedule{colour=red}", "has no option 'colour'"),
    ("plan{early_free=maybe}", "cannot read 'maybe'"),
])
def test_pipeline_spec_errors(spec: str, needle: str) -> None:
    with pytest.raises(RemcError, match=needle):
        parse_pipeline(spec)


def test_opt_schedules_text_graph() -> None:
    res = remc("opt", str(GRAPHS / "chain_train.onnxtxt"), "-p",
               "import,costs,units,schedule{strategy=checkpoint-all},plan")
    assert res.returncode == 0, res.stderr
    plan = parse_plan(res.stdout)
    assert print_plan(plan) == res.stdout
    assert plan.strategy == "checkpoint-all" and len(plan.units) == 12
    computes = [s.unit for stage in plan.stages for s in stage if type(s).__name__ == "Compute"]
    assert len(computes) == 12  # checkpoint-all computes every node once
    assert 'stage 1:\n  %0 = compute "Mul_0"' in res.stdout


def test_opt_lowers_a_plan(tmp_path: Path) -> None:
    plan_text = remc("opt", str(GRAPHS / "residual_train.onnxtxt"), "-p",
                     "import,costs,units,schedule{strategy=checkpoint-all},plan").stdout
    src = tmp_path / "in.plan"
    src.write_text(plan_text)
    res = remc("opt", str(src), "-p", "lower", "--graph", str(GRAPHS / "residual_train.onnxtxt"))
    assert res.returncode == 0, res.stderr
    assert res.stdout.startswith("residual_train_remat")
    assert res.stdout.count("=") >= 13  # 13 nodes, each one assignment


def test_nodelink_round_trip(tmp_path: Path) -> None:
    graph = import_model(onnx.parser.parse_model((GRAPHS / "unet_train.onnxtxt").read_text()))
    dag = build_dag(graph, {n.name: float(i + 1) for i, n in enumerate(graph.nodes)})
    path = tmp_path / "g.json"
    save_nodelink(dag, path)
    back = load_nodelink(path)
    assert back.names == dag.names and back.constant == dag.constant
    np.testing.assert_array_equal(back.edges, dag.edges)
    np.testing.assert_array_equal(back.mem, dag.mem)
    np.testing.assert_array_equal(back.cost, dag.cost)
    np.testing.assert_array_equal(back.backward, dag.backward)


def test_nodelink_renumbers_topologically() -> None:
    data = {"nodes": [{"id": "c", "cost_cpu": 3, "cost_ram": 30, "backward": True},
                      {"id": "a", "cost_cpu": 1, "cost_ram": 10, "backward": False},
                      {"id": "b", "cost_cpu": 2, "cost_ram": 20, "backward": False}],
            "links": [{"source": "a", "target": "b"}, {"source": "b", "target": "c"}, {"source": "a", "target": "c"}]}
    dag = dag_from_nodelink(data)
    assert dag.names == ("a", "b", "c")
    assert dag.edges.tolist() == [[0, 1], [0, 2], [1, 2]]
    assert dag.backward.tolist() == [False, False, True]


def test_nodelink_cycle_is_an_error() -> None:
    data = {"nodes": [{"id": 0, "cost_cpu": 1, "cost_ram": 1}, {"id": 1, "cost_cpu": 1, "cost_ram": 1}],
            "links": [{"source": 0, "target": 1}, {"source": 1, "target": 0}]}
    with pytest.raises(RemcError, match="cycle"):
        dag_from_nodelink(data)


def test_compile_show_check_json(tmp_path: Path) -> None:
    src, out, plan = tmp_path / "u.onnx", tmp_path / "out.onnx", tmp_path / "out.plan"
    onnx.save(onnx.parser.parse_model((GRAPHS / "unet_train.onnxtxt").read_text()), src)
    res = remc("compile", "--cost", "flops", str(src), "--budget", "300", "-o", str(out), "--plan", str(plan),
               "--strategy", "checkpoint-all", "--granularity", "fine", "--json", "--no-fit")
    assert res.returncode == 0, res.stderr
    rep = json.loads(res.stdout)
    # 232: the gradients held from their computation (248 with them resident from the start)
    assert rep["peak"] == 232 and rep["budget"] == 300 and rep["strategy"] == "checkpoint-all"
    for key in ("cost", "status", "bound", "gap", "seconds", "recomputes"):
        assert key in rep
    show = json.loads(remc("plan", "show", str(plan), "--json").stdout)
    assert show["peak"] == 232 and show["budget"] == 300 and show["recomputes"] == {}
    assert show["cost"] == rep["cost"]
    chk = remc("plan", "check", str(plan), "--graph", str(src), "--live-only")
    assert chk.returncode == 0 and "ok: peak 232 B" in chk.stdout, chk.stderr
    assert "not checked: ONNX Runtime's arena" in chk.stdout
    # compiled with --no-fit: remc's model holds it, ONNX Runtime's arena (replayed by default) does not
    arena = remc("plan", "check", str(plan), "--graph", str(src))
    assert arena.returncode == 1 and "Traceback" not in arena.stderr, arena.stderr
    assert "on ONNX Runtime cpu" in arena.stderr and "above the budget of 300 bytes" in arena.stderr
    # The same plan against a tighter budget is rejected by the validator.
    bad = remc("plan", "check", str(plan), "--graph", str(src), "--budget", "200", "--live-only")
    assert bad.returncode != 0 and "Traceback" not in bad.stderr and "200" in bad.stderr


def test_plan_check_replays_the_arena(tmp_path: Path) -> None:
    """A plan compiled to fit ONNX Runtime's arena passes both checks, and plan check says which it ran."""
    src, out, plan = tmp_path / "u.onnx", tmp_path / "out.onnx", tmp_path / "out.plan"
    onnx.save(onnx.parser.parse_model((GRAPHS / "unet_train.onnxtxt").read_text()), src)
    res = remc("compile", str(src), "--budget", "64KiB", "-o", str(out), "--plan", str(plan),
               "--strategy", "checkpoint-all", "--granularity", "fine", "--json")
    assert res.returncode == 0, res.stderr
    need = json.loads(res.stdout)["arena_predicted"]
    chk = remc("plan", "check", str(plan), "--graph", str(src))
    assert chk.returncode == 0, chk.stderr
    assert "in remc's live-bytes model" in chk.stdout and "on ONNX Runtime cpu the lowered graph needs" in chk.stdout
    assert f"({need} bytes" in chk.stdout
    low = remc("plan", "check", str(plan), "--graph", str(src), "--budget", str(need - 1))
    assert low.returncode == 1 and f"needs {need} bytes on ONNX Runtime cpu" in low.stderr, low.stderr


def test_compile_profiles_costs_by_default(tmp_path: Path) -> None:
    """Without --cost, compile for the CPU times each op signature there and caches it (under $HOME); a
    second compile reads the cache; for CUDA on a machine without it, FLOP costs with a note on stderr."""
    import os

    from remc.backends.runtime import cuda_available
    src = tmp_path / "u.onnx"
    onnx.save(onnx.parser.parse_model((GRAPHS / "unet_train.onnxtxt").read_text()), src)
    env = {**os.environ, "HOME": str(tmp_path / "home")}

    def compile_(*extra: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "remc.cli", "compile", str(src), "--budget", "300", "-o",
                               str(tmp_path / "o.onnx"), "--strategy", "checkpoint-all", "--no-fit", *extra],
                              capture_output=True, text=True, timeout=300, env=env)

    res = compile_()
    assert res.returncode == 0, res.stderr
    cache = tmp_path / "home" / ".cache" / "remc" / "costs" / "profile.json"
    entries = json.loads(cache.read_text())["entries"]
    assert entries and all(e["seconds"] > 0 for e in entries.values())
    assert compile_().returncode == 0 and json.loads(cache.read_text())["entries"] == entries
    if not cuda_available():
        res = compile_("--device", "cuda")
        assert res.returncode == 0 and "costs are FLOPs" in res.stderr, res.stderr


def test_plan_check_rejects_foreign_graph(tmp_path: Path) -> None:
    src, plan = tmp_path / "u.onnx", tmp_path / "u.plan"
    onnx.save(onnx.parser.parse_model((GRAPHS / "unet_train.onnxtxt").read_text()), src)
    other = tmp_path / "chain.onnx"
    onnx.save(onnx.parser.parse_model((GRAPHS / "chain_train.onnxtxt").read_text()), other)
    assert remc("compile", "--cost", "flops", str(src), "--budget", "1KiB", "-o", str(tmp_path / "o.onnx"), "--plan", str(plan),
                "--strategy", "checkpoint-all", "--no-fit").returncode == 0
    res = remc("plan", "check", str(plan), "--graph", str(other))
    assert res.returncode != 0 and "Traceback" not in res.stderr


def test_maxbatch_cli_paper_vgg16() -> None:
    """Eq. (10) max batch: recomputation lets a larger batch fit than keeping everything."""
    reps = {}
    for strategy in ("checkpoint-all", "lin-greedy"):
        res = remc("maxbatch", "vgg16", "--budget", "16GB", "--strategy", strategy, "--json")
        assert res.returncode == 0, res.stderr
        reps[strategy] = json.loads(res.stdout)
        assert reps[strategy]["peak"] <= 16 * 10**9 and reps[strategy]["cost"] <= reps[strategy]["cost_limit"]
    assert reps["lin-greedy"]["batch"] > reps["checkpoint-all"]["batch"] > 100


def test_cuda_conv_weight_gradient_scratch_is_workspace() -> None:
    """For CUDA, a unit holding a weight-gradient Conv (computed kernel) or a ConvTranspose gets that
    node's cuDNN scratch (X + kernel + Y bytes) in W_v; on CPU the same graph has no kernel scratch."""
    from remc import zoo
    from remc.passes.dagbuild import kernel_scratch
    from remc.pipeline import State, compile_pipeline, run

    model = zoo.export("vgg16", 2, train=True, **{k: v for k, v in zoo.small_config("vgg16").items() if k != "batch"})
    cpu = run(compile_pipeline(device="cpu")[:3], State(model=model))
    cuda = run(compile_pipeline(device="cuda")[:3], State(model=model))
    assert cpu.dag.names == cuda.dag.names and (cpu.dag.mem == cuda.dag.mem).all()
    seen = 0
    for k, unit in enumerate(cuda.units):
        scratch = [kernel_scratch(n, "cuda") for n in unit]
        assert all(kernel_scratch(n, "cpu") == 0 for n in unit)
        for n, b in zip(unit, scratch):
            if b:
                seen += 1
                assert n.op_type == "ConvTranspose" or n.op_type == "Conv" and n.inputs[1].producer is not None
                assert b == n.inputs[0].nbytes + n.inputs[1].nbytes + n.outputs[0].nbytes
        assert cuda.dag.workspace[k] >= max(scratch, default=0)
        if not any(scratch):
            assert cuda.dag.workspace[k] == cpu.dag.workspace[k]
    assert seen >= 25  # a weight-gradient Conv per convolution of VGG16, an input-gradient ConvTranspose
    # per convolution but the first


def test_plan_check_of_a_cuda_plan(tmp_path: Path) -> None:
    """A plan compiled for CUDA (with kernel scratch in its workspace) records its device, and checks
    against its graph without a flag; checked as a CPU plan, its workspace does not match."""
    def remc(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "remc.cli", *args], capture_output=True, text=True, timeout=600)

    train, out, plan = tmp_path / "t.onnx", tmp_path / "o.onnx", tmp_path / "o.plan"
    assert remc("zoo", "export", "vgg16", "--size", "small", "--batch", "2", "--train", "-o", str(train)).returncode == 0
    res = remc("compile", "--cost", "flops", str(train), "--budget", "2MiB", "--device", "cuda", "-o", str(out), "--plan", str(plan),
               "--strategy", "lin-greedy")
    assert res.returncode == 0, res.stderr
    assert '\ndevice "cuda"' in plan.read_text()
    ok = remc("plan", "check", str(plan), "--graph", str(train))
    assert ok.returncode == 0, ok.stderr
    bad = remc("plan", "check", str(plan), "--graph", str(train), "--device", "cpu")
    assert bad.returncode == 1 and "does not belong to this graph" in bad.stderr


def test_solve_approx_with_and_without_refine(tmp_path: Path) -> None:
    from _milp_dags import training_graph

    from remc.ir.schedule import checkpoint_all

    dag = training_graph(12, np.random.default_rng(36), skips=((0, 11), (3, 8)), workspace=True)
    budget = int(0.7 * checkpoint_all(dag).peak(dag))
    path = tmp_path / "g.json"
    save_nodelink(dag, path)
    reps = {}
    for flags in ((), ("--no-refine",)):
        res = remc("solve", str(path), "--budget", str(budget), "--strategy", "approx", "--json", *flags)
        assert res.returncode == 0, res.stderr
        reps[flags] = json.loads(res.stdout)
    refined, plain = reps[()], reps[("--no-refine",)]
    assert plain["cost"] == pytest.approx(plain["rounded_cost"]) and "refined" not in plain["rule"]
    assert refined["rounded_cost"] == pytest.approx(plain["cost"]) and "refined" in refined["rule"]
    assert refined["cost"] <= plain["cost"] and max(refined["peak"], plain["peak"]) <= budget


@pytest.mark.parametrize("flags", [("--strategy", "approx"), ("--strategy", "approx", "--no-refine"),
                                   ("--strategy", "checkmate")])
def test_compile_solver_strategies_under_a_terminal(tmp_path: Path, flags: tuple[str, ...]) -> None:
    """With a terminal on stderr the live progress display is on: every solver strategy still compiles."""
    import os
    import pty

    src, out = tmp_path / "u.onnx", tmp_path / "out.onnx"
    onnx.save(onnx.parser.parse_model((GRAPHS / "chain_train.onnxtxt").read_text()), src)
    primary, secondary = pty.openpty()
    try:
        res = subprocess.run([sys.executable, "-m", "remc.cli", "compile", "--cost", "flops", str(src), "--budget", "160", "-o",
                              str(out), "--granularity", "fine", "--time-limit", "30", "--no-fit", *flags],
                             stdout=subprocess.PIPE, stderr=secondary, text=True, timeout=300)
        os.close(secondary)
        secondary = -1
        chunks = []
        while True:
            try:
                data = os.read(primary, 4096)
            except OSError:
                break
            if not data:
                break
            chunks.append(data)
        err = b"".join(chunks).decode(errors="replace")
    finally:
        if secondary >= 0:
            os.close(secondary)
        os.close(primary)
    assert res.returncode == 0 and "Traceback" not in err, err
    assert out.exists() and flags[1] in res.stdout


def test_schedule_pass_carries_typed_options() -> None:
    from remc.passes.options import ApproxOptions, CheckmateOptions
    from remc.pipeline import SchedulePass, compile_pipeline

    passes = compile_pipeline(strategy="approx", options=ApproxOptions(refine=False, time_limit=5.0))
    sched = next(p for p in passes if isinstance(p, SchedulePass))
    assert sched.spec() == "schedule{strategy=approx,time_limit=5.0,refine=False}"
    again = parse_pipeline(sched.spec())[0]
    assert again.options == ApproxOptions(refine=False, time_limit=5.0)
    assert parse_pipeline("schedule{strategy=checkmate,gap=0.01}")[0].options == CheckmateOptions(gap=0.01)
    with pytest.raises(RemcError, match="no option 'refine'"):
        parse_pipeline("schedule{strategy=checkmate,refine=False}")
    with pytest.raises(RemcError, match="gap must be"):
        parse_pipeline("schedule{strategy=checkmate,gap=nan}")


def test_maxbatch_solver_without_a_schedule_in_time(monkeypatch) -> None:
    """A checkmate/approx probe that ends without a schedule (time limit) is decided by lin-greedy's
    schedules, which the solver starts from, and is listed; the search starts at lin-greedy's batch."""
    from remc.backends import strategies
    from remc.ir.errors import SolverError
    from remc.maxbatch_cli import run_maxbatch
    real = strategies.solve

    def no_schedule(name, dag, budget, options=None, **kw):
        if name == "approx":
            raise SolverError("approx: the time limit of 1 s passed before any schedule was found")
        return real(name, dag, budget, options, **kw)
    monkeypatch.setattr(strategies, "solve", no_schedule)
    rep = run_maxbatch("vgg16", 16 << 30, "approx")
    assert rep["batch"] == rep["search_start"] == run_maxbatch("vgg16", 16 << 30, "lin-greedy")["batch"]
    assert {rep["batch"], rep["batch"] + 1, 2 * rep["batch"]} <= set(rep["unfinished_probes"])
    assert rep["peak"] <= 16 << 30 and rep["cost"] <= rep["cost_limit"]
