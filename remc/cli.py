"""The ``remc`` command line. Every user-facing failure is one line on stderr and a non-zero exit."""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any, Sequence

from . import __version__
from .ir.errors import RemcError
from .ir.sizes import format_size, parse_size


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        return int(args.func(args) or 0)
    except RemcError as e:
        print(f"remc: error: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("remc: interrupted", file=sys.stderr)
        return 130
    except MemoryError:
        print("remc: error: out of memory", file=sys.stderr)
        return 1


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="remc", description="Rematerialization compiler for ONNX training graphs.")
    p.add_argument("--version", action="version", version=f"remc {__version__}")
    sub = p.add_subparsers(metavar="COMMAND")

    from .passes.strategies import STRATEGIES

    c = sub.add_parser("compile", help="schedule a training graph under a memory budget and emit ONNX")
    c.add_argument("model", help="training graph (.onnx)")
    c.add_argument("--budget", required=True, type=_size, help="memory budget, e.g. 6GiB, 512MiB or bytes")
    c.add_argument("-o", "--output", required=True, help="output ONNX file")
    c.add_argument("--plan", help="also write the execution plan (plan IR text) here")
    c.add_argument("--strategy", default="checkmate", choices=STRATEGIES)
    _graph_opts(c)
    _solver_opts(c)
    c.add_argument("--json", action="store_true", help="print the report as JSON")
    c.set_defaults(func=cmd_compile)

    s = sub.add_parser("solve", help="schedule a node-link JSON graph (Checkmate/Moccasin format)")
    s.add_argument("graph", help="node-link JSON graph")
    s.add_argument("--budget", required=True, type=_size)
    s.add_argument("--strategy", default="checkmate", choices=STRATEGIES)
    s.add_argument("--plan", help="write the execution plan here")
    _solver_opts(s)
    s.add_argument("--json", action="store_true")
    s.set_defaults(func=cmd_solve)

    pl = sub.add_parser("plan", help="inspect and check execution plans")
    psub = pl.add_subparsers(metavar="ACTION")
    show = psub.add_parser("show", help="print a plan with its peak, cost and recomputations")
    show.add_argument("file")
    show.add_argument("--json", action="store_true")
    show.set_defaults(func=cmd_plan_show)
    chk = psub.add_parser("check", help="validate a plan against its graph")
    chk.add_argument("file")
    chk.add_argument("--graph", required=True, help="the training graph the plan was made for")
    chk.add_argument("--batch", type=int)
    chk.add_argument("--budget", type=_size, help="check against this budget instead of the plan's")
    chk.add_argument("--device", choices=("cpu", "cuda"),
                     help="check as if the plan were compiled for this device (default: the plan's own "
                          "'device' line; its kernel scratch is part of the workspace)")
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
    g.add_argument("--batch", type=int)
    g.add_argument("-o", "--output", required=True)
    g.set_defaults(func=cmd_grad)

    z = sub.add_parser("zoo", help="the built-in model zoo")
    zsub = z.add_subparsers(metavar="ACTION")
    zl = zsub.add_parser("list", help="list the zoo models")
    zl.set_defaults(func=cmd_zoo_list)
    ze = zsub.add_parser("export", help="write a zoo model as ONNX")
    ze.add_argument("name")
    ze.add_argument("--batch", type=int, default=1)
    ze.add_argument("--train", action="store_true", help="write the training graph")
    ze.add_argument("--size", choices=("small", "paper"), default="paper",
                    help="test-sized model or the paper's sizes (default)")
    ze.add_argument("--shape-only", action="store_true", help="weights without data (for scheduling only)")
    ze.add_argument("-o", "--output", required=True)
    ze.set_defaults(func=cmd_zoo_export)

    mb = sub.add_parser("maxbatch", help="largest batch whose schedule fits a budget at <= 2 forward + backward")
    mb.add_argument("model", help="training graph (.onnx) with a symbolic batch dimension, or a zoo name")
    mb.add_argument("--budget", required=True, type=_size)
    mb.add_argument("--strategy", default="checkmate", choices=STRATEGIES)
    mb.add_argument("--cost", choices=("flops", "profile"), default="flops")
    mb.add_argument("--granularity", choices=("fine", "coarse"), default="coarse")
    _solver_opts(mb)
    mb.add_argument("--json", action="store_true")
    mb.set_defaults(func=cmd_maxbatch)

    d = sub.add_parser("demo", help="the main job: compile a zoo model under a budget and run it")
    d.add_argument("--model", default="resnet50", help="zoo model (default resnet50, test size)")
    d.add_argument("--fraction", type=float, default=0.7, help="budget as a fraction of the checkpoint-all peak")
    d.add_argument("--batch", type=int, default=8)
    d.add_argument("--strategy", default="checkmate", choices=STRATEGIES)
    d.add_argument("--time-limit", type=float, default=60.0)
    d.add_argument("--device", choices=("cpu", "cuda"), default="cpu")
    d.add_argument("--workdir", help="where to write the graphs and the plan (default: a temporary folder)")
    d.set_defaults(func=cmd_demo)

    r = sub.add_parser("run", help="run an ONNX graph on ONNX Runtime; measure peak memory and time")
    r.add_argument("model")
    r.add_argument("--device", choices=("cpu", "cuda"), default="cpu")
    r.add_argument("--compare", help="original training graph: check the outputs match")
    r.add_argument("--plan", help="the plan the graph was lowered from (for predicted peak and cost)")
    r.add_argument("--iters", type=int, default=10)
    r.add_argument("--mem-limit", type=_size, help="run under this memory limit (arena cap)")
    r.add_argument("--json", action="store_true")
    r.set_defaults(func=cmd_run)
    return p


def _size(text: str) -> int:
    try:
        return parse_size(text)
    except RemcError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def _graph_opts(p: argparse.ArgumentParser) -> None:
    p.add_argument("--batch", type=int, help="bind the symbolic batch dimension")
    p.add_argument("--granularity", choices=("fine", "coarse"), default="coarse",
                   help="schedule ONNX nodes (fine) or coarsened units (coarse, default)")
    p.add_argument("--cost", choices=("flops", "profile"), default="flops", help="cost model for C_v")
    p.add_argument("--device", choices=("cpu", "cuda"), default="cpu", help="device the plan is for: costs are profiled on it, and its kernel scratch is modeled")


def _solver_opts(p: argparse.ArgumentParser) -> None:
    p.add_argument("--time-limit", type=float, default=600.0,
                   help="checkmate/approx: wall-clock seconds for the whole solve (every phase)")
    p.add_argument("--threads", type=int, help="solver threads")
    p.add_argument("--gap", type=float, help="checkmate: stop at this relative gap on the recomputation overhead "
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
    return None


def _report(sched: Any, dag: Any, sim: Any, budget: int, seconds: float | None = None) -> dict[str, Any]:
    rep = sched.report
    total = dag.total_cost
    cost = sim.cost
    extra = {k: rep.extras[k] for k in ("rounded_cost", "rule") if k in rep.extras}  # approx: Algorithm 2's own
    return extra | {
        "strategy": sched.strategy, "status": rep.status or "heuristic", "cost": cost,
        "ideal_cost": total, "overhead": cost / total if total else 1.0, "peak": sim.peak,
        "budget": budget, "bound": rep.bound, "gap": rep.gap, "gap_measure": rep.gap_measure,
        "seconds": rep.seconds if rep.seconds is not None else seconds, "units": dag.n,
        "recomputes": int(sum(sim.recomputes.values())),
    }


def cmd_compile(args: argparse.Namespace) -> int:
    from .ir.onnx_io import save_model, write_text_atomic
    from .ir.plan import print_plan
    from .pipeline import State, compile_pipeline, run
    from .progress import solver_progress
    options = _strategy_options(args)
    with solver_progress(args.strategy, enabled=not args.json) as progress:
        passes = compile_pipeline(batch=args.batch, cost=args.cost, granularity=args.granularity,
                                  strategy=args.strategy, device=args.device, options=options, progress=progress)
        state = run(passes, State(model=args.model, budget=args.budget))
    if args.plan:
        write_text_atomic(args.plan, print_plan(state.plan))
    save_model(state.lowered, args.output)
    rep = _report(state.schedule, state.dag, state.sim, args.budget, state.timings.get("schedule"))
    rep["output"] = args.output
    _print_report(rep, args.json)
    return 0


def _print_report(rep: dict[str, Any], as_json: bool) -> None:
    if as_json:
        print(json.dumps(rep, indent=2, default=float))
        return
    line = (f"{rep['strategy']}: {rep['status']}, cost {rep['cost']:.4g} ({rep['overhead']:.3f}x of ideal), "
            f"peak {format_size(rep['peak'])} of budget {format_size(rep['budget'])}")
    if rep.get("bound") is not None:
        line += f", bound {rep['bound']:.4g}"
    if rep.get("gap") is not None:
        line += (f", gap {100 * rep['gap']:.2f}%" + (f" of the {rep['gap_measure']}" if rep.get("gap_measure") else "")
                 if rep["gap"] != float("inf") else ", no dual bound")
    if rep.get("seconds") is not None:
        line += f", {rep['seconds']:.2f} s"
    print(line)
    if rep.get("output"):
        print(f"wrote {rep['output']} ({rep['units']} units, {rep['recomputes']} recomputations)")


def cmd_solve(args: argparse.Namespace) -> int:
    from .ir.nodelink import load_nodelink
    from .ir.onnx_io import write_text_atomic
    from .ir.plan import print_plan
    from .passes.plangen import generate_plan
    from .backends.strategies import solve
    from .passes.validate import validate
    from .progress import solver_progress
    dag = load_nodelink(args.graph)
    options = _strategy_options(args)
    with solver_progress(args.strategy, enabled=not args.json) as progress:
        sched = solve(args.strategy, dag, args.budget, options, progress=progress)
    plan = generate_plan(dag, sched, graph_name=Path(args.graph).stem, budget=args.budget)
    sim = validate(plan, dag, budget=args.budget)
    if args.plan:
        write_text_atomic(args.plan, print_plan(plan))
    _print_report(_report(sched, dag, sim, args.budget), args.json)
    return 0


def cmd_plan_show(args: argparse.Namespace) -> int:
    from .ir.plan import parse_plan, print_plan
    from .passes.validate import simulate
    text = _read_text(args.file)
    plan = parse_plan(text)
    sim = simulate(plan)
    info = {"peak": sim.peak, "cost": sim.cost, "budget": plan.budget, "constant": plan.constant,
            "strategy": plan.strategy, "recomputes": {k: v for k, v in sim.recomputes.items() if v},
            "total_recomputes": int(sum(sim.recomputes.values()))}
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
    from .passes.validate import validate
    plan = parse_plan(_read_text(args.file))
    dag = dag_for_plan(plan, args.graph, args.batch, args.device)
    sim = validate(plan, dag, budget=args.budget or plan.budget)
    print(f"ok: peak {format_size(sim.peak)} ({sim.peak} bytes) within "
          f"{format_size(args.budget or plan.budget) if (args.budget or plan.budget) else 'no budget'}, "
          f"cost {sim.cost:.6g}, {int(sum(sim.recomputes.values()))} recomputations")
    return 0


def dag_for_plan(plan: Any, graph_path: str, batch: int | None, device: str | None = None) -> Any:
    """The DAG of ``graph_path`` partitioned as the plan's units say, with the plan's unit costs, for
    ``device`` (default: the plan's own), whose kernel scratch is part of the workspace.

    Memory and dependencies come from the graph alone; costs are the plan's (they are not a safety property
    and may come from a profile the checker cannot repeat).
    """
    from .backends.runtime import import_model
    return dag_for_graph(plan, import_model(graph_path, batch=batch), device)


def dag_for_graph(plan: Any, graph: Any, device: str | None = None) -> Any:
    """See dag_for_plan."""
    from .ir.errors import PlanError
    from .passes.dagbuild import build_dag
    by_name = {n.name: n for n in graph.nodes}
    units, costs = [], {}
    for u in plan.units:
        missing = [m for m in u.members if m not in by_name]
        if missing:
            raise PlanError(f"plan unit {u.name!r} names node {missing[0]!r}, which graph {graph.name!r} lacks")
        units.append([by_name[m] for m in u.members])
        for i, m in enumerate(u.members):
            costs[m] = u.cost if i == 0 else 0.0
    covered = {n for u in units for n in u}
    extra = [n.name for n in graph.nodes if n not in covered]
    if extra:
        raise PlanError(f"the plan does not cover node {extra[0]!r} of graph {graph.name!r} ({len(extra)} nodes)")
    return build_dag(graph, costs, units, granularity=plan.granularity, device=device or plan.device)


def _read_text(path: str) -> str:
    if path == "-":
        return sys.stdin.read()
    p = Path(path)
    if not p.is_file():
        raise RemcError(f"{path}: no such file")
    try:
        return p.read_text()
    except UnicodeDecodeError:
        raise RemcError(f"{path} is not a text file") from None


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
    from .ir.onnx_io import load_model, save_model
    from .passes.grad import build_training_graph
    model = load_model(args.model)
    train = build_training_graph(model, loss=args.loss, batch=args.batch)
    save_model(train, args.output)
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
    model = zoo.export(args.name, args.batch, train=args.train,
                       weights="shape-only" if args.shape_only else "random", **cfg)
    save_model(model, args.output)
    print(f"wrote {args.output}: {args.name} batch {args.batch}{' training graph' if args.train else ''}, "
          f"{len(model.graph.node)} nodes")
    return 0


def cmd_maxbatch(args: argparse.Namespace) -> int:
    from .maxbatch_cli import run_maxbatch
    rep = run_maxbatch(args.model, args.budget, args.strategy, cost=args.cost, granularity=args.granularity,
                       options=_strategy_options(args))
    if args.json:
        print(json.dumps(rep, indent=2, default=float))
    else:
        print(f"{rep['strategy']}: max batch {rep['batch']} under {format_size(rep['budget'])} "
              f"(peak {format_size(rep['peak'])}, cost {rep['cost']:.4g} <= limit {rep['cost_limit']:.4g})")
    return 0


def cmd_demo(args: argparse.Namespace) -> int:
    from .demo import demo_command
    return demo_command(args)


def cmd_run(args: argparse.Namespace) -> int:
    from .run_cli import run_command
    return run_command(args)


if __name__ == "__main__":
    sys.exit(main())
