"""Does ``--time-limit`` hold as the user's wall clock? ``remc solve`` run as a user runs it, in its own process,
and the process's wall seconds (from its start to its exit: Python's start-up, the graph read, every solver phase,
child processes, plan generation and validation) against ``--time-limit`` (issue #12 item 5), with the report's
``seconds`` and the process's max RSS (it or its solver children, whichever peaked higher).

Cases: Moccasin's published random layered files (``--graphs``, node-link JSON) and random layered DAGs of
tools/layered.py at other seeds (``--layered N:SEED,...``, written to ``--work`` as node-link JSON), at
``--ratios`` of checkpoint-all's peak in the file's order (``--budget 0.8x``), with ``--strategies`` and
``--limits``. ``--base-python`` runs each case with a second checkout's ``remc`` too, started at the same moment
(side by side under the same load). One line of JSON per run; ``--render`` prints the table.

    nice -n 10 python tools/bench_overrun.py --graphs /work/wt/moccasin-src/data/random_layered_n500_*.json \
        --layered 250:3,1000:3 --ratios 0.8,0.9 --strategies approx,checkmate,cpsat --limits 10,30 \
        --base-python /work/wt/any13-base/.venv/bin/python --out results/any13/overrun.jsonl
    python tools/bench_overrun.py --render results/any13/overrun.jsonl
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))


def write_layered(n: int, seed: int, work: Path) -> Path:
    """tools/layered.py's DAG of ``n`` nodes at ``seed`` as a node-link JSON file that ``remc solve`` reads."""
    from layered import layered_dag
    dag = layered_dag(n, 10, seed)
    path = work / f"layered_n{n}_seed{seed}.json"
    if path.exists():
        return path
    from remc.ir.nodelink import save_nodelink
    work.mkdir(parents=True, exist_ok=True)
    save_nodelink(dag, path)  # (ids in the DAG's order, its topological order)
    return path


def run_one(python: str, graph: Path, ratio: str, strategy: str, limit: float) -> dict:
    """``remc solve`` in a process of its own under /usr/bin/time (its max RSS, children included): wall seconds
    from its start to its exit, and the report's figures."""
    import tempfile
    with tempfile.NamedTemporaryFile("r", suffix=".rss") as f:
        cmd = ["/usr/bin/time", "-q", "-f", "%M", "-o", f.name, python, "-m", "remc", "solve", str(graph),
               "--budget", f"{ratio}x", "--strategy", strategy, "--time-limit", str(limit), "--threads", "1",
               "--json"]
        t0 = time.perf_counter()
        p = subprocess.run(cmd, capture_output=True, text=True, cwd="/tmp")
        wall = time.perf_counter() - t0
        row = dict(graph=graph.stem, ratio=float(ratio), strategy=strategy, time_limit=limit, wall_seconds=wall,
                   rc=p.returncode)
        try:
            row["max_rss_mib"] = int(Path(f.name).read_text().split()[-1]) / 1024
        except (ValueError, IndexError):
            pass
    try:
        rep = json.loads(p.stdout)
        row.update(status=rep.get("status"), seconds=rep.get("seconds"), cost=rep.get("cost"),
                   overhead=rep.get("overhead"), gap=rep.get("gap"), bound=rep.get("bound"), units=rep.get("units"),
                   solve_seconds=rep.get("solve_seconds"), peak_rss_mib=rep.get("peak_rss_mib"))
    except json.JSONDecodeError:
        err = p.stderr.strip().splitlines()
        row.update(status="error", error=(err[-1] if err else p.stdout[-200:])[:200])
    return row


def render(rows: list[dict]) -> str:
    """Markdown: one line per case, base and branch side by side (wall - limit is the overrun)."""
    by: dict[tuple, dict] = {}
    for r in rows:
        by.setdefault((r["graph"], r["ratio"], r["strategy"], r["time_limit"]), {})[r.get("side", "branch")] = r

    def cell(r: dict | None) -> str:
        if r is None:
            return "| | | |"
        cost = (f"{r['status']}" if r.get("cost") is None else f"+{100 * (r['overhead'] - 1):.2f}% {r['status']}")
        if r.get("cost") is not None and r.get("gap") is not None:
            cost += f", gap {100 * r['gap']:.1f}%"  # (of the overhead: the report's gap_measure)
        secs = "-" if r.get("seconds") is None else f"{r['seconds']:.1f}"
        rss = "" if r.get("max_rss_mib") is None else f"{r['max_rss_mib']:.0f}"
        return f"| {cost} | {r['wall_seconds']:.1f} ({r['wall_seconds'] - r['time_limit']:+.1f}) / {secs} | {rss} |"
    out = ["| graph | ratio | strategy | limit s | base: result | base: wall (over) / report s | base: RSS MiB "
           "| branch: result | branch: wall (over) / report s | branch: RSS MiB |",
           "|---|---|---|---|---|---|---|---|---|---|"]
    for (g, ratio, st, lim), sides in by.items():
        out.append(f"| {g} | {ratio:g} | {st} | {lim:g} {cell(sides.get('base'))} {cell(sides.get('branch'))[2:]}")
    return "\n".join(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--graphs", nargs="*", default=[], help="node-link JSON files")
    ap.add_argument("--layered", default="", help="N:SEED,... random layered DAGs of tools/layered.py")
    ap.add_argument("--work", type=Path, default=Path("results/any13/graphs"), help="where --layered files go")
    ap.add_argument("--ratios", default="0.8,0.9")
    ap.add_argument("--strategies", default="approx,checkmate,cpsat")
    ap.add_argument("--limits", default="10,30,60")
    ap.add_argument("--python", default=sys.executable, help="this checkout's python")
    ap.add_argument("--base-python", help="a second checkout's python, run at the same moment on each case")
    ap.add_argument("--out", type=Path, default=Path("results/any13/overrun.jsonl"))
    ap.add_argument("--render", type=Path, help="print the table of a results file and exit")
    args = ap.parse_args()
    if args.render:
        print(render([json.loads(x) for x in args.render.read_text().splitlines() if x.strip()]))
        return
    graphs = [Path(g).resolve() for g in args.graphs]
    for part in [p for p in args.layered.split(",") if p]:
        n, seed = part.split(":")
        graphs.append(write_layered(int(n), int(seed), args.work).resolve())
    sides = [("branch", args.python)] + ([("base", args.base_python)] if args.base_python else [])
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with open(args.out, "a") as f:
        for limit in [float(x) for x in args.limits.split(",")]:
            for g in graphs:
                for ratio in args.ratios.split(","):
                    for st in args.strategies.split(","):
                        with ThreadPoolExecutor(len(sides)) as ex:
                            futs = [(who, ex.submit(run_one, py, g, ratio, st, limit)) for who, py in sides]
                            rows = [dict(fu.result(), side=who) for who, fu in futs]
                        for row in rows:
                            print(json.dumps(row, default=float), flush=True)
                            f.write(json.dumps(row, default=float) + "\n")
                            f.flush()


if __name__ == "__main__":
    main()
