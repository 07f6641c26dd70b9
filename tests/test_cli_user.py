"""The CLI as a user runs it: in a terminal (a pseudo-terminal, so the live progress display is on),
interrupted by signals, and run twice on the same input."""
from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import onnx
import onnx.parser
import pytest

from remc import cli
from remc.passes.strategies import STRATEGIES

GRAPHS = Path(__file__).parent / "graphs"
SOLVERS = ("checkmate", "approx")


def remc(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "remc.cli", *args], capture_output=True, text=True, cwd=cwd,
                          timeout=600)


def run_in_pty(args: list[str], cwd: Path, timeout: float = 600, **extra_env: str) -> tuple[int, str]:
    """Run remc with stdin, stdout and stderr on a pseudo-terminal, as in a terminal; (exit code, output)."""
    master, slave = os.openpty()
    env = dict(os.environ, TERM="xterm-256color", COLUMNS="120", LINES="40", **extra_env)
    env.pop("NO_COLOR", None)
    proc = subprocess.Popen([sys.executable, "-m", "remc.cli", *args], stdin=slave, stdout=slave, stderr=slave,
                            cwd=cwd, env=env, close_fds=True)
    os.close(slave)
    chunks = []
    while True:
        try:
            data = os.read(master, 65536)
        except OSError:  # EIO: the child closed the terminal
            break
        if not data:
            break
        chunks.append(data)
    os.close(master)
    return proc.wait(timeout=timeout), b"".join(chunks).decode(errors="replace")


@pytest.fixture(scope="module")
def chain(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder with the chain training graph (chain.onnx) and its node-link JSON (chain.json)."""
    folder = tmp_path_factory.mktemp("chain")
    onnx.save(onnx.parser.parse_model((GRAPHS / "chain_train.onnxtxt").read_text()), folder / "chain.onnx")
    js = subprocess.run([sys.executable, "-m", "remc.cli", "opt", str(GRAPHS / "chain_train.onnxtxt"), "-p",
                         "import,costs,units"], capture_output=True, text=True, check=True, timeout=120)
    (folder / "chain.json").write_text(js.stdout)
    return folder


@pytest.fixture(scope="module")
def vgg(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The zoo's VGG16 training graph at test size (batch 2, 67 coarse units)."""
    folder = tmp_path_factory.mktemp("vgg")
    subprocess.run([sys.executable, "-m", "remc.cli", "zoo", "export", "vgg16", "--size", "small", "--train",
                    "--batch", "2", "-o", "vgg.onnx"], cwd=folder, check=True, capture_output=True, timeout=300)
    return folder / "vgg.onnx"


def budget_for(strategy: str) -> str:
    """The chain needs 172 bytes with checkpoint-all and 156 with the sqrt(n) baselines; 160 bytes makes
    the solvers recompute."""
    return "160" if strategy in SOLVERS else "1MiB"


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_compile_in_a_terminal(strategy: str, chain: Path, tmp_path: Path) -> None:
    out = tmp_path / "out.onnx"
    rc, text = run_in_pty(["compile", "--cost", "flops", "--no-fit", str(chain / "chain.onnx"), "--budget", budget_for(strategy), "-o", str(out),
                           "--plan", str(tmp_path / "out.plan"), "--strategy", strategy, "--granularity", "fine"],
                          cwd=tmp_path)
    assert rc == 0, text
    assert "Traceback" not in text
    assert f"{strategy}: " in text and "wrote " in text, text
    assert out.is_file() and (tmp_path / "out.plan").is_file()


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_solve_in_a_terminal(strategy: str, chain: Path, tmp_path: Path) -> None:
    rc, text = run_in_pty(["solve", str(chain / "chain.json"), "--budget", budget_for(strategy), "--strategy",
                           strategy, "--plan", str(tmp_path / "out.plan")], cwd=tmp_path)
    assert rc == 0, text
    assert "Traceback" not in text
    assert f"{strategy}: " in text, text
    assert (tmp_path / "out.plan").is_file()


def test_no_refine_in_a_terminal(chain: Path, tmp_path: Path) -> None:
    rc, text = run_in_pty(["compile", "--cost", "flops", "--no-fit", str(chain / "chain.onnx"), "--budget", "160", "-o", str(tmp_path / "o.onnx"),
                           "--strategy", "approx", "--no-refine", "--granularity", "fine"], cwd=tmp_path)
    assert rc == 0 and "Traceback" not in text, text


def test_progress_display_is_live_in_a_terminal(vgg: Path, tmp_path: Path) -> None:
    """The MILP on a real model under a terminal: the live display (rich, on stderr) draws and then
    clears itself, and the report follows."""
    rc, text = run_in_pty(["compile", "--cost", "flops", "--no-fit", str(vgg), "--budget", "0.7MiB", "-o", str(tmp_path / "o.onnx"),
                           "--strategy", "checkmate", "--time-limit", "300"], cwd=tmp_path)
    assert rc == 0, text
    assert "Traceback" not in text
    assert "\x1b[?25l" in text  # the display hid the cursor: it was on
    assert "checkmate: optimal" in text, text


@pytest.mark.parametrize("strategy,budget", [("approx", "0.65MiB"), ("checkmate", "0.69MiB")])
def test_same_input_same_plan_bytes(strategy: str, budget: str, vgg: Path, tmp_path: Path) -> None:
    """Two runs with the same input and options write byte-identical plans: the solve seconds and other
    timings are in the report (--json), not in the plan text."""
    plans, seconds = [], []
    for k in range(2):
        res = remc("compile", "--cost", "flops", "--no-fit", str(vgg), "--budget", budget, "-o", f"o{k}.onnx", "--plan", f"o{k}.plan",
                   "--strategy", strategy, "--time-limit", "300", "--json", cwd=tmp_path)
        assert res.returncode == 0, res.stderr
        plans.append((tmp_path / f"o{k}.plan").read_bytes())
        seconds.append(json.loads(res.stdout)["seconds"])
    assert plans[0] == plans[1]
    assert b"seconds" not in plans[0]
    # no duration in any report line either (a CP-SAT note once carried "(OPTIMAL, 0.3 s)")
    assert not re.search(rb"^report .*\d s[),;]", plans[0], re.M), plans[0]
    assert all(s is not None and s > 0 for s in seconds)  # the timing is reported, just not in the plan


def _default_signals() -> None:
    """In the child: the default handlers (a test run in the background inherits SIGINT ignored, and remc
    leaves an ignored signal ignored, as a user of nohup or '&' expects)."""
    for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(s, signal.SIG_DFL)


@pytest.mark.parametrize("signo", [signal.SIGTERM, signal.SIGHUP, signal.SIGINT])
def test_signal_leaves_no_files(signo: int, vgg: Path, tmp_path: Path) -> None:
    """A signal while the solver runs: one line, exit 128 + signo, no output and no temporary file."""
    out = tmp_path / "out"
    out.mkdir()
    proc = subprocess.Popen([sys.executable, "-m", "remc.cli", "compile", "--cost", "flops", str(vgg), "--budget", "0.6MiB", "-o",
                             str(out / "o.onnx"), "--plan", str(out / "o.plan"), "--strategy", "approx"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, preexec_fn=_default_signals)
    while not any(out.iterdir()):  # the staging folder appears once the command has started
        assert proc.poll() is None, proc.communicate()
        time.sleep(0.05)
    proc.send_signal(signo)
    stdout, stderr = proc.communicate(timeout=300)
    assert proc.returncode == 128 + signo, (stdout, stderr)
    assert stderr.strip().splitlines() == [f"remc: interrupted by {signal.Signals(signo).name}"], stderr
    assert list(out.iterdir()) == []


def test_signal_while_writing_leaves_no_files(chain: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                              capsys: pytest.CaptureFixture) -> None:
    """SIGTERM arriving after the model is written and before the plan: neither lands, nothing is left."""
    from remc.ir import onnx_io
    real = onnx_io.save_model

    def save_then_signal(model: onnx.ModelProto, path: str | os.PathLike, **kw: object) -> None:
        real(model, path, **kw)
        assert Path(path).is_file()
        os.kill(os.getpid(), signal.SIGTERM)

    monkeypatch.setattr(onnx_io, "save_model", save_then_signal)
    out = tmp_path / "out"
    out.mkdir()
    rc = cli.main(["compile", "--cost", "flops", str(chain / "chain.onnx"), "--budget", "1MiB", "-o", str(out / "o.onnx"), "--plan",
                   str(out / "o.plan"), "--strategy", "checkpoint-all", "--granularity", "fine"])
    assert rc == 128 + signal.SIGTERM
    assert capsys.readouterr().err.strip() == "remc: interrupted by SIGTERM"
    assert list(out.iterdir()) == []
    assert signal.getsignal(signal.SIGTERM) == signal.SIG_DFL  # the handler is the caller's again


def test_outputs_land_together(chain: Path, tmp_path: Path) -> None:
    """Model and plan both appear, with nothing else beside them."""
    res = remc("compile", "--cost", "flops", str(chain / "chain.onnx"), "--budget", "1MiB", "-o", "o.onnx", "--plan", "o.plan",
               "--strategy", "checkpoint-all", "--granularity", "fine", cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    assert sorted(os.listdir(tmp_path)) == ["o.onnx", "o.plan"]


def test_signal_that_surfaces_as_another_exception(monkeypatch: pytest.MonkeyPatch,
                                                   capsys: pytest.CaptureFixture) -> None:
    """A signal during a C extension's import surfaces as ImportError ('initialization failed'), as seen
    with onnxruntime: still one line and exit 128 + signo, no traceback."""
    def interrupted_import(args: object) -> int:
        try:
            os.kill(os.getpid(), signal.SIGHUP)
        except BaseException as e:
            raise ImportError("initialization failed") from e
        return 0

    monkeypatch.setattr(cli, "cmd_zoo_list", interrupted_import)
    old = signal.signal(signal.SIGHUP, signal.SIG_DFL)  # as in a terminal (under nohup it is ignored, and stays so)
    try:
        assert cli.main(["zoo", "list"]) == 128 + signal.SIGHUP
    finally:
        signal.signal(signal.SIGHUP, old)
    assert capsys.readouterr().err.strip() == "remc: interrupted by SIGHUP"


def test_unexpected_errors_still_show_their_traceback(monkeypatch: pytest.MonkeyPatch) -> None:
    """Only known failures become one line; a bug elsewhere is not hidden."""
    def bug(args: object) -> int:
        raise ZeroDivisionError("a bug")

    monkeypatch.setattr(cli, "cmd_zoo_list", bug)
    with pytest.raises(ZeroDivisionError):
        cli.main(["zoo", "list"])


def test_fit_rounds_show_in_the_terminal(vgg: Path, tmp_path: Path) -> None:
    """Under a budget where the first plan's replayed arena is too big, the live display names the fit
    round and why it re-solves (the solver's clock restarts each round; without the note it looked like a
    solver gone back to zero), and the report gives the rounds."""
    # on ONNX Runtime's arena (remc's placement fits this budget in one round)
    # (FLOP costs, not timed ones: with timed costs the first plan's overrun depended on the machine; it fitted
    # with a developer's filled cost cache, and on the CI machine the second round was a slack round instead)
    (tmp_path / "home").mkdir()
    rc, text = run_in_pty(["compile", str(vgg), "--budget", "1.1MiB", "-o", str(tmp_path / "o.onnx"),
                           "--strategy", "approx", "--time-limit", "20", "--placement", "arena", "--cost", "flops"],
                          cwd=tmp_path,
                          HOME=str(tmp_path / "home"))
    assert rc == 0, text
    assert "fit round 2 (needed " in text, text
    rounds = int(text.split(" round(s)")[0].rsplit(", ", 1)[1])
    assert rounds >= 2


def test_the_demo_gives_its_compile_time_to_prove_the_plan_under_load() -> None:
    """With 20 s the demo's checkmate ended at "time_limit, gap 16.21%" at a load of 6-7 on 2 cores (the README
    shows "optimal"); with 40 s it proved the same schedule optimal at 24.5 s."""
    args = cli.build_parser("demo").parse_args(["demo"])
    assert args.time_limit >= 40


def test_demo_in_a_terminal_shows_its_steps(tmp_path: Path) -> None:
    """remc demo under a terminal says what it is doing (it was silent for minutes), then reports a plan
    that ran under a cap of the budget while the unmodified graph did not, and ends with training steps under
    that cap: the compiled step's losses equal the unmodified step's, its measured peak is the predicted one,
    and the unmodified step runs out of memory there."""
    rc, text = run_in_pty(["demo", "--strategy", "approx", "--time-limit", "10",
                           "--workdir", str(tmp_path / "demo")], cwd=tmp_path)
    assert rc == 0, text
    assert "Traceback" not in text
    for step in ("building the training graph of resnet50", "finding the least cap", "compiling for a budget of",
                 "running the compiled graph", "training 5 steps of each"):
        assert step in text, step
    assert "<= budget" in text and "the unmodified graph under the same cap: out of memory" in text, text
    assert "training 5 steps under a cap of the budget" in text and "losses equal step for step: True" in text
    train = text[text.index("training 5 steps under a cap"):]
    assert "  the unmodified graph under the same cap: out of memory" in train, train
    # on CPU the loop runs on remc's placement (backends.capi): measured = its layout's prediction, every
    # allocation at its planned address
    measured = int(train.split("peak measured ")[1].split(" ")[0])
    predicted = int(train.split("predicted ")[1].split(" ")[0])
    assert measured == predicted and "(<= budget:" in train, train
    planned, calls = train.split(" allocations at their planned address")[0].rsplit("; ", 1)[1].split(" of ")
    assert int(planned) == int(calls) > 0, train
    assert "outside remc's buffer" in train and "its CPU arena's max_mem = cap): out of memory" in train, train


def test_a_signal_while_the_cli_loads_is_one_line(tmp_path: Path) -> None:
    """Ctrl-C while ``remc`` imports its CLI (numpy, scipy, onnx: about half a second) ends with one line
    and 128 + SIGINT, not a KeyboardInterrupt traceback: the console entry point installs its handlers
    before that import. The signal is sent from inside the import, as a Ctrl-C at that moment would be."""
    code = (
        "import os, signal, sys\n"
        "signal.signal(signal.SIGINT, signal.default_int_handler)  # as in a terminal (a background job ignores it)\n"
        "class Finder:\n"
        "    def find_spec(self, name, path, target=None):\n"
        "        if name == 'remc.cli':\n"
        "            os.kill(os.getpid(), signal.SIGINT)\n"
        "        return None\n"
        "sys.meta_path.insert(0, Finder())\n"
        "sys.argv = ['remc', 'zoo', 'list']\n"
        "from remc.entry import main\n"
        "sys.exit(main())\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert r.returncode == 128 + signal.SIGINT, r.stderr
    assert r.stderr.strip() == "remc: interrupted by SIGINT"


def test_a_signal_while_the_parser_is_built_is_one_line(monkeypatch: pytest.MonkeyPatch,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    """Building the parser imports the strategies (scipy): a signal there is an interruption too."""
    def interrupted(command: str | None = None) -> None:
        os.kill(os.getpid(), signal.SIGTERM)

    monkeypatch.setattr(cli, "build_parser", interrupted)
    assert cli.main(["zoo", "list"]) == 128 + signal.SIGTERM
    assert capsys.readouterr().err.strip() == "remc: interrupted by SIGTERM"


def test_the_parser_of_one_command_parses_as_the_whole_parser() -> None:
    """``build_parser(command)`` defines only that subcommand (a shorter start); COMMANDS lists every one the
    whole parser has, and a command's own parser reads its arguments as the whole one does."""
    import argparse

    whole = cli.build_parser()
    action = next(a for a in whole._actions if isinstance(a, argparse._SubParsersAction))
    assert tuple(action.choices) == cli.COMMANDS
    for argv in (["solve", "g.json", "--budget", "0.9x", "--time-limit", "5", "--json"],
                 ["compile", "m.onnx", "--budget", "1GiB", "-o", "out.onnx"], ["zoo", "list"],
                 ["plan", "show", "p.plan"], ["run", "m.onnx"]):
        assert cli._command(argv) == argv[0]
        one = cli.build_parser(argv[0])
        mine, all_ = vars(one.parse_args(argv)), vars(whole.parse_args(argv))
        assert mine.pop("_parser", None) is not None or "_parser" not in all_  # (each parser's own subparser)
        all_.pop("_parser", None)
        assert mine == all_
    assert cli._command(["--version"]) is None and cli._command(["solv", "x"]) is None


def test_compile_budget_as_a_ratio_of_the_unmodified_graphs_need(vgg: Path, tmp_path: Path) -> None:
    """``remc compile --budget 0.97x``: ceil(0.97 x what the input graph needs on the device as it is, the cap
    ``remc run`` of it needs), and the plan runs under that cap."""
    import math

    from remc.backends.runtime import import_model
    from remc.fit import predict
    from remc.pipeline import shaped_model
    need = predict(shaped_model(import_model(str(vgg))), "cpu").total
    out = tmp_path / "o.onnx"
    res = remc("compile", str(vgg), "--budget", "0.97x", "-o", str(out), "--plan", str(tmp_path / "o.plan"),
               "--strategy", "approx", "--time-limit", "60", "--json", cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    rep = json.loads(res.stdout)
    assert rep["unmodified_need"] == need and rep["budget_ratio"] == 0.97
    assert rep["budget"] == math.ceil(0.97 * need), rep
    assert rep["arena_predicted"] <= rep["budget"]
    run = remc("run", str(out), "--plan", str(tmp_path / "o.plan"), cwd=tmp_path)  # the plan's budget as the cap
    assert run.returncode == 0, run.stderr
    assert "ran under a cap of " in run.stdout


def test_compile_budget_ratio_without_fit_is_of_checkpoint_all(chain: Path, tmp_path: Path) -> None:
    """With ``--no-fit`` (remc's live-bytes model only) the ratio is of checkpoint-all's peak (140 bytes for
    the chain at fine granularity): 0.93x is 131 bytes, and the report and the line say what the ratio is of."""
    rc, text = run_in_pty(["compile", "--cost", "flops", "--no-fit", str(chain / "chain.onnx"), "--budget", "0.93x",
                           "-o", str(tmp_path / "o.onnx"), "--granularity", "fine"], cwd=tmp_path)
    assert rc == 0, text
    assert "of budget 131 B (0.93x of 140 B, checkpoint-all, live bytes)" in text, text


def test_compile_ratio_below_the_least_feasible_says_it_as_a_ratio(vgg: Path, tmp_path: Path) -> None:
    """An infeasible ``--budget 0.5x``: one line that says what the ratio is of and the least feasible as a
    ratio; no output written."""
    res = remc("compile", str(vgg), "--budget", "0.5x", "-o", str(tmp_path / "o.onnx"), "--strategy", "approx",
               "--time-limit", "60", cwd=tmp_path)
    assert res.returncode != 0 and "Traceback" not in res.stderr
    assert re.search(r"--budget 0.5x is 0.5 x \d+ bytes, what the unmodified graph needs on cpu; every schedule "
                     r"needs at least \d+ bytes in remc's live-bytes model \(0\.\d+x\)", res.stderr), res.stderr
    assert not (tmp_path / "o.onnx").exists()


def test_a_ratio_budget_keeps_an_errors_class_whose_init_takes_more_than_a_message() -> None:
    """``--budget 0.9x``: the error is said again with the ratio (``_ratio_said``), of its own class and with its
    attributes. approx's LpUnfinished (its __init__ takes ``lp_bound``) came out as "TypeError: LpUnfinished.__init__()
    missing 1 required positional argument" on a torchvision swin_t at 0.9x, 60 s, loaded."""
    from remc.ir.errors import InfeasibleError, UnsupportedOpError
    from remc.passes.approx import LpUnfinished

    for err in (LpUnfinished("approx: the time limit passed", 1.5), UnsupportedOpError("Foo", "n0"),
                InfeasibleError("no schedule fits", 1200)):
        said = cli._ratio_said(err, 0.9, 1000, False, "cpu")
        assert type(said) is type(err) and said.__dict__ == err.__dict__
        assert str(said).startswith(str(err)) and "--budget 0.9x is 0.9 x 1000 bytes" in str(said)
    assert "(1.2x)" in str(said)  # the least feasible as a ratio


def test_an_error_says_when_the_time_limit_left_kernels_unmeasured() -> None:
    """A compile that fails with kernel signatures left unmeasured says so: the bytes its error gives lack their
    scratch and pre-packed weights (AlexNet b4 at --budget 0.8x: 438794919 bytes with its classifier's Gemm
    unmeasured, 546169101 once measured). The error keeps its class and attributes; no note, no change."""
    from remc.fit import KERNEL_NOTE
    from remc.ir.errors import InfeasibleError

    err = InfeasibleError("no schedule fits", 1200)
    note = f"{KERNEL_NOTE} the time limit left 3 of 40 op signatures unmeasured"
    said = cli._kernels_said(err, ["layout: something else", note])
    assert type(said) is InfeasibleError and said.least_feasible == 1200
    assert str(said) == f"no schedule fits; {note}"
    assert cli._kernels_said(err, ["layout: something else"]) is err
