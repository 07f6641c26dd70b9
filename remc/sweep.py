"""``remc sweep``: every strategy at several budgets of one model, as a table and the paper's Fig. 5.

The model is imported, costed and partitioned once (the compile pipeline's first three passes); each
budget is a fraction of its checkpoint-all peak; every strategy's schedule is checked (``ir.schedule.
check``) and its overhead is its cost over the cost of one forward + backward pass. Budgets where a
strategy finds no schedule are rows with status "infeasible" (or "error", with the message).
Writes ``<out>.csv``, ``<out>.json`` and, with matplotlib, ``<out>.png``.
"""
from __future__ import annotations

import argparse
import csv
import io
import json
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any

from .ir.errors import InfeasibleError, PlanError, RemcError
from .ir.sizes import format_size


@dataclass(frozen=True)
class SweepRow:
    """One strategy at one budget."""

    strategy: str
    fraction: float
    budget: int
    status: str
    overhead: float | None = None
    peak: int | None = None
    gap: float | None = None
    seconds: float = 0.0
    error: str = ""


def load_state(model: str, *, size: str = "paper", batch: int | None = None, cost: str = "flops",
               granularity: str = "coarse", device: str = "cpu") -> Any:
    """The compile state (import, costs, units) of a zoo model (shape-only weights) or a training graph."""
    from . import zoo
    from .pipeline import State, compile_pipeline, run, stages
    passes = compile_pipeline(batch=batch, cost=cost, granularity=granularity, device=device)
    if model in zoo.list_models() and not Path(model).exists():
        cfg = dict(zoo.small_config(model) if size == "small" else zoo.paper_config(model))
        b = batch or cfg.pop("batch", 1)
        cfg.pop("batch", None)
        source: Any = zoo.export(model, b, train=True, weights="shape-only", **cfg)
        passes = compile_pipeline(cost=cost, granularity=granularity, device=device)
    else:
        from .training_graph import forward_only_hint
        hint = forward_only_hint(model)
        if hint:  # a forward graph would be scheduled without its backward pass
            raise RemcError(hint[2:])
        source = model
    return run(stages(passes, last="units"), State(model=source))


def sweep(dag: Any, fractions: list[float], strategies: list[str], *, solver: dict | None = None,
          on_row: Callable[[SweepRow], None] | None = None) -> list[SweepRow]:
    """Every strategy at every fraction of ``dag``'s checkpoint-all peak."""
    from .backends.strategies import make_options, solve
    from .ir.schedule import check, checkpoint_all
    from .passes.strategies import SOLVER_NAMES
    full = checkpoint_all(dag).peak(dag)
    rows = []
    for f in sorted(fractions, reverse=True):
        budget = int(f * full)
        for s in strategies:
            options = make_options(s, **(solver or {})) if s in SOLVER_NAMES else None
            t0 = time.perf_counter()
            try:
                sched = solve(s, dag, budget, options)
                errs = check(dag, sched.R, sched.S)
                if errs or sched.peak(dag) > budget:
                    raise PlanError(f"{s} returned an invalid schedule: {errs[0] if errs else 'over budget'}")
                rep = sched.report
                row = SweepRow(s, f, budget, str(rep.status), sched.cost(dag) / dag.total_cost,
                               int(sched.peak(dag)), rep.gap, time.perf_counter() - t0)
            except InfeasibleError as e:
                row = SweepRow(s, f, budget, "infeasible", seconds=time.perf_counter() - t0, error=str(e)[:300])
            except PlanError:
                raise
            except RemcError as e:
                row = SweepRow(s, f, budget, "error", seconds=time.perf_counter() - t0, error=str(e)[:300])
            rows.append(row)
            if on_row is not None:
                on_row(row)
    return rows


def to_csv(rows: list[SweepRow]) -> str:
    """The rows as CSV (header: the SweepRow fields)."""
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=[f.name for f in fields(SweepRow)], lineterminator="\n")
    w.writeheader()
    for r in rows:
        w.writerow(asdict(r))
    return buf.getvalue()


def sweep_command(args: argparse.Namespace) -> int:
    """``remc sweep`` (see the module docstring)."""
    from .ir.onnx_io import write_text_atomic
    from .ir.schedule import checkpoint_all
    from .passes.strategies import STRATEGIES
    fractions = _floats(args.fractions, "--fractions")
    if any(not 0 < f <= 1.5 for f in fractions):
        raise RemcError("--fractions must be in (0, 1.5]")
    strategies = [s.strip() for s in args.strategies.split(",") if s.strip()]
    unknown = [s for s in strategies if s not in STRATEGIES]
    if unknown or not strategies:
        raise RemcError(f"unknown strategies {unknown}; choose from {', '.join(STRATEGIES)}")
    out = Path(args.out)
    if not out.parent.is_dir():
        raise RemcError(f"cannot write {out}: folder {out.parent} does not exist")
    state = load_state(args.model, size=args.size, batch=args.batch, cost=args.cost, granularity=args.granularity)
    dag = state.dag
    full = checkpoint_all(dag).peak(dag)
    print(f"{args.model}: {dag.n} units, checkpoint-all peak {format_size(full)}, constant {format_size(dag.constant)}")
    solver = {"time_limit": args.time_limit} | ({"threads": args.threads} if args.threads else {})
    rows = sweep(dag, fractions, strategies, solver=solver, on_row=_print_row)
    meta = {"model": args.model, "size": args.size, "units": dag.n, "checkpoint_all_peak": int(full),
            "constant": int(dag.constant), "ideal_cost": float(dag.total_cost), "cost": args.cost,
            "granularity": args.granularity, "time_limit": args.time_limit}
    write_text_atomic(out.with_suffix(".csv"), to_csv(rows))
    write_text_atomic(out.with_suffix(".json"), json.dumps({**meta, "rows": [asdict(r) for r in rows]}, indent=1))
    written = [out.with_suffix(".csv"), out.with_suffix(".json")]
    if not args.no_plot:
        from .plots import plot_sweep
        plot_sweep([asdict(r) for r in rows], out.with_suffix(".png"), ideal_peak=full,
                   title=f"{Path(args.model).stem}: overhead vs budget ({dag.n} units, {args.cost} costs)")
        written.append(out.with_suffix(".png"))
    print("wrote " + ", ".join(map(str, written)))
    return 0


def _floats(text: str, what: str) -> list[float]:
    try:
        return [float(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise RemcError(f"{what}: expected comma-separated numbers, got {text!r}") from None


def _print_row(r: SweepRow) -> None:
    what = f"overhead {r.overhead:.3f}x, peak {format_size(r.peak)}" if r.overhead is not None else r.status
    gap = f", gap {100 * r.gap:.1f}%" if r.gap is not None and r.gap == r.gap and r.gap != float("inf") else ""
    print(f"  {r.fraction:5.2f} x ({format_size(r.budget):>10s})  {r.strategy:15s} {what}{gap} "
          f"[{r.status}, {r.seconds:.1f} s]", flush=True)


def add_parser(sub: Any) -> None:
    """The ``sweep`` subcommand."""
    from .passes.strategies import STRATEGIES
    s = sub.add_parser("sweep", help="every strategy at several budgets: a table and the overhead-vs-budget plot")
    s.add_argument("model", help="zoo model name (shape-only weights) or a training graph (.onnx)")
    s.add_argument("--fractions", default="1.0,0.9,0.8,0.7,0.6,0.5,0.4",
                   help="budgets as fractions of the checkpoint-all peak (comma-separated)")
    s.add_argument("--strategies", default=",".join(STRATEGIES), help="comma-separated (default: all)")
    s.add_argument("--size", choices=("small", "paper"), default="paper", help="zoo model size")
    s.add_argument("--batch", type=int, help="batch size (zoo: the paper's by default)")
    s.add_argument("--cost", choices=("flops", "profile"), default="flops")
    s.add_argument("--granularity", choices=("fine", "coarse"), default="coarse")
    s.add_argument("--time-limit", type=float, default=60.0, help="MILP/LP time limit per budget, seconds")
    s.add_argument("--threads", type=int)
    s.add_argument("-o", "--out", required=True, help="output prefix: writes <out>.csv, .json and .png")
    s.add_argument("--no-plot", action="store_true", help="table only (no matplotlib needed)")
    s.set_defaults(func=sweep_command)
