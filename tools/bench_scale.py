"""Scale benchmark: approx and checkmate on random layered DAGs (tools/layered.py) and on zoo models at
ONNX-node granularity, under a wall-clock limit. Each case runs in its own process, so its peak memory
(max RSS of the process and its solver child) is measured. Run with nice, write JSON lines:

    nice -n 10 python tools/bench_scale.py --out results/scale.jsonl [--sizes 250,500,1000] \
        [--ratios 0.9,0.8] [--strategies approx,checkmate] [--zoo resnet50] [--granularity fine]
        [--time-limit 120] [--threads 1]

Budget = ratio x the checkpoint-all peak in the graph's own topological order (Moccasin's protocol).
Overhead = cost / (sum of costs) - 1; gap is measured on the overhead (report's gap_measure). wall s is the
solve alone (from the strategy's start to its return), not the graph build or the full check after it."""
from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))


def _graph(kind: str, size: int, seed: int, granularity: str = "fine"):
    if kind == "layered":
        from layered import layered_dag
        return layered_dag(size, 10, seed)
    from remc import zoo
    from remc.pipeline import State, compile_pipeline, run
    cfg = dict(zoo.paper_config(kind))
    batch = cfg.pop("batch")
    model = zoo.export(kind, batch, train=True, weights="shape-only", **cfg)
    return run(compile_pipeline(granularity=granularity)[:3], State(model=model)).dag


def one(kind: str, size: int, seed: int, ratio: float, strategy: str, time_limit: float, threads: int,
        granularity: str = "fine", settings: dict | None = None) -> dict:
    """One case in this process: the report's figures as a dict."""
    from remc.backends.strategies import make_options, solve
    from remc.ir.schedule import check, checkpoint_all, memory_profile
    dag = _graph(kind, size, seed, granularity)
    budget = int(ratio * checkpoint_all(dag).peak(dag))
    base = float(dag.cost.sum())
    label = strategy + "".join(f" {k}={v}" for k, v in (settings or {}).items())
    row = dict(graph=f"{kind} ({granularity})" if kind != "layered" else f"layered n={size} seed={seed}", units=dag.n,
               edges=len(dag.edges), ratio=ratio, budget=budget, strategy=label, time_limit=time_limit)
    t0 = time.perf_counter()
    try:
        s = solve(strategy, dag, budget, make_options(strategy, time_limit=time_limit, threads=threads,
                                                      **(settings or {})))
        row["wall_seconds"] = time.perf_counter() - t0  # the solve alone, not the check below
        rep = s.report
        assert not check(dag, s.R, s.S) and memory_profile(dag, s.R, s.S).max() <= budget  # the full evaluation
        row.update(status=rep.status, overhead_pct=100 * (rep.cost / base - 1), bound_pct=100 * (rep.bound / base - 1),
                   gap=rep.gap, gap_measure=rep.gap_measure, bound_source=rep.bound_source,
                   lp=rep.extras.get("lp"), milp=rep.extras.get("milp"), report_seconds=rep.seconds,
                   rule=rep.extras.get("rule", rep.extras.get("from")), gap_bound=rep.extras.get("gap_bound"),
                   first_fit_seconds=rep.extras.get("first_fit_seconds"))
    except Exception as e:  # noqa: BLE001 (a benchmark row records any failure)
        row.update(status="error", error=f"{type(e).__name__}: {str(e)[:300]}")
    row.setdefault("wall_seconds", time.perf_counter() - t0)
    rss = max(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
    row["max_rss_mib"] = rss / 1024  # this process or its solver child, whichever peaked higher
    return row


def _settings(pairs: list[str]) -> dict:
    """KEY=VALUE strings as options (true/false and numbers parsed)."""
    out: dict = {}
    for pair in pairs:
        k, v = pair.split("=", 1)
        out[k] = {"true": True, "false": False}.get(v.lower(), v)
        if isinstance(out[k], str):
            try:
                out[k] = float(v) if "." in v else int(v)
            except ValueError:
                pass
    return out


def render(rows: list[dict]) -> str:
    """A markdown table: one line per case."""
    out = ["| graph | units | ratio | strategy | status | overhead | proven bound (bound source) | gap on overhead "
           "| wall s | max RSS MiB |", "|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        if r.get("status") in ("error", "crashed"):
            out.append(f"| {r['graph']} | {r.get('units', '')} | {r['ratio']} | {r['strategy']} | {r['status']}: "
                       f"{r.get('error', '')[:80]} | | | | {r.get('wall_seconds', 0):.0f} | |")
            continue
        out.append(f"| {r['graph']} | {r['units']} | {r['ratio']} | {r['strategy']} | {r['status']} | "
                   f"+{r['overhead_pct']:.3f}% | +{r['bound_pct']:.3f}% ({r['bound_source']}) | "
                   f"{100 * r['gap']:.1f}% | {r['wall_seconds']:.0f} | {r['max_rss_mib']:.0f} |")
    return "\n".join(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default="results/scale.jsonl")
    ap.add_argument("--sizes", default="250,500,1000")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--ratios", default="0.9,0.8")
    ap.add_argument("--strategies", default="approx,checkmate")
    ap.add_argument("--zoo", default="", help="comma-separated zoo models (paper sizes) at --granularity")
    ap.add_argument("--granularity", choices=("fine", "coarse"), default="fine")
    ap.add_argument("--time-limit", type=float, default=120.0)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                    help="an option of the strategy (repeatable; true/false/numbers parsed), e.g. window=false")
    ap.add_argument("--variants", default="", help="';'-separated option sets run after the plain one for each "
                    "case, e.g. 'window=false' (before/after side by side in one run)")
    ap.add_argument("--render", metavar="JSONL", help="print a markdown table of a results file and exit")
    ap.add_argument("--one", nargs=3, metavar=("KIND", "SIZE", "RATIO_STRATEGY"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.render:
        print(render([json.loads(line) for line in Path(args.render).read_text().splitlines() if line.strip()]))
        return
    if args.one:
        kind, size, rs = args.one
        ratio, strategy = rs.split(":")
        print(json.dumps(one(kind, int(size), args.seed, float(ratio), strategy, args.time_limit, args.threads,
                             args.granularity, _settings(args.set)), default=float))
        return
    cases = [("layered", int(n)) for n in args.sizes.split(",") if n] + [(z, 0) for z in args.zoo.split(",") if z]
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    with open(args.out, "a") as f:
        for kind, size in cases:
            for ratio in args.ratios.split(","):
                for strategy, sets in [(st, v) for st in args.strategies.split(",")
                                       for v in [args.set] + [x.split(",") for x in args.variants.split(";") if x]]:
                    cmd = [sys.executable, __file__, "--one", kind, str(size), f"{ratio}:{strategy}", "--seed",
                           str(args.seed), "--time-limit", str(args.time_limit), "--threads", str(args.threads),
                           "--granularity", args.granularity] + [f"--set={x}" for x in sets]
                    p = subprocess.run(cmd, capture_output=True, text=True)
                    try:
                        row = json.loads(p.stdout.strip().splitlines()[-1])
                    except (IndexError, json.JSONDecodeError):
                        row = dict(graph=kind, size=size, ratio=ratio, strategy=strategy, status="crashed",
                                   error=p.stderr[-300:])
                    print(json.dumps(row, default=float), flush=True)
                    f.write(json.dumps(row, default=float) + "\n")
                    f.flush()


if __name__ == "__main__":
    main()
