"""The ``remc`` command line. Every user-facing failure is one line on stderr and a non-zero exit.

Usage errors (argparse) are one line too, exit 2. Files: a command checks its output paths before it
starts (no output may be an input or another output; remc/outputs.py) and writes all its outputs at the
end, together. SIGINT, SIGTERM and SIGHUP end a command with one line and exit 128 + the signal number,
after removing its temporary files.
"""
from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import signal
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, NoReturn

from . import __version__
from .ir.errors import ModelError, RemcError
from .ir.sizes import format_size, parse_size
from .plancheck import dag_for_graph, dag_for_plan  # noqa: F401  (dag_for_graph: tools/gpu_evidence.py)


class Interrupted(BaseException):
    """A terminating signal arrived (BaseException: no ``except Exception`` swallows it; cleanup runs)."""

    def __init__(self, signo: int) -> None:
        super().__init__(signo)
        self.signo = signo


_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


@contextlib.contextmanager
def _signals_raise(received: list[int]) -> Iterator[None]:
    """While the command runs, SIGINT/SIGTERM/SIGHUP raise Interrupted (so ``finally`` blocks remove
    temporary files) and are appended to ``received``; the previous handlers come back afterwards. Only in
    the main thread; a signal the process was started with ignored stays ignored."""
    def raise_interrupted(signo: int, frame: Any) -> NoReturn:
        received.append(signo)
        raise Interrupted(signo)

    old = {}
    try:
        for s in _SIGNALS:
            if signal.getsignal(s) != signal.SIG_IGN:  # ignored (nohup, a background job): stays ignored
                old[s] = signal.signal(s, raise_interrupted)
    except ValueError:  # not the main thread: leave the handlers alone
        pass
    try:
        yield
    finally:
        for s, h in old.items():
            signal.signal(s, h)


def main(argv: Sequence[str] | None = None) -> int:
    """The CLI on ``argv`` (None: ``sys.argv``, the console command, whose clock starts at the process's start:
    ``--time-limit`` counts Python's start-up and the imports; an in-process call's at this call)."""
    import time

    from .timebudget import process_age
    started = time.perf_counter() - (process_age() if argv is None else 0.0)
    received: list[int] = []
    try:
        with _signals_raise(received):  # building the parser imports numpy, scipy and onnx: a signal there too
            parser = build_parser(_command(sys.argv[1:] if argv is None else argv))
            try:
                args = parser.parse_args(argv)
            except SystemExit as e:  # --help, --version, or a usage error already printed in one line
                return int(e.code or 0) if not isinstance(e.code, str) else 2
            if not getattr(args, "func", None):
                sub = getattr(args, "_parser", parser)
                print(f"{sub.prog}: error: missing {'command' if sub is parser else 'action'} "
                      f"(see '{sub.prog} --help')", file=sys.stderr)
                return 2
            args.started_at = started
            return int(args.func(args) or 0)
    except BaseException as e:  # noqa: BLE001 (each kind is told apart below)
        return _failed(e, received)


def _failed(e: BaseException, received: list[int]) -> int:
    """The one line and exit status for an exception that ended a command (re-raised when unexpected).

    A signal can surface as another exception (Interrupted raised inside a C extension's import becomes
    an ImportError), so any exception after a received signal is the interruption."""
    if received or isinstance(e, (Interrupted, KeyboardInterrupt)):
        signo = received[0] if received else getattr(e, "signo", signal.SIGINT)
        print(f"remc: interrupted by {signal.Signals(signo).name}", file=sys.stderr)
        return 128 + signo
    if isinstance(e, RemcError):
        print(f"remc: error: {e}", file=sys.stderr)
        return 1
    if isinstance(e, MemoryError):
        print("remc: error: out of memory", file=sys.stderr)
        return 1
    if isinstance(e, BrokenPipeError):  # e.g. `remc plan show p | head`: the reader left; say nothing
        with contextlib.suppress(OSError):
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    if isinstance(e, OSError):
        where = f"{e.filename}: " if e.filename else ""
        print(f"remc: error: {where}{e.strerror or e}", file=sys.stderr)
        return 1
    raise e


class _Parser(argparse.ArgumentParser):
    """argparse with usage errors in one line: 'remc compile: error: ... (see 'remc compile --help')'."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see '{self.prog} --help')\n")


def _placement_opt(p: argparse.ArgumentParser) -> None:
    p.add_argument("--placement", choices=("remc", "arena"), default="remc",
                   help="where tensors live under the cap: 'remc' (default) lays every tensor out at its own "
                        "address in one buffer of the cap (CUDA: gpu_external_alloc; CPU: ONNX Runtime's C library "
                        "with remc's allocator); 'arena' uses ONNX "
                        "Runtime's BFC arena capped at the cap (fragmentation makes it need more)")
    prepack_option(p)


def prepack_option(p: argparse.ArgumentParser) -> None:
    """``--no-prepack`` (``DeviceSettings.prepack``)."""
    p.add_argument("--no-prepack", dest="prepack", action="store_false",
                   help="session.disable_prepacking=1 in every session: no packed copies of MatMul/Gemm weights "
                        "and ConvTranspose filters (CPU; kernel memory is measured that way, so the plan's prediction "
                        "holds only for runs with the same flag)")


def device_settings(args: argparse.Namespace):
    """The ``DeviceSettings`` a command's options ask for (built once, carried to every session). Where remc's
    CPU placement is asked for but cannot be used here, a note on stderr says why (the arena is used)."""
    from .backends.runtime import DeviceSettings
    settings = DeviceSettings(placement=getattr(args, "placement", "remc"), prepack=getattr(args, "prepack", True))
    if settings.placement == "remc" and str(getattr(args, "device", "cpu")).startswith("cpu"):
        from .backends import capi
        if not capi.available():
            try:
                capi.api()
            except RemcError as e:
                print(f"remc: note: remc's CPU placement is not available ({e}); ONNX Runtime's arena holds the "
                      "tensors", file=sys.stderr)
    return settings


COMMANDS = ("compile", "solve", "plan", "opt", "grad", "zoo", "maxbatch", "demo", "run", "train", "sweep")
"""The subcommands ``build_parser`` defines (tests/test_cli_user.py checks the two agree)."""


def _command(argv: Sequence[str]) -> str | None:
    """The subcommand that ``argv`` names (its first word that is not an option), None when it names none of
    COMMANDS (then ``build_parser`` defines them all, for the help or the error)."""
    word = next((a for a in argv if not a.startswith("-")), None)
    return word if word in COMMANDS else None


class _Sink:
    """Stands for a subcommand's parser that this invocation does not parse (``build_parser``'s ``command``):
    every call on it does nothing and returns it."""

    def __getattr__(self, name: str) -> Any:
        return self._absorb

    def _absorb(self, *args: Any, **kwargs: Any) -> _Sink:
        return self


class _OnlyCommand:
    """The subparsers action of ``build_parser``, which defines only subcommand ``command`` (all when None):
    the others' parsers are ``_Sink``s. Defining every subcommand's options was 0.02-0.06 s of `remc solve`'s
    start on a busy machine (the train and sweep modules imported for theirs; results/pub13)."""

    def __init__(self, action: Any, command: str | None) -> None:
        self.action, self.command = action, command

    def add_parser(self, name: str, **kwargs: Any) -> Any:
        if self.command is None or name == self.command:
            return self.action.add_parser(name, **kwargs)
        return _Sink()


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """remc's argument parser; with ``command`` (one of COMMANDS), only that subcommand is defined."""
    p = _Parser(prog="remc", description="Rematerialization compiler for ONNX training graphs.")
    p.add_argument("--version", action="version", version=f"remc {__version__}")
    sub: Any = _OnlyCommand(p.add_subparsers(metavar="COMMAND"), command)

    from .passes.strategies import STRATEGIES

    c = sub.add_parser("compile", help="schedule a training graph under a memory budget and emit ONNX")
    c.add_argument("model", help="training graph (.onnx)")
    c.add_argument("--budget", required=True, type=_size_or_ratio,
                   help="memory budget, e.g. 6GiB, 512MiB or bytes, or a ratio of what the unmodified graph needs "
                        "on the device (e.g. 0.8x; with --no-fit: of checkpoint-all's peak in remc's live-bytes "
                        "model)")
    c.add_argument("-o", "--output", required=True, help="output ONNX file")
    c.add_argument("--plan", help="also write the execution plan (plan IR text) here")
    c.add_argument("--strategy", default="checkmate", choices=STRATEGIES)
    _graph_opts(c)
    _solver_opts(c, "compile")
    c.add_argument("--verify", action="store_true",
                   help="run the lowered graph on the device under a cap of the budget; re-solve tighter if it "
                        "does not fit")
    c.add_argument("--no-fit", action="store_true",
                   help="check the budget against remc's live-bytes model only, not ONNX Runtime's arena (for "
                        "comparing schedulers; the output may not run under a cap of the budget)")
    _placement_opt(c)
    c.add_argument("--json", action="store_true", help="print the report as JSON")
    c.set_defaults(func=cmd_compile)

    s = sub.add_parser("solve", help="schedule a node-link JSON graph (Checkmate/Moccasin format)")
    s.add_argument("graph", help="node-link JSON graph")
    s.add_argument("--budget", required=True, type=_size_or_ratio,
                   help="memory budget in bytes (e.g. 37056, 512MiB), or a ratio of checkpoint-all's peak in the "
                        "file's topological order (e.g. 0.8x: ceil(0.8 x that peak), the protocol of Checkmate's "
                        "and Moccasin's evaluations); the report gives both")
    s.add_argument("--strategy", default="checkmate", choices=STRATEGIES)
    s.add_argument("--plan", help="write the execution plan here")
    _solver_opts(s, "solve")
    s.add_argument("--json", action="store_true")
    s.set_defaults(func=cmd_solve)

    pl = sub.add_parser("plan", help="inspect and check execution plans")
    pl.set_defaults(_parser=pl)
    psub = pl.add_subparsers(metavar="ACTION")
    show = psub.add_parser("show", help="print a plan with its peak, cost and recomputations")
    show.add_argument("file")
    show.add_argument("--graph", help="the training graph the plan was made for: check the plan against it "
                                      "(dependencies, use after free, memory); without it only the plan's own "
                                      "structure is checked")
    show.add_argument("--batch", type=_count)
    show.add_argument("--device", choices=("cpu", "cuda"), help="as for 'plan check'")
    show.add_argument("--json", action="store_true")
    show.add_argument("--plot", metavar="PNG", help="also draw the R/S matrices and the memory timeline here")
    show.add_argument("--run", metavar="ONNX", help="with --plot: run this graph (lowered from the plan) on the "
                                                    "plan's device and draw its measured memory too")
    show.set_defaults(func=cmd_plan_show)
    chk = psub.add_parser("check", help="validate a plan against its graph")
    chk.add_argument("file")
    chk.add_argument("--graph", required=True, help="the training graph the plan was made for")
    chk.add_argument("--batch", type=_count)
    chk.add_argument("--budget", type=_size, help="check against this budget instead of the plan's")
    chk.add_argument("--device", choices=("cpu", "cuda"),
                     help="check as if the plan were compiled for this device (default: the plan's own "
                          "'device' line; its kernel scratch is part of the workspace)")
    chk.add_argument("--live-only", action="store_true",
                     help="check remc's live-bytes model only, not the lowered graph's replayed ONNX Runtime arena "
                          "(as compile --no-fit does)")
    chk.set_defaults(func=cmd_plan_check)

    o = sub.add_parser("opt", help="run passes on a textual input and print the textual output (for tests)")
    o.add_argument("input", help="ONNX text syntax (graph) or plan IR text; '-' reads stdin")
    o.add_argument("-p", "--passes", required=True, help="pipeline, e.g. 'import,costs,units,schedule,plan'")
    o.add_argument("--graph", help="graph (ONNX text or binary) a plan input belongs to")
    o.add_argument("--budget", type=_size)
    o.set_defaults(func=cmd_opt)

    g = sub.add_parser("grad", help="build a training graph (forward + loss + backward) from a forward model")
    g.add_argument("model")
    g.add_argument("--loss", choices=("cross-entropy", "mse"), default="cross-entropy")
    g.add_argument("--batch", type=_count)
    g.add_argument("-o", "--output", required=True)
    g.add_argument("--logits", metavar="NAME", help="the model output the loss reads, where the model has several "
                                                    "(e.g. the main classifier of a model with auxiliary ones)")
    g.add_argument("--seed", type=int, help="seed of every random node (Dropout, RandomUniformLike, ...); "
                                            "default: nodes without a seed attribute get one from seed 0")
    g.set_defaults(func=cmd_grad)

    z = sub.add_parser("zoo", help="the built-in model zoo")
    z.set_defaults(_parser=z)
    zsub = z.add_subparsers(metavar="ACTION")
    zl = zsub.add_parser("list", help="list the zoo models")
    zl.set_defaults(func=cmd_zoo_list)
    ze = zsub.add_parser("export", help="write a zoo model as ONNX")
    ze.add_argument("name")
    ze.add_argument("--batch", type=_count, default=1)
    ze.add_argument("--train", action="store_true", help="write the training graph")
    ze.add_argument("--size", choices=("small", "paper"), default="paper",
                    help="test-sized model or the paper's sizes (default)")
    ze.add_argument("--shape-only", action="store_true", help="weights without data (for scheduling only)")
    ze.add_argument("--seed", type=int, help="seed of the random weights and of every random node (default 0)")
    ze.add_argument("-o", "--output", required=True)
    ze.set_defaults(func=cmd_zoo_export)

    mb = sub.add_parser("maxbatch", help="largest batch whose schedule fits a budget at <= 2 forward + backward")
    mb.add_argument("model", help="forward model or training graph (.onnx) with a symbolic batch dimension, or a "
                                  "zoo name; a forward model's training graph is built at each batch (--loss)")
    mb.add_argument("--loss", choices=("cross-entropy", "mse"), default="cross-entropy",
                    help="the loss of the training graph built for a forward model (as remc grad's)")
    mb.add_argument("--budget", required=True, type=_size)
    mb.add_argument("--strategy", default="checkmate",
                    help=f"one of {', '.join(STRATEGIES)} (with --plot: several, comma-separated)")
    mb.add_argument("--cost", choices=("flops", "profile"), default="flops")
    mb.add_argument("--granularity", choices=("fine", "coarse"), default="coarse")
    _solver_opts(mb, "maxbatch")
    mb.add_argument("--json", action="store_true")
    mb.add_argument("--plot", metavar="PNG", help="bar chart of several models x strategies (comma-separated), "
                                                  "the paper's Fig. 6; the rows go to <PNG stem>.json")
    mb.set_defaults(func=cmd_maxbatch)

    from .demo import DEMO_TIME_LIMIT
    d = sub.add_parser("demo", help="the main job: compile a zoo model's training step under a budget and "
                                    "train it under a cap of the budget")
    d.add_argument("--model", default="resnet50", help="zoo model (default resnet50, test size)")
    d.add_argument("--fraction", type=_fraction, default=0.9,
                   help="budget as a fraction (0 < f <= 1) of what the unmodified graph needs on ONNX Runtime")
    d.add_argument("--batch", type=_count, default=8)
    d.add_argument("--strategy", default="checkmate", choices=STRATEGIES)
    d.add_argument("--time-limit", type=_seconds, default=DEMO_TIME_LIMIT,
                   help=f"wall-clock seconds for the compile (default {DEMO_TIME_LIMIT:g}; checkmate ends sooner once "
                        "its schedule is proven optimal)")
    d.add_argument("--steps", type=_count, default=5, help="training steps under the cap (default 5)")
    d.add_argument("--device", choices=("cpu", "cuda"), default="cpu")
    d.add_argument("--workdir", help="where to write the graphs and the plan (default: a temporary folder)")
    _placement_opt(d)
    d.set_defaults(func=cmd_demo)

    r = sub.add_parser("run", help="run an ONNX graph on ONNX Runtime; measure peak memory and time")
    r.add_argument("model")
    r.add_argument("--device", choices=("cpu", "cuda"), default="cpu")
    r.add_argument("--compare", help="original training graph: check the outputs match (and check --plan "
                                     "against it)")
    r.add_argument("--plan", help="the plan the graph was lowered from (for predicted peak and cost)")
    r.add_argument("--iters", type=_count, default=10)
    r.add_argument("--batch", type=_count, help="bind the symbolic batch dimension of the inputs")
    r.add_argument("--mem-limit", type=_size, help="run under this memory limit, inputs and parameters included "
                   "(default with --plan: the plan's budget); the run fails when it needs more")
    r.add_argument("--no-cap", action="store_true", help="with --plan: run without the plan's budget as the cap")
    r.add_argument("--cuda-graph", action="store_true",
                   help="with --device cuda: also run the graph with CUDA graph capture and replay, on remc's layout "
                        "under the same cap (outputs bound at their planned addresses); measured vs predicted again")
    _placement_opt(r)
    r.add_argument("--json", action="store_true")
    r.set_defaults(func=cmd_run)

    if command in (None, "train"):
        from .train import add_parser as add_train_parser
        add_train_parser(sub, _size)
    if command in (None, "sweep"):
        from .sweep import add_parser as add_sweep_parser
        add_sweep_parser(sub)
    return p


def _size(text: str) -> int:
    """A size in bytes (ir/sizes.py: whole bytes, at least 1)."""
    try:
        return parse_size(text)
    except RemcError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def _size_or_ratio(text: str) -> int | float:
    """Bytes (``_size``), or a ratio written with a trailing 'x' ('0.8x'), returned as a float for the
    command to resolve against checkpoint-all's peak once it has the graph."""
    t = str(text).strip()
    if t[-1:].lower() != "x":
        return _size(t)
    try:
        ratio = float(t[:-1])
    except ValueError:
        raise argparse.ArgumentTypeError(f"cannot read ratio {text!r}: expected a number before 'x', such as "
                                         f"0.8x") from None
    if not (ratio > 0 and math.isfinite(ratio)):
        raise argparse.ArgumentTypeError(f"ratio {text!r} must be a positive number, such as 0.8x")
    return ratio


def _number(text: str, kind: type) -> Any:
    try:
        return kind(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not {'an integer' if kind is int else 'a number'}") from None


def _count(text: str) -> int:
    """An integer >= 1 (batch, threads, iterations)."""
    n = _number(text, int)
    if n < 1:
        raise argparse.ArgumentTypeError(f"{text!r} must be at least 1")
    return n


def _seconds(text: str) -> float:
    """A time limit: a finite number of seconds > 0."""
    x = _number(text, float)
    if not math.isfinite(x) or x <= 0:
        raise argparse.ArgumentTypeError(f"{text!r} must be a finite number of seconds above 0")
    return x


def _gap(text: str) -> float:
    """A relative MIP gap in [0, 1]."""
    x = _number(text, float)
    if not 0 <= x <= 1:  # NaN fails too
        raise argparse.ArgumentTypeError(f"{text!r} must be a relative gap from 0 to 1 (e.g. 0.01 for 1%)")
    return x


def _fraction(text: str) -> float:
    """A fraction in (0, 1]."""
    x = _number(text, float)
    if not 0 < x <= 1:
        raise argparse.ArgumentTypeError(f"{text!r} must be a fraction above 0 and at most 1")
    return x


def _graph_opts(p: argparse.ArgumentParser) -> None:
    p.add_argument("--batch", type=_count, help="bind the symbolic batch dimension")
    p.add_argument("--granularity", choices=("fine", "coarse"), default="coarse",
                   help="schedule ONNX nodes (fine) or coarsened units (coarse, default)")
    p.add_argument("--cost", choices=("auto", "flops", "profile"), default="auto",
                   help="cost model for C_v: profile (each op signature timed on the device, cached in "
                        "~/.cache/remc/costs), flops, or auto (default): profile when the device is on this "
                        "machine, else flops")
    p.add_argument("--device", choices=("cpu", "cuda"), default="cpu", help="device the plan is for: costs are profiled on it, and its kernel scratch is modeled")


_TIME_HELP = {
    "compile": "wall-clock seconds for the whole compile (profiling, kernel-memory measurement, every fit round's "
               "solve, writing); default 600. The live display shows the best schedule and its gap as it improves",
    "solve": "wall-clock seconds for the whole solve (baselines, bounds, every solver phase); default 600. The live "
             "display shows the best schedule and its gap as it improves",
    "maxbatch": "wall-clock seconds for each probed batch's solve (the search probes several batches); default "
                "600",
}


def _solver_opts(p: argparse.ArgumentParser, command: str) -> None:
    p.add_argument("--time-limit", type=_seconds, default=600.0, help=_TIME_HELP[command])
    p.add_argument("--threads", type=_count, help="solver threads")
    p.add_argument("--gap", type=_gap, help="checkmate: stop at this relative gap on the recomputation overhead "
                   "(cost minus computing every unit once); default 1e-4")
    p.add_argument("--solver", choices=("highs", "gurobi"), help="MILP backend (default highs)")
    p.add_argument("--no-refine", action="store_true",
                   help="approx: the paper's two-phase rounding alone, without the local search after it")


def _strategy_options(args: argparse.Namespace) -> Any:
    """The strategy's typed options from the command line (validated; None for a baseline)."""
    from .backends.strategies import make_options
    if args.strategy == "checkmate":
        return make_options("checkmate", time_limit=args.time_limit, threads=args.threads, gap=args.gap,
                            solver=args.solver)
    if args.strategy == "approx":
        return make_options("approx", time_limit=args.time_limit, threads=args.threads,
                            refine=False if args.no_refine else None)
    if args.strategy == "cpsat":
        return make_options("cpsat", time_limit=args.time_limit, threads=args.threads, gap=args.gap)
    return None


def _report(sched: Any, dag: Any, sim: Any, budget: int, seconds: float | None = None) -> dict[str, Any]:
    rep = sched.report
    total = dag.total_cost
    cost = sim.cost
    extra = {k: rep.extras[k] for k in ("rounded_cost", "rule", "portfolio", "bound_c", "gap_c", "bound_scope",
                                         "late_baseline")
             if k in rep.extras}  # approx: Algorithm 2's own; cpsat: the bound within its C computations per unit
    return extra | {
        "strategy": sched.strategy, "status": rep.status or "heuristic", "cost": cost,
        "ideal_cost": total, "overhead": cost / total if total else 1.0, "peak": sim.peak,
        "budget": budget, "bound": rep.bound, "gap": rep.gap, "gap_measure": rep.gap_measure,
        "seconds": rep.seconds if rep.seconds is not None else seconds, "units": dag.n,
        "recomputes": int(sum(sim.recomputes.values())),
    }


def resolve_cost(cost: str, device: str) -> str:
    """The cost model ``--cost`` names: 'auto' is 'profile' when ``device`` is on this machine (CPU always;
    CUDA when onnxruntime has its provider), else 'flops' (said on stderr)."""
    if cost != "auto":
        return cost
    if device.startswith("cuda"):
        from .backends.runtime import cuda_available
        if not cuda_available():
            print("remc: note: no CUDA device here to profile on; costs are FLOPs (--cost profile on the device, "
                  "or --cost flops to silence this)", file=sys.stderr)
            return "flops"
    return "profile"


def cmd_compile(args: argparse.Namespace) -> int:
    from .fit import compile_fit, run_round
    from .ir.onnx_io import save_model
    from .ir.plan import print_plan
    from .outputs import Outputs
    from .pipeline import State, compile_pipeline, run, stages
    from .progress import compile_status, solver_progress
    from .timebudget import ONLY_ROUND_SHARE, CompileClock, process_age
    from .training_graph import forward_only_hint
    # --time-limit covers the whole compile from the process's start (remc/timebudget.py)
    clock = CompileClock(args.time_limit, started_ago=process_age())
    options = _strategy_options(args)
    settings = device_settings(args)
    with Outputs([("-o", args.output), ("--plan", args.plan)], inputs=[args.model]) as out:
        with solver_progress(args.strategy, enabled=not args.json) as progress:
            cost = resolve_cost(args.cost, args.device)
            shown = compile_status(progress, args.device, cost, kernels_first=not args.no_fit)
            passes = compile_pipeline(batch=args.batch, cost=cost,
                                      granularity=args.granularity,
                                      strategy=args.strategy, device=args.device, options=options,
                                      progress=progress)
            ratio = args.budget if isinstance(args.budget, float) else None
            def on_pass(p, st) -> None:
                _require_training_graph(p.name, st, args.model)
                shown(p.name)
            try:
                state = run(stages(passes, last="import"),
                            State(model=args.model, budget=None if ratio is not None else args.budget, clock=clock),
                            on_pass=on_pass)
                if not args.no_fit:  # kernel memory before op costs (remc/timebudget.py)
                    from .fit import measure_kernels_first
                    measure_kernels_first(state, args.device, settings)
                    shown("kernel memory")
                state = run(stages(passes, first="costs", last="units"), state, on_pass=on_pass)
            except ModelError as e:  # a forward model may fail shape inference before the check above
                raise ModelError(f"{e}{forward_only_hint(args.model)}") from None
            unmodified = None
            if ratio is not None:
                unmodified = _unmodified_need(state, args.device, settings, live_only=args.no_fit)
                state.budget = resolve_budget(ratio, unmodified)
            rest = stages(passes, first="schedule")
            try:
                if args.no_fit:
                    run_round(rest, state, clock, share=ONLY_ROUND_SHARE)
                    fit = None
                else:  # re-solve until the replayed arena fits the budget (and, with --verify, the device run)
                    from .progress import fit_round_note
                    fit = compile_fit(rest, state, device=args.device, verify=args.verify,
                                      on_round=fit_round_note(progress), settings=settings)
            except RemcError as e:
                e = _kernels_said(e, clock.notes)
                if ratio is None or unmodified is None:
                    raise e from None
                raise _ratio_said(e, ratio, unmodified, args.no_fit, args.device) from None
        t0 = clock.elapsed()
        lay = fit.prediction.layout if fit is not None and fit.prediction is not None else None
        if lay is not None:  # the run uses these offsets when its own events are the same (plan_layout)
            from .backends.placement import store_layout
            store_layout(state.lowered, lay, args.device, settings)
        from .plancheck import stamp_plan
        plan_text = print_plan(state.plan)
        stamp_plan(state.lowered, plan_text)  # `remc run --plan` refuses another compile's plan
        # the model first (its external data beside it): the plan never lands alone
        save_model(state.lowered, out.staged(args.output), data_dir=Path(args.model).parent)
        if args.plan:
            out.staged(args.plan).write_text(plan_text)
        out.commit()
        clock.record("write", t0)
    solves = [p.seconds for p in clock.phases if p.name == "schedule"]
    rep = _report(state.schedule, state.dag, state.sim, state.budget if fit is None else fit.budget)
    if ratio is not None:
        rep.update(budget_ratio=ratio, unmodified_need=unmodified,
                   unmodified_measure="checkpoint-all, live bytes" if args.no_fit else f"the unmodified graph on {args.device}")
    # "seconds": the whole compile, every phase; "solve_seconds": the solves of every fit round
    summary = clock.summary()
    rep.update(seconds=summary["seconds"], solve_seconds=sum(solves), time=summary, time_text=clock.text(),
               output=args.output)
    if fit is not None:
        p = fit.prediction
        rep.update(solver_budget=fit.solver_budget, fit_rounds=fit.rounds, verified=fit.verified,
                   arena_predicted=p.total if p else None, kernel_memory_measured=p.kernel_measured if p else None,
                   kernels_unmeasured=p.kernels_unmeasured if p else None,
                   device_model="remc's layout" if p is not None and p.placement == "remc" else "replayed arena")
    _print_report(rep, args.json)
    return 0


def _ratio_said(err: RemcError, ratio: float, unmodified: int, live_only: bool, device: str) -> RemcError:
    """``err`` (of the same type, its attributes kept) for ``--budget 0.8x``, with what the ratio was of and,
    where the error gives one, the least feasible budget as a ratio."""
    of = "checkpoint-all's peak in remc's live-bytes model" if live_only else f"what the unmodified graph needs on {device}"
    why = f"{err}; --budget {ratio:g}x is {ratio:g} x {unmodified} bytes, {of}"
    least = getattr(err, "least_feasible", None)
    if least is not None:
        why += (f"; every schedule needs at least {least} bytes in remc's live-bytes model "
                f"({math.ceil(1000 * least / unmodified) / 1000:g}x)")
    return _restated(err, why)


def _kernels_said(err: RemcError, notes: list[str]) -> RemcError:
    """``err`` with the clock's note on kernel signatures the time limit left unmeasured, where there is one: the
    bytes the error gives (least feasible, what the unmodified graph needs) then lack their scratch and pre-packed
    weights (AlexNet b4 from torchvision at --budget 0.8x: 438794919 bytes with its classifier's Gemm unmeasured,
    546169101 once measured; the first error said nothing of it)."""
    from .fit import KERNEL_NOTE
    said = [n for n in notes if n.startswith(KERNEL_NOTE)]
    return _restated(err, f"{err}; {said[0]}") if said else err


def _restated(err: RemcError, why: str) -> RemcError:
    """A new exception of ``err``'s class saying ``why``, its attributes kept (BaseException.__new__ sets its
    args), without calling its __init__: copy.copy(err) calls type(err)(*err.args), which fails for a class
    whose __init__ takes more than the message (approx's LpUnfinished and its lp_bound: a TypeError traceback
    in place of the error)."""
    said = type(err).__new__(type(err), why)
    said.__dict__.update(err.__dict__)
    return said


def _unmodified_need(state: Any, device: str, settings: Any, *, live_only: bool) -> int:
    """What ``remc compile --budget 0.8x`` takes the ratio of: what the unmodified graph needs on ``device``
    (``fit.unmodified_need``: the cap ``remc run`` of the input would need), or with ``live_only``
    (``--no-fit``) checkpoint-all's peak in remc's live-bytes model."""
    if live_only:
        from .ir.schedule import checkpoint_all
        return int(checkpoint_all(state.dag).peak(state.dag))
    from .fit import unmodified_need
    return unmodified_need(state, device, settings)


def _require_training_graph(stage: str, state: Any, model: str) -> None:
    """After import: refuse a graph without a backward pass: no node depends on the loss (a graph output
    named 'loss' or its only scalar float output), or there is no loss, and no node is named as
    ``remc grad`` names backward nodes."""
    if stage != "import":
        return
    from .passes.dagbuild import forward_nodes
    from .passes.grad import BACKWARD_MARKER
    if any(BACKWARD_MARKER in n.name for n in state.graph.nodes):
        return
    if len(forward_nodes(state.graph)) == len(state.graph.nodes):
        raise RemcError(f"{model} is not a training graph (no backward pass after a loss output); "
                        f"build one with 'remc grad {model} -o train.onnx' and compile that")


def _print_report(rep: dict[str, Any], as_json: bool) -> None:
    if as_json:
        print(json.dumps(rep, indent=2, default=float))
        return
    line = (f"{rep['strategy']}: {rep['status']}, cost {rep['cost']:.4g} ({rep['overhead']:.3f}x of ideal), "
            f"peak {format_size(rep['peak'])} of budget {format_size(rep['budget'])}")
    if rep.get("budget_ratio") is not None and rep.get("unmodified_need") is not None:
        line += f" ({rep['budget_ratio']:g}x of {format_size(rep['unmodified_need'])}, {rep['unmodified_measure']})"
    elif rep.get("budget_ratio") is not None:
        where = {"graph.order": "the file's graph.order", "file": "the file's node order"}.get(rep.get("order"),
                                                                                              rep.get("order"))
        line += (f" ({rep['budget_ratio']:g}x of checkpoint-all's {format_size(rep['checkpoint_all_peak'])}"
                 + (f" in {where})" if where else ")"))
    if rep.get("bound") is not None:
        line += f", bound {rep['bound']:.4g}"
    if rep.get("gap") is not None:
        line += (f", gap {100 * rep['gap']:.2f}%" + (f" of the {rep['gap_measure']}" if rep.get("gap_measure") else "")
                 if rep["gap"] != float("inf") else ", no dual bound")
    if rep.get("seconds") is not None:
        line += f", {rep['seconds']:.2f} s"
        if rep.get("time_limit") is not None:
            line += f" of the {rep['time_limit']:g} s limit"
    if rep.get("peak_rss_mib") is not None:
        line += f", peak memory {rep['peak_rss_mib']:.0f} MiB"
    print(line)
    if rep.get("bound_c") is not None and rep.get("bound_scope", "all schedules") != "all schedules":
        print(f"note: among {rep['bound_scope']}: bound {rep['bound_c']:.4g}, gap {100 * rep['gap_c']:.2f}% of the "
              f"overhead (the bound above holds for every schedule)")
    if rep.get("portfolio"):
        print(f"note: {rep['strategy']} ran {rep['portfolio']}")
    if rep.get("late_baseline"):
        print(f"note: the time limit passed before {rep['strategy']} had a schedule within the budget: this is the "
              f"{rep['late_baseline']} baseline, the first that fits (quickest first), taken past the limit")
    if rep.get("arena_predicted") is not None:
        print(f"on ONNX Runtime: predicted {format_size(rep['arena_predicted'])} ({rep.get('device_model', 'replayed arena')} plus inputs and "
              f"parameters) within the budget; solver budget {format_size(rep['solver_budget'])}, "
              f"{rep['fit_rounds']} round(s)" + ("" if rep.get("verified") is None else
                                                 ", verified by a run under the cap" if rep["verified"] else ""))
        if rep.get("kernel_memory_measured") is False:
            print("note: this machine has no such device, so kernel scratch is not in the prediction; compile "
                  "on the device (or run with --verify there) to fit its cap")
    if rep.get("output"):
        print(f"wrote {rep['output']} ({rep['units']} units, {rep['recomputes']} recomputations)")
    if rep.get("time_text"):
        print(rep["time_text"])
        for note in rep["time"]["notes"]:
            print(f"note: {note}")


def cmd_solve(args: argparse.Namespace) -> int:
    import time

    from .backends.strategies import solve
    from .ir.nodelink import load_nodelink
    from .ir.plan import print_plan
    from .ir.schedule import checkpoint_all
    from .outputs import Outputs
    from .passes.plangen import generate_plan
    from .passes.validate import validate
    from .progress import solver_progress
    options = _strategy_options(args)
    started = getattr(args, "started_at", time.perf_counter())
    with Outputs([("--plan", args.plan)], inputs=[args.graph]) as out:
        dag = load_nodelink(args.graph)
        topo_peak = checkpoint_all(dag).peak(dag)
        budget = resolve_budget(args.budget, topo_peak)
        options = _solve_clock(options, dag.n, time.perf_counter() - started)
        with solver_progress(args.strategy, enabled=not args.json) as progress:
            sched = solve(args.strategy, dag, budget, options, progress=progress)
        plan = generate_plan(dag, sched, graph_name=Path(args.graph).stem, budget=budget)
        sim = validate(plan, dag, budget=budget)
        if args.plan:
            out.staged(args.plan).write_text(print_plan(plan))
            out.commit()
    rep = _report(sched, dag, sim, budget) | {"checkpoint_all_peak": topo_peak, "order": dag.meta.get("order")}
    if getattr(options, "time_limit", None) is not None:
        # the user's wall clock: the process from its start (Python's, the imports, the graph read, the solve,
        # the plan and its validation), against --time-limit; the strategy's own seconds beside it
        rep |= {"seconds": time.perf_counter() - started, "solve_seconds": sched.report.seconds,
                "time_limit": args.time_limit}
    rep["peak_rss_mib"] = sched.report.extras.get("peak_rss_mib")
    if isinstance(args.budget, float):
        rep["budget_ratio"] = args.budget
    _print_report(rep, args.json)
    return 0


PLAN_SECONDS_PER_UNIT2 = 1.5e-6
"""Seconds per squared unit that ``remc solve`` keeps, after the solve, for the plan's generation and validation
(random layered n = 1000: 0.75 s for checkpoint-all's plan, 2 cores under load)."""
EXIT_SECONDS = 0.3
"""Seconds ``remc solve`` keeps, after the plan, for the report and the process's exit; with the plan's, times the
load per core (``load_per_core``): Moccasin's n=250 at 30 s, a load of 9 on 2 cores, the process ended 1.3-2.3 s
after its report's ``seconds`` (0.09 s of plan estimate kept)."""
RESERVE_SHARE = 0.25
"""Most of ``--time-limit`` that reserve after the solve may take: at a load of 15 on 2 cores, Moccasin's n=1000 with
20 s, (1.5 s + 0.3 s) x 7.5 left the solve 2.4 s, and cpsat ended at 10.5 s with no schedule."""
MIN_SOLVE_SECONDS = 0.05
"""Least time limit the solve gets (a strategy with no time returns its incumbent at once)."""


def _solve_clock(options: Any, units: int, age: float) -> Any:
    """``options`` with the time limit the solve gets of ``--time-limit``: what the process has run so far
    (``age``: Python's start-up, the imports, the graph read) and the plan's generation and validation after
    it (``PLAN_SECONDS_PER_UNIT2``, ``EXIT_SECONDS``, times the load per core, at most ``RESERVE_SHARE`` of the limit)
    come off, so that the whole process ends within the limit."""
    import dataclasses

    from .passes.solver_api import load_per_core
    limit = getattr(options, "time_limit", None)
    if limit is None:
        return options
    after = min((PLAN_SECONDS_PER_UNIT2 * units * units + EXIT_SECONDS) * load_per_core(), RESERVE_SHARE * limit)
    return dataclasses.replace(options, time_limit=max(limit - age - after, MIN_SOLVE_SECONDS))


def resolve_budget(budget: int | float, topo_peak: int) -> int:
    """Bytes of ``--budget``: as given, or ceil(ratio x ``topo_peak``) for a ratio (a float from
    ``_size_or_ratio``), at least 1 byte."""
    if isinstance(budget, float):
        return max(1, math.ceil(budget * topo_peak))
    return budget


def cmd_plan_show(args: argparse.Namespace) -> int:
    from .ir.plan import parse_plan, print_plan
    from .passes.validate import simulate
    from .plancheck import check_plan
    text = _read_text(args.file)
    plan = parse_plan(text)
    # Without the graph only the plan's own structure is checked: registers, frees, the unit table
    # (not dependencies: a swapped dependency or a use after free needs the graph's edges).
    sim = check_plan(plan, args.graph, args.batch, args.device) if args.graph else simulate(plan)
    info = {"peak": sim.peak, "cost": sim.cost, "budget": plan.budget, "constant": plan.constant,
            "strategy": plan.strategy, "recomputes": {k: v for k, v in sim.recomputes.items() if v},
            "total_recomputes": int(sum(sim.recomputes.values())), "checked_against": args.graph}
    if args.plot:
        from .plots import measured_timeline, plot_plan
        measured = None
        if args.run:
            from .backends.runtime import measure
            res = measure(args.run, plan.device, iters=1, warmup=0, mem_method="profiler")
            offset = -(res.baseline or 0) + res.input_bytes + res.initializer_bytes  # remc's accounting
            measured = measured_timeline(plan, res.node_in_use, offset)
        plot_plan(plan, args.plot, measured=measured)
    alloc = _allocation(plan)
    if alloc is not None:
        info["arena"] = alloc.arena_size
        info["fragmentation"] = alloc.fragmentation
    if args.json:
        print(json.dumps(info, indent=2, default=float))
        return 0
    print(f"peak {format_size(sim.peak)} ({sim.peak} bytes), cost {sim.cost:.6g}, "
          f"budget {format_size(plan.budget) if plan.budget else 'none'}, "
          f"{info['total_recomputes']} recomputations")
    print(f"checked against graph {args.graph}: ok" if args.graph else
          "not checked against its graph (dependencies and frees unverified; give --graph GRAPH to check)")
    if alloc is not None:
        print(f"arena {format_size(alloc.arena_size)} for {format_size(alloc.live_peak)} of live bytes "
              f"(fragmentation {100 * alloc.fragmentation:.1f}%)")
    for unit, k in sorted(info["recomputes"].items(), key=lambda kv: -kv[1])[:20]:
        print(f"  recomputed {k}x: {unit}")
    print(print_plan(plan), end="")
    return 0


def _allocation(plan: Any) -> Any:
    try:
        from .passes.alloc import allocate
    except ImportError:
        return None
    return allocate(plan)


def cmd_plan_check(args: argparse.Namespace) -> int:
    from .ir.plan import parse_plan
    from .plancheck import check_plan_on_device
    plan = parse_plan(_read_text(args.file))
    chk = check_plan_on_device(plan, args.graph, args.batch, args.device, budget=args.budget or plan.budget,
                               arena=not args.live_only)
    sim, budget = chk.sim, chk.budget
    print(f"ok: peak {format_size(sim.peak)} ({sim.peak} bytes) within "
          f"{format_size(budget) if budget else 'no budget'} in remc's live-bytes model, "
          f"cost {sim.cost:.6g}, {int(sum(sim.recomputes.values()))} recomputations")
    if chk.arena is not None:
        p = chk.arena
        what = "remc's layout" if p.placement == "remc" else "replayed arena"
        print(f"ok: on ONNX Runtime {chk.device} the lowered graph needs {format_size(p.total)} ({p.total} bytes: "
              f"{what} {p.arena} + {p.outside} outside it) within the budget"
              + ("" if p.kernel_measured else "; kernel scratch not measured (no such device here)"))
    else:
        print("not checked: ONNX Runtime's arena (" + ("--live-only" if args.live_only else "the plan has no budget")
              + "); a run under a cap of the budget may need more")
    return 0


def _read_text(path: str) -> str:
    if path == "-":
        return sys.stdin.read()
    from .outputs import check_readable
    p = Path(path)
    check_readable(p)
    if not p.is_file():
        raise RemcError(f"{path}: no such file")
    try:
        return p.read_text()
    except UnicodeDecodeError:
        raise RemcError(f"{path} is not a text file") from None
    except OSError as e:
        raise RemcError(f"{path}: cannot read ({e.strerror or e})") from None


def cmd_opt(args: argparse.Namespace) -> int:
    from .ir.plan import parse_plan, print_plan
    from .pipeline import State, parse_pipeline, run
    passes = parse_pipeline(args.passes)
    text = _read_text(args.input)
    state = State(budget=args.budget)
    if passes and passes[0].name == "import":
        state.model = _onnx_from_text(text)
    else:
        state.plan = parse_plan(text)
        if args.graph:
            from .backends.runtime import import_model
            graph_text = args.graph.endswith((".txt", ".onnxtxt"))
            state.graph = import_model(_onnx_from_text(_read_text(args.graph)) if graph_text else args.graph)
            state.dag = dag_for_graph(state.plan, state.graph)
    run(passes, state)
    if state.lowered is not None and passes[-1].name == "lower":
        import onnx.printer
        print(onnx.printer.to_text(state.lowered.graph))
    elif state.plan is not None:
        print(print_plan(state.plan), end="")
    elif state.dag is not None:
        from .ir.nodelink import dump_nodelink
        print(dump_nodelink(state.dag))
    elif state.graph is not None:
        import onnx.printer

        from .ir.onnx_io import export_model
        print(onnx.printer.to_text(export_model(state.graph).graph))
    return 0


def _onnx_from_text(text: str) -> Any:
    import onnx.parser
    try:
        return onnx.parser.parse_model(text)
    except Exception as e:  # onnx.parser raises a bare ParseError type from C++
        raise RemcError(f"cannot parse ONNX text: {str(e).strip().splitlines()[0]}") from None


def cmd_grad(args: argparse.Namespace) -> int:
    from .ir.onnx_io import inline_external_data, load_model, save_model
    from .outputs import Outputs
    from .passes.grad import build_training_graph
    with Outputs([("-o", args.output)], inputs=[args.model]) as out:
        # small external tensors (Dropout ratios, shapes) are constants the gradient rules must read
        model = inline_external_data(load_model(args.model), Path(args.model).parent, max_bytes=1 << 20)
        train = build_training_graph(model, loss=args.loss, batch=args.batch, seed=args.seed, logits=args.logits)
        save_model(train, out.staged(args.output), data_dir=Path(args.model).parent)
        out.commit()
    print(f"wrote {args.output}: {len(train.graph.node)} nodes, outputs "
          f"{', '.join(o.name for o in train.graph.output[:4])}{' ...' if len(train.graph.output) > 4 else ''}")
    return 0


def cmd_zoo_list(args: argparse.Namespace) -> int:
    from . import zoo
    for name in zoo.list_models():
        cfg = zoo.paper_config(name)
        print(f"{name:14s} paper: {', '.join(f'{k}={v}' for k, v in cfg.items())}")
    return 0


def cmd_zoo_export(args: argparse.Namespace) -> int:
    from . import zoo
    from .ir.onnx_io import save_model
    if args.name not in zoo.list_models():
        raise RemcError(f"unknown zoo model {args.name!r}; models: {', '.join(zoo.list_models())}")
    cfg = dict(zoo.small_config(args.name) if args.size == "small" else zoo.paper_config(args.name))
    cfg.pop("batch", None)
    if args.seed is not None:
        cfg["seed"] = args.seed
    from .outputs import Outputs
    with Outputs([("-o", args.output)]) as out:
        model = zoo.export(args.name, args.batch, train=args.train,
                           weights="shape-only" if args.shape_only else "random", **cfg)
        save_model(model, out.staged(args.output))
        out.commit()
    print(f"wrote {args.output}: {args.name} batch {args.batch}{' training graph' if args.train else ''}, "
          f"{len(model.graph.node)} nodes")
    return 0


def cmd_maxbatch(args: argparse.Namespace) -> int:
    from .maxbatch_cli import maxbatch_chart, run_maxbatch
    from .passes.strategies import STRATEGIES
    strategies = args.strategy.split(",")
    unknown = [s for s in strategies if s not in STRATEGIES]
    if unknown or (len(strategies) > 1 and not args.plot):
        raise RemcError(f"unknown strategy {unknown[0]!r}; choose from {', '.join(STRATEGIES)}" if unknown
                        else "several strategies need --plot")
    if args.plot:  # several models and strategies (comma-separated): the paper's Fig. 6
        def row(r: dict) -> None:
            print(f"{r['model']:12s} {r['strategy']:15s} max batch {r['batch']}", flush=True)
        kw = {"time_limit": args.time_limit} | ({"threads": args.threads} if args.threads else {})
        maxbatch_chart(args.model.split(","), strategies, args.budget, args.plot, cost=args.cost,
                       granularity=args.granularity, solver_kwargs=kw, on_row=row, loss=args.loss)
        print(f"wrote {args.plot}")
        return 0
    rep = run_maxbatch(args.model, args.budget, args.strategy, cost=args.cost, granularity=args.granularity,
                       options=_strategy_options(args), loss=args.loss)
    if args.json:
        print(json.dumps(rep, indent=2, default=float))
    else:
        print(f"{rep['strategy']}: max batch {rep['batch']} under {format_size(rep['budget'])} "
              f"(peak {format_size(rep['peak'])}, cost {rep['cost']:.4g} <= limit {rep['cost_limit']:.4g})"
              + ("" if rep.get("training_graph") != f"built by remc grad, loss {args.loss}"
                 else f"; training graph built by remc grad, loss {args.loss}"))
    return 0


def cmd_demo(args: argparse.Namespace) -> int:
    from .demo import demo_command
    return demo_command(args)


def cmd_run(args: argparse.Namespace) -> int:
    from .run_cli import run_command
    return run_command(args)


if __name__ == "__main__":
    sys.exit(main())
