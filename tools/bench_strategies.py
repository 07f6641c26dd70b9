"""Every strategy on every zoo training graph at 0.9, 0.8, 0.6 and 0.4 of its checkpoint-all peak, side by
side in one run: overhead (cost / checkpoint-all cost), peak, solve time, and the MILP's status and gap.

Paper sizes with shape-only weights (nothing is run, nothing allocated), FLOP costs, coarse units.

    python tools/bench_strategies.py --out results/strategies.json [--models vgg16,vgg19] \
        [--fractions 0.9,0.8,0.6,0.4] [--strategies checkmate,approx] [--time-limit 60] [--threads 2]

Prints Markdown tables (the ones in BENCHMARKS.md) and writes every number to the JSON file.
"""
from __future__ import annotations

import argparse
import json
import math
import time
from pathlib import Path

from remc import zoo
from remc.backends.strategies import make_options, names, solve
from remc.ir.errors import InfeasibleError, RemcError
from remc.ir.schedule import checkpoint_all
from remc.pipeline import State, compile_pipeline, run

STRATEGIES = names()


def bench_model(name: str, fractions: list[float], time_limit: float, threads: int | None,
                strategies: tuple[str, ...] | list[str] = STRATEGIES) -> dict:
    cfg = dict(zoo.paper_config(name))
    batch = cfg.pop("batch")
    state = run(compile_pipeline()[:3], State(model=zoo.export(name, batch, train=True, weights="shape-only", **cfg)))
    dag = state.dag
    full = checkpoint_all(dag).peak(dag)
    rows = []
    for f in fractions:
        budget = int(f * full)
        for strategy in strategies:
            opts = make_options(strategy, time_limit=time_limit, threads=threads) \
                if strategy in ("checkmate", "approx") else None
            t0 = time.perf_counter()
            row = {"model": name, "fraction": f, "budget": budget, "strategy": strategy}
            try:
                s = solve(strategy, dag, budget, opts)
                rep = s.report
                row.update(status=rep.status, overhead=s.cost(dag) / dag.total_cost, peak=s.peak(dag),
                           bound=rep.bound, gap=rep.gap, gap_measure=rep.gap_measure)
                if strategy == "approx":  # Algorithm 2 alone, before the local search
                    rc = rep.extras.get("rounded_cost")
                    row.update(rounded_overhead=None if rc is None else rc / dag.total_cost,
                               rule=rep.extras.get("rule"))
                if strategy == "checkmate":
                    row.update(incumbent=rep.extras.get("incumbent"))
            except InfeasibleError as e:
                row.update(status="over budget", error=str(e)[:300], least=e.least_feasible)
            except RemcError as e:
                row.update(status="n/a" if "linear forward graph" in str(e) else "error", error=str(e)[:300])
            row["seconds"] = time.perf_counter() - t0
            rows.append(row)
            print(json.dumps(row, default=float), flush=True)
    return {"model": name, "batch": batch, "units": dag.n, "checkpoint_all_peak": full, "rows": rows}


def table(result: dict) -> str:
    fr = sorted({r["fraction"] for r in result["rows"]}, reverse=True)
    lines = [f"**{result['model']}** (batch {result['batch']}, {result['units']} units, checkpoint-all peak "
             f"{result['checkpoint_all_peak'] / 2**30:.1f} GiB): overhead (solve seconds)",
             "", "| strategy | " + " | ".join(f"{f:g}×" for f in fr) + " |", "|---|" + "---|" * len(fr)]
    for strategy in [s for s in STRATEGIES if any(x["strategy"] == s for x in result["rows"])]:
        cells = []
        for f in fr:
            r = next((x for x in result["rows"] if x["fraction"] == f and x["strategy"] == strategy), None)
            if r is None:
                cells.append("not run")
                continue
            if "overhead" not in r:
                # approx raises InfeasibleError (with a proven lower bound) when rounding finds nothing,
                # which is not a proof that the budget is too small: say which it was
                err = r.get("error", "")
                cells.append("rounding + repair found none" if "rounding and repair found no schedule" in err
                             else "rounding found none" if "rounding found no schedule" in err else r["status"])
                continue
            cell = f"{r['overhead']:.3f} ({r['seconds']:.1f} s)"
            if strategy == "approx" and "rounded_overhead" in r:
                ro = r["rounded_overhead"]
                cell += f" [rounding {ro:.3f}]" if ro is not None else " [rounding: none]"
            if strategy == "checkmate":
                gap = r.get("gap")
                cell += " opt" if r["status"] == "optimal" else f" gap {100 * gap:.1f}%" if gap is not None and \
                    math.isfinite(gap) else " no bound"
            cells.append(cell)
        lines.append(f"| {strategy} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def ratio_table(results: list[dict]) -> str:
    """approx's cost over checkmate's (the paper's Table 3 measure, per budget and their geometric mean over
    the budgets where both found a schedule), with and without the local search after rounding."""
    lines = ["| model | approx / checkmate per budget | geo. mean | rounding alone / checkmate per budget | geo. mean |",
             "|---|---|---|---|---|"]
    for res in results:
        rows = res["rows"]
        full, alone = [], []
        for f in sorted({r["fraction"] for r in rows}, reverse=True):
            cm = next((r for r in rows if r["fraction"] == f and r["strategy"] == "checkmate"), None)
            ap = next((r for r in rows if r["fraction"] == f and r["strategy"] == "approx"), None)
            if cm is None or ap is None or "overhead" not in cm or "overhead" not in ap:
                continue
            opt = "" if cm["status"] == "optimal" else "*"
            full.append((f, ap["overhead"] / cm["overhead"], opt))
            if ap.get("rounded_overhead") is not None:
                alone.append((f, ap["rounded_overhead"] / cm["overhead"], opt))

        def cells(xs):
            if not xs:
                return "—", "—"
            geo = math.exp(sum(math.log(x) for _, x, _ in xs) / len(xs))
            return ", ".join(f"{f:g}: {x:.3f}{o}" for f, x, o in xs), f"{geo:.3f}"
        lines.append(f"| {res['model']} | " + " | ".join(cells(full) + cells(alone)) + " |")
    return "\n".join(lines) + "\n\n(* checkmate stopped at its time limit, not proven optimal)"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", default=",".join(zoo.list_models()))
    ap.add_argument("--fractions", default="0.9,0.8,0.6,0.4")
    ap.add_argument("--time-limit", type=float, default=600.0)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--strategies", default=",".join(STRATEGIES), help="comma-separated; default: all")
    ap.add_argument("--out", default="results/strategies.json")
    ap.add_argument("--render", nargs="+", metavar="JSON", help="print the tables of earlier runs and exit")
    args = ap.parse_args()
    if args.render:  # one table per model: runs that split a model's budgets over files are merged
        merged: dict[str, dict] = {}
        for path in args.render:
            for r in json.loads(Path(path).read_text()):
                if r["model"] in merged:
                    merged[r["model"]]["rows"] += r["rows"]
                    merged[r["model"]]["files"].append(path)
                else:
                    merged[r["model"]] = dict(r, rows=list(r["rows"]), files=[path])
        for r in merged.values():
            print(f"<!-- {', '.join(r['files'])} -->\n{table(r)}\n")
        print(ratio_table(list(merged.values())))
        return
    fractions = [float(x) for x in args.fractions.split(",")]
    strategies = args.strategies.split(",")
    unknown = sorted(set(strategies) - set(STRATEGIES))
    if unknown:
        ap.error(f"unknown strategies {unknown}; choose from {', '.join(STRATEGIES)}")
    results = []
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    for name in args.models.split(","):
        results.append(bench_model(name, fractions, args.time_limit, args.threads, strategies))
        out.write_text(json.dumps(results, indent=1, default=float))
    for r in results:
        print()
        print(table(r))


if __name__ == "__main__":
    main()
