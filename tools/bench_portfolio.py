"""checkmate against approx alone at the same --time-limit (issue #12 item 3): is the portfolio ever worse?

Each case runs ``approx`` and then ``checkmate`` with the same time limit, one after the other in this process
(the order alternates from case to case, so that neither always runs first on a warm cache), and records both
costs, statuses and wall seconds. A case counts as *worse* when checkmate's cost is above approx's (relative
tolerance 1e-9) or checkmate has no schedule where approx has one.

Cases: ``--random K`` seeded random small DAGs (``random_small``: a chain plus random forward edges, 8 to
``--max-n`` units, integer costs and sizes, budget a random fraction of the checkpoint-all peak, above the
least any schedule needs) and ``--zoo`` models at ``--sizes`` (small: the test size, paper: the paper's,
coarse units, FLOP costs) at ``--ratios`` of their checkpoint-all peak.

    nice -n 10 python tools/bench_portfolio.py --random 200 --time-limit 20 --out results/portfolio.json
    nice -n 10 python tools/bench_portfolio.py --random 0 --zoo vgg16,resnet50,mobilenet,unet,fcn8,segnet \
        --sizes small,paper --ratios 0.8,0.6 --time-limit 20 --out results/portfolio_zoo.json
    python tools/bench_portfolio.py --render results/portfolio.json results/portfolio_zoo.json

Prints one JSON line per case and a summary; ``--render`` prints the Markdown summary of result files.
"""
from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path
from typing import Any

import numpy as np

from remc.backends.strategies import make_options, solve
from remc.ir.dag import DAG
from remc.ir.errors import RemcError
from remc.ir.schedule import checkpoint_all
from remc.passes.milp_model import simple_lower_bound

TOL = 1e-9


def random_small(rng: np.random.Generator, max_n: int) -> tuple[DAG, float]:
    """A random DAG (chain 0..n-1 plus forward edges i -> j, j > i + 1, each with probability p) and a budget
    fraction in [0.5, 0.95]."""
    n = int(rng.integers(8, max_n + 1))
    p = float(rng.uniform(0.03, 0.3))
    edges = {(i, i + 1) for i in range(n - 1)}
    edges |= {(i, j) for i in range(n) for j in range(i + 2, n) if rng.random() < p}
    cost = rng.integers(1, 100, n).astype(float)
    mem = rng.integers(1, 100, n) * 1024
    dag = DAG(tuple(f"v{i}" for i in range(n)), cost, mem, np.array(sorted(edges), dtype=np.int64).reshape(-1, 2))
    return dag, float(rng.uniform(0.5, 0.95))


def zoo_dag(name: str, size: str, granularity: str = "coarse") -> DAG:
    """The zoo model ``name`` at ``size`` (small or paper) as a training DAG (coarse or fine units) with FLOP
    costs."""
    from remc import zoo

    cfg = dict(zoo.paper_config(name) if size == "paper" else zoo.small_config(name))
    batch = cfg.pop("batch", 1)
    return model_dag(zoo.export(name, batch, train=True, weights="shape-only", **cfg), granularity)


def model_dag(model: Any, granularity: str = "coarse") -> DAG:
    """A training graph (ONNX model or path, e.g. a torchvision export through ``remc grad``) as a DAG of
    ``granularity`` units with FLOP costs."""
    from remc.pipeline import State, compile_pipeline, run
    return run(compile_pipeline(granularity=granularity)[:3], State(model=model)).dag


def run_one(strategy: str, dag: DAG, budget: int, time_limit: float, threads: int | None) -> dict:
    t0 = time.perf_counter()
    row: dict[str, Any] = {}
    try:
        s = solve(strategy, dag, budget, make_options(strategy, time_limit=time_limit, threads=threads))
        rep = s.report
        row.update(cost=s.cost(dag), status=rep.status, gap=rep.gap, peak=s.peak(dag),
                   bound_source=rep.bound_source)
        if s.peak(dag) > budget:
            row["status"] = "over budget (a bug)"
    except RemcError as e:
        row.update(cost=None, status=type(e).__name__, error=str(e)[:200])
    row["seconds"] = time.perf_counter() - t0
    return row


def compare(case: dict) -> dict:
    """Whether checkmate is worse than approx in ``case``, and by how much (checkmate / approx cost)."""
    a, c = case["approx"]["cost"], case["checkmate"]["cost"]
    if a is None:
        return {"worse": False, "ratio": None}
    if c is None:
        return {"worse": True, "ratio": None}
    return {"worse": c > a * (1 + TOL), "ratio": c / a}


def bench(cases: list[tuple[str, DAG, int]], time_limit: float, threads: int | None, out: Path,
          meta: dict) -> dict:
    result: dict[str, Any] = dict(meta, cases=[])
    for k, (name, dag, budget) in enumerate(cases):
        case: dict[str, Any] = {"case": name, "n": dag.n, "budget": budget, "total_cost": dag.total_cost}
        order = ("approx", "checkmate") if k % 2 == 0 else ("checkmate", "approx")
        for strategy in order:
            case[strategy] = run_one(strategy, dag, budget, time_limit, threads)
        case.update(compare(case))
        case["time_limited"] = any(case[s]["status"] == "time_limit" or case[s]["seconds"] >= 0.95 * time_limit
                                   for s in ("approx", "checkmate"))
        result["cases"].append(case)
        print(json.dumps(case, default=float), flush=True)
        tmp = out.with_name(f".{out.name}.tmp-{os.getpid()}")
        tmp.write_text(json.dumps(result, indent=1, default=float) + "\n")
        tmp.replace(out)
    return result


def summary(results: list[dict]) -> str:
    lines = ["| cases | time limit | approx has a schedule | time-limited (either) | checkmate worse | worst "
             "checkmate/approx | checkmate better | mean checkmate/approx | checkmate slower than approx "
             "(median s) |", "|---|---|---|---|---|---|---|---|---|"]
    for res in results:
        cs = res["cases"]
        have = [c for c in cs if c["approx"]["cost"] is not None]
        worse = [c for c in cs if c["worse"]]
        ratios = [c["ratio"] for c in cs if c["ratio"] is not None]
        worst = max((c["ratio"] or float("inf") for c in worse), default=None)
        better = sum(1 for c in cs if (c["ratio"] is not None and c["ratio"] < 1 - TOL)
                     or (c["approx"]["cost"] is None and c["checkmate"]["cost"] is not None))
        sec = np.median([c["checkmate"]["seconds"] - c["approx"]["seconds"] for c in cs]) if cs else 0.0
        lines.append(f"| {res['label']} ({len(cs)}) | {res['time_limit']:g} s | {len(have)} | "
                     f"{sum(c['time_limited'] for c in cs)} | {len(worse)} | "
                     f"{'-' if worst is None else f'{worst:.4f}'} | {better} | "
                     f"{np.mean(ratios) if ratios else float('nan'):.4f} | {sec:+.1f} |")
    worse_rows = [(res["label"], c) for res in results for c in res["cases"] if c["worse"]]
    if worse_rows:
        lines += ["", "| set | case | n | approx | checkmate |", "|---|---|---|---|---|"]
        for label, c in worse_rows:
            cell = lambda r: (f"{r['status']} {r['cost'] / c['total_cost'] - 1:+.3%}, {r['seconds']:.0f} s"
                              if r["cost"] is not None else f"{r['status']}, {r['seconds']:.0f} s")
            lines.append(f"| {label} | {c['case']} | {c['n']} | {cell(c['approx'])} | {cell(c['checkmate'])} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--random", type=int, default=200, help="random small DAGs")
    p.add_argument("--seed", type=int, default=12)
    p.add_argument("--max-n", type=int, default=60)
    p.add_argument("--zoo", default="", help="comma-separated zoo models")
    p.add_argument("--sizes", default="small,paper")
    p.add_argument("--onnx", default="", help="comma-separated training graphs (.onnx), e.g. torchvision exports")
    p.add_argument("--granularity", default="coarse", choices=("coarse", "fine"), help="units of --zoo and --onnx")
    p.add_argument("--ratios", default="0.8,0.6", help="zoo and --onnx budgets: fractions of the checkpoint-all peak")
    p.add_argument("--time-limit", type=float, default=20.0)
    p.add_argument("--threads", type=int)
    p.add_argument("--label", help="name of this run in the summary")
    p.add_argument("--out", type=Path, default=Path("results/portfolio.json"))
    p.add_argument("--render", type=Path, nargs="+", help="print the summary of these result files")
    args = p.parse_args(argv)
    if args.render:
        print(summary([json.loads(f.read_text()) for f in args.render]), end="")
        return 0
    cases: list[tuple[str, DAG, int]] = []
    rng = np.random.default_rng(args.seed)
    for k in range(args.random):
        dag, frac = random_small(rng, args.max_n)
        peak = checkpoint_all(dag).peak(dag)
        budget = max(int(frac * peak), int(simple_lower_bound(dag)))
        cases.append((f"random {k} (n={dag.n}, {frac:.2f}x)", dag, budget))
    for name in [m for m in args.zoo.split(",") if m]:
        for size in args.sizes.split(","):
            dag = zoo_dag(name, size, args.granularity)
            peak = checkpoint_all(dag).peak(dag)
            for r in args.ratios.split(","):
                cases.append((f"{name} {size} {args.granularity} {float(r):g}x", dag, int(float(r) * peak)))
    for path in [m for m in args.onnx.split(",") if m]:
        dag = model_dag(path, args.granularity)
        peak = checkpoint_all(dag).peak(dag)
        for r in args.ratios.split(","):
            cases.append((f"{Path(path).stem} {args.granularity} {float(r):g}x", dag, int(float(r) * peak)))
    label = args.label or (f"random (seed {args.seed})" if args.random else f"zoo {args.sizes}")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    res = bench(cases, args.time_limit, args.threads, args.out,
                {"label": label, "time_limit": args.time_limit, "command": "bench_portfolio.py " +
                 " ".join(argv if argv is not None else __import__("sys").argv[1:])})
    print(summary([res]), end="")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
