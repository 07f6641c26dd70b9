"""`remc compile` as a user runs it, two checkouts side by side: the whole process's wall against
``--time-limit``, its phases, the schedule's overhead and the gap, each checkout with a cache of its own that
starts empty (``HOME`` in a temporary folder), so the repeats show what a first and a later compile do.

    nice -n 10 python tools/bench_compile_time.py --model r50_b256.onnx --budget 16GiB --time-limit 30 \\
        --args "--granularity fine --strategy approx --cost flops" --repeats 2 \\
        --python main=/work/main/.venv/bin/python --python lead=.venv/bin/python --out results/x.jsonl
    python tools/bench_compile_time.py --render results/x.jsonl

Each repeat starts one compile per checkout at the same moment (so both see the same load); the wall is the
process's, from its start to its exit (``/usr/bin/time``), and max RSS the process tree's peak it reports.
"""
from __future__ import annotations

import argparse
import json
import os
import shlex
import subprocess
import tempfile
import time
from pathlib import Path


def _start(label: str, python: str, model: str, budget: str, limit: float, extra: list[str], home: Path,
           out_dir: Path, rep: int) -> tuple[subprocess.Popen, Path, Path]:
    out = out_dir / f"{label}_{rep}.onnx"
    timing = out_dir / f"{label}_{rep}.time"
    cmd = ["/usr/bin/time", "-f", "%e %M", "-o", str(timing), python, "-m", "remc.cli", "compile", model,
           "--budget", budget, "--time-limit", f"{limit:g}", "-o", str(out), "--json", *extra]
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"} | {"HOME": str(home)}
    return subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                            cwd=out_dir), timing, out


def run(a: argparse.Namespace) -> list[dict]:
    pairs = [p.split("=", 1) for p in a.python]
    extra = shlex.split(a.args)
    rows = []
    with tempfile.TemporaryDirectory(prefix="remc-bench-compile-") as tmp:
        homes = {label: Path(tmp) / f"home-{label}" for label, _ in pairs}
        for h in homes.values():
            h.mkdir()
        for rep in range(1, a.repeats + 1):
            load = os.getloadavg()[0]
            procs = [(label, *_start(label, py, str(Path(a.model).resolve()), a.budget, a.time_limit, extra,
                                     homes[label], Path(tmp), rep)) for label, py in pairs]
            for label, proc, timing, _ in procs:
                stdout, stderr = proc.communicate()
                wall, rss = timing.read_text().split()[-2:]
                row = {"checkout": label, "repeat": rep, "load": round(load, 1), "time_limit": a.time_limit,
                       "wall": float(wall), "max_rss_mib": int(rss) / 1024, "rc": proc.returncode}
                if proc.returncode == 0:
                    rep_ = json.loads(stdout)
                    phases: dict[str, float] = {}
                    for p in rep_["time"]["phases"]:  # (a phase of every fit round: summed)
                        phases[p["phase"]] = round(phases.get(p["phase"], 0.0) + p["seconds"], 2)
                    row.update(status=rep_["status"], overhead_pct=100 * (rep_["overhead"] - 1), gap=rep_.get("gap"),
                               seconds=rep_["seconds"], solve_seconds=rep_.get("solve_seconds"), phases=phases,
                               notes=rep_["time"].get("notes"))
                else:
                    row["error"] = stderr.strip().splitlines()[-1][:400] if stderr.strip() else "(no message)"
                rows.append(row)
                print(json.dumps(row), flush=True)
                if a.out:
                    with open(a.out, "a") as f:
                        f.write(json.dumps(row) + "\n")
            time.sleep(1)
    return rows


def render(rows: list[dict]) -> str:
    lines = ["| repeat | checkout | load | limit s | wall s | report s | status | overhead | gap | max RSS MiB | phases (s) |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        ph = r.get("phases")
        ph = ", ".join(f"{k} {v:g}" for k, v in ph.items()) if isinstance(ph, dict) else (ph or r.get("error", ""))
        gap = "" if r.get("gap") is None else f"{100 * r['gap']:.1f}%"
        ov = "" if r.get("overhead_pct") is None else f"+{r['overhead_pct']:.3f}%"
        rs = "" if r.get("seconds") is None else f"{r['seconds']:.1f}"
        lines.append(f"| {r['repeat']} | {r['checkout']} | {r['load']} | {r['time_limit']:g} | {r['wall']:.1f} | {rs} | "
                     f"{r.get('status', 'error')} | {ov} | {gap} | {r['max_rss_mib']:.0f} | {ph} |")
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model")
    ap.add_argument("--budget")
    ap.add_argument("--time-limit", type=float, default=30.0)
    ap.add_argument("--args", default="", help="further arguments of remc compile, one string")
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--python", action="append", default=[], help="LABEL=PYTHON of a checkout's venv (repeatable)")
    ap.add_argument("--out")
    ap.add_argument("--render", help="print a markdown table of a results file and exit")
    a = ap.parse_args()
    if a.render:
        print(render([json.loads(x) for x in Path(a.render).read_text().splitlines() if x.strip()]))
        return
    if not (a.model and a.budget and a.python):
        ap.error("--model, --budget and --python are required")
    print(render(run(a)))


if __name__ == "__main__":
    main()
