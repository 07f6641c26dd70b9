"""Two versions of remc side by side on random layered DAGs (tools/layered.py) under a time limit: each case is
run by both at the same moment (a base checkout, e.g. main in its own worktree and venv, and this one), each
in its own process through that checkout's ``tools/bench_scale.py --one``, so that both see the same load;
``--streams`` cases run at once (2 streams = 4 solves on the machine). Item 5 of issue #12: a schedule within
budget in every case, a proven bound and gap, the solve's memory. Run with nice, write JSON lines:

    nice -n 10 python tools/bench_feas.py --base-root /work/wt/feas12-base \
        --base-python /work/wt/feas12-base/.venv/bin/python --out results/feas12/ab.jsonl \
        --strategies approx,checkmate --sizes 1000 --seeds 0-9 --ratios 0.8 --time-limit 120 --streams 2
    python tools/bench_feas.py --render results/feas12/ab.jsonl

Budget = ratio x the checkpoint-all peak in the graph's own order; overhead = cost / (sum of costs) - 1; gap on
the overhead; wall s is the solve alone; max RSS is the case's process or its solver child."""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _seeds(text: str) -> list[int]:
    """"0-9" or "0,3,5" as a list of ints."""
    out: list[int] = []
    for part in text.split(","):
        if "-" in part:
            a, b = part.split("-")
            out.extend(range(int(a), int(b) + 1))
        elif part:
            out.append(int(part))
    return out


def _one(python: str, root: Path, size: int, seed: int, ratio: str, strategy: str, limit: float) -> dict:
    """One case by one checkout: its bench_scale row (or a crashed row)."""
    cmd = [python, str(root / "tools" / "bench_scale.py"), "--one", "layered", str(size), f"{ratio}:{strategy}",
           "--seed", str(seed), "--time-limit", str(limit), "--threads", "1"]
    p = subprocess.run(cmd, capture_output=True, text=True, cwd=root)
    try:
        return json.loads(p.stdout.strip().splitlines()[-1])
    except (IndexError, json.JSONDecodeError):
        return dict(graph=f"layered n={size} seed={seed}", ratio=float(ratio), strategy=strategy, status="crashed",
                    error=p.stderr[-300:])


def _pair(args, case: tuple[str, int, int, str]) -> list[dict]:
    """Both checkouts on one case, started together."""
    strategy, size, seed, ratio = case
    sides = (("base", args.base_python, Path(args.base_root)), ("branch", args.python, ROOT))
    with ThreadPoolExecutor(2) as ex:
        futs = [(who, ex.submit(_one, py, root, size, seed, ratio, strategy, args.time_limit))
                for who, py, root in sides]
        return [dict(f.result(), side=who) for who, f in futs]


def _cell(r: dict | None) -> str:
    if r is None:
        return "| | | | |"
    if r.get("status") in ("error", "crashed"):
        return f"| **no schedule** ({r.get('error', '')[:60]}) | | {r.get('wall_seconds', 0):.0f} | |"
    return (f"| +{r['overhead_pct']:.2f}% ({r['status']}) | +{r['bound_pct']:.3f}%, {100 * r['gap']:.1f}% | "
            f"{r['wall_seconds']:.0f} | {r['max_rss_mib']:.0f} |")


def render(rows: list[dict]) -> str:
    """A markdown table, one line per case: base and branch side by side."""
    by: dict[tuple, dict] = {}
    for r in rows:
        by.setdefault((r["graph"], float(r["ratio"]), r["strategy"]), {})[r.get("side", "branch")] = r
    out = ["| graph | ratio | strategy | base: overhead | base: bound, gap | base: wall s | base: RSS MiB "
           "| branch: overhead | branch: bound, gap | branch: wall s | branch: RSS MiB |",
           "|---|---|---|---|---|---|---|---|---|---|---|"]
    for (graph, ratio, strategy), sides in by.items():
        out.append(f"| {graph} | {ratio:g} | {strategy} {_cell(sides.get('base'))} {_cell(sides.get('branch'))[2:]}")
    return "\n".join(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--base-root", help="the base checkout (its tools/bench_scale.py runs its cases)")
    ap.add_argument("--base-python", help="the base checkout's python (its venv)")
    ap.add_argument("--python", default=sys.executable, help="this checkout's python")
    ap.add_argument("--out", default="results/feas12/ab.jsonl")
    ap.add_argument("--strategies", default="approx,checkmate")
    ap.add_argument("--sizes", default="1000")
    ap.add_argument("--seeds", default="0-9")
    ap.add_argument("--ratios", default="0.8")
    ap.add_argument("--time-limit", type=float, default=120.0)
    ap.add_argument("--streams", type=int, default=1, help="cases at once (each runs on both sides)")
    ap.add_argument("--render", metavar="JSONL", help="print the side-by-side table of a results file and exit")
    args = ap.parse_args()
    if args.render:
        print(render([json.loads(line) for line in Path(args.render).read_text().splitlines() if line.strip()]))
        return
    if not (args.base_root and args.base_python):
        ap.error("--base-root and --base-python are required to run")
    cases = [(st, int(n), seed, ratio) for n in args.sizes.split(",") for ratio in args.ratios.split(",")
             for seed in _seeds(args.seeds) for st in args.strategies.split(",")]
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    with open(args.out, "a") as f, ThreadPoolExecutor(max(args.streams, 1)) as ex:
        for rows in ex.map(lambda c: _pair(args, c), cases):
            for row in rows:
                print(json.dumps(row, default=float), flush=True)
                f.write(json.dumps(row, default=float) + "\n")
                f.flush()


if __name__ == "__main__":
    main()
