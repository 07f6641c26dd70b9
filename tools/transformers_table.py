"""Every strategy on transformer step graphs at real size, trained under a cap on CPU (issue #13 item 5): one
table. For each ``--model TAG=STEP.onnx:BUDGET`` (a step graph: ``tools/train_need.py --append ... --save``)
and each strategy, ``remc train STEP --steps 2 --budget BUDGET --strategy S`` (compile, fit the replayed loop
to the budget, two steps under a cap of the budget), as a user runs it, under ``nice -n 10`` and
``/usr/bin/time`` (wall seconds and max RSS); then the unmodified step twice under the same cap (fixed buffers,
fresh outputs) and once without a cap, whose losses the compiled steps' must equal. Each run's report (the
``--json`` output, or the one-line refusal) is kept in ``--dir`` and not re-run unless ``--force``; the
table (JSON and markdown) is written from those.

    python tools/transformers_table.py --model vit=vit_b1_step.onnx:1480000000 --dir results/transformers_strategies \\
        --out results/transformers_strategies.json --md results/transformers_strategies.md

With ``--search`` each strategy's least budget is searched instead (``--model TAG=STEP.onnx:HI:LO``: HI a budget
expected to fit, LO the graph's lower bound): ``remc train --steps 2 --budget B`` is run at budgets chosen by
bisection between the largest budget refused and the least that trained, jumping to the figure a refusal names
(what the strategy's best plan needs) or to what a trained plan's loop needs; every probe trains under a cap of
its budget, so the least budget found is one that trained. A strategy that does not apply (a refusal without a
figure, e.g. chen-* on a non-linear graph) is tried once.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

STRATEGIES = ("checkpoint-all", "griewank", "chen-sqrtn", "chen-greedy", "ap-sqrtn", "ap-greedy", "lin-sqrtn",
              "lin-greedy", "approx", "cpsat", "checkmate")
SOLVERS = ("approx", "cpsat", "checkmate")
UNMODIFIED = {"unmodified, cap, fixed buffers": ["--loop", "fixed"], "unmodified, cap, fresh outputs": ["--loop", "fresh"],
              "unmodified, no cap": []}


def remc_bin() -> str:
    """The ``remc`` of this interpreter's environment."""
    return str(Path(sys.executable).with_name("remc"))


def run_one(args: list[str], out: Path, workdir: Path) -> dict[str, Any]:
    """Run ``remc ARGS --json`` (nice 10, /usr/bin/time); the report with rc, wall s, max RSS and stderr's last line."""
    timef = workdir / (out.stem + ".time")
    cmd = ["nice", "-n", "10", "/usr/bin/time", "-o", str(timef), "-f", "%e %M", remc_bin(), *args, "--json"]
    t0 = time.time()
    res = subprocess.run(cmd, capture_output=True, text=True, cwd=workdir)
    wall, rss_kb = (timef.read_text().split()[-2:] if timef.exists() else ("nan", "0"))
    rep: dict[str, Any] = {"command": "remc " + " ".join(args), "rc": res.returncode, "wall_s": float(wall),
                           "max_rss_mib": int(rss_kb) // 1024, "started": time.strftime("%H:%M:%S", time.gmtime(t0))}
    lines = [ln for ln in res.stderr.splitlines() if ln.startswith("remc: ")]
    if lines:
        rep["error"] = lines[-1]
    if res.returncode == 0:
        rep["report"] = json.loads(res.stdout)
    elif not lines:
        rep["error"] = res.stderr.strip().splitlines()[-1] if res.stderr.strip() else f"exit {res.returncode}"
    out.write_text(json.dumps(rep, indent=1, default=float))
    return rep


ON_DEVICE = (r"the best needs (\d+) bytes there", r"the best plan needs (\d+) bytes on ONNX Runtime")
NEEDS = (r"the least peak it reaches is (\d+) bytes", r"needs (\d+) bytes, above the budget",
         r"needs [\d.]+ [KMG]?i?B \((\d+) bytes\), above the budget", r"the least memory it reached: (\d+) bytes")


def refusal_need(error: str | None, budget: int) -> int | None:
    """The least figure above ``budget`` that a refusal names as what the strategy's plan needs on ONNX
    Runtime (where the fit decides), else in remc's model; None when it names none (the strategy does not
    apply, or ran out of memory)."""
    for patterns in (ON_DEVICE, NEEDS):
        above = [int(m) for pat in patterns for m in re.findall(pat, error or "") if int(m) > budget]
        if above:
            return min(above)
    return None


def next_budget(lo: int, hi: int | None, tol: int, hint: int | None) -> int | None:
    """The next budget of the search, or None when it is done. ``lo``: the largest budget refused (or the
    lower bound); ``hi``: the least that trained (None: none yet); ``hint``: a figure the last probe named
    (a refusal's need above its budget, or a trained plan's loop need below its budget)."""
    if hi is not None and hi - lo <= tol:
        return None
    if hint is not None and lo < hint and (hi is None or hint < hi - tol):
        return hint
    if hi is None:
        return None
    return (lo + hi) // 2


def search_least(probe: Any, lo: int, hi: int, tol: int, max_probes: int,
                 start: int | None = None) -> tuple[int | None, list[tuple[int, bool]]]:
    """Bisection for the least budget at which ``probe(budget) -> (trained, hint, applies)`` trains, starting
    at ``start`` (default ``hi``, a budget expected to fit; a refusal moves up to the figure it names). (The
    least budget that trained, or None; the probes as (budget, trained)). ``hint`` as in ``next_budget``."""
    tried: list[tuple[int, bool]] = []
    best: int | None = None
    b: int | None = hi if start is None else start
    while b is not None and len(tried) < max_probes:
        ok, hint, applies = probe(b)
        tried.append((b, ok))
        if not applies:
            break
        if ok:
            best = b
        else:
            lo = max(lo, b)
        b = next_budget(lo, best, tol, hint)
    return best, tried


def commit() -> str:
    """The commit of the remc that runs (this file's checkout, or $REMC_COMMIT for a snapshot of it)."""
    if os.environ.get("REMC_COMMIT"):
        return os.environ["REMC_COMMIT"]
    try:
        return subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                              cwd=Path(__file__).parent).stdout.strip()
    except OSError:
        return "?"


def row(model: str, name: str, rep: dict[str, Any], ref_losses: list[float] | None) -> dict[str, Any]:
    """One table row from a run's saved report."""
    r = rep.get("report") or {}
    losses = r.get("losses")
    equal = None
    if losses is not None and ref_losses is not None:
        equal = all(abs(a - b) <= 1e-5 * max(abs(b), 1e-30) for a, b in zip(losses, ref_losses, strict=True))
    return {"model": model, "run": name, "rc": rep["rc"], "error": rep.get("error"), "wall_s": rep["wall_s"],
            "max_rss_mib": rep["max_rss_mib"], "commit": rep.get("commit"),
            **{k: r.get(k) for k in ("fit_rounds", "solver_budget", "recomputes", "predicted_overhead", "loop",
                                     "predicted_on_device", "measured_peak", "predicted_in_use", "steps_per_second",
                                     "memory_parts")},
            "losses": losses, "losses_equal_unmodified": equal}


def markdown(rows: list[dict[str, Any]], budgets: dict[str, int]) -> str:
    """The table: one line per run, refusals with their message."""
    head = ("| model | run | result | fit rounds, solver budget | recomputations | predicted overhead | loop | "
            "loop's least cap replayed | peak in use, 2 steps: measured / replayed | losses = unmodified | steps/s "
            "| wall s | max RSS MiB | commit |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    out = [head]
    notes = []
    for r in rows:
        if r["rc"] == 0:
            result = "trained" if r["run"] not in UNMODIFIED else "ran"
            fit = f"{r['fit_rounds']}, {r['solver_budget']}" if r.get("fit_rounds") is not None else ""
            over = f"{r['predicted_overhead']:.3f}" if r.get("predicted_overhead") is not None else ""
            peak = (f"{r['measured_peak']} / {r['predicted_in_use']}" if r.get("predicted_in_use") is not None
                    else f"{r['measured_peak']}")
            out.append(f"| {r['model']} | {r['run']} | {result} | {fit} | {r.get('recomputes') or ''} | {over} | "
                       f"{r.get('loop') or ''} | {r.get('predicted_on_device') or ''} | {peak} | "
                       f"{'' if r['losses_equal_unmodified'] is None else r['losses_equal_unmodified']} | "
                       f"{r['steps_per_second']:.3f} | {r['wall_s']:.0f} | {r['max_rss_mib']} | {r.get('commit') or ''} |")
        else:
            kind = "out of memory" if "out of memory" in (r["error"] or "") else "refused"
            out.append(f"| {r['model']} | {r['run']} | {kind} (note {len(notes) + 1}) | | | | | | | | | "
                       f"{r['wall_s']:.0f} | {r['max_rss_mib']} | {r.get('commit') or ''} |")
            notes.append(f"{len(notes) + 1}. {r['model']}, {r['run']}: `{r['error']}`")
    budget_line = "Budgets (bytes; the cap of every run): " + ", ".join(f"{m} {b}" for m, b in budgets.items())
    return "\n".join([budget_line, "", *out, "", *notes]) + "\n"


class NotRun(Exception):
    """``--render``: the search's next probe has no report kept (it was not run)."""


def probe_runner(tag: str, step: str, strategy: str, a: argparse.Namespace, runs: Path, work: Path) -> Any:
    """``probe(budget) -> (trained, hint, applies)`` for ``search_least``: one ``remc train`` run at the
    budget, its report kept in ``runs`` (and read from there when it exists)."""
    def probe(budget: int) -> tuple[bool, int | None, bool]:
        path = runs / f"{tag}_{strategy}_b{budget}.json"
        if path.exists() and not a.force:
            rep = json.loads(path.read_text())
        elif a.render:
            raise NotRun(budget)
        else:
            print(f"{time.strftime('%H:%M:%S')} {tag} {strategy} at {budget}", flush=True)
            rep = run_one(["train", step, "--steps", str(a.steps), "--budget", str(budget), "--strategy", strategy,
                           "--time-limit", str(a.time_limit)], path, work)
            rep["commit"] = commit()
            if rep["rc"] in (125, 126, 127):
                path.unlink()
                raise SystemExit(f"{strategy}: {rep.get('error')}")
            path.write_text(json.dumps(rep, indent=1, default=float))
            print(f"   rc {rep['rc']} {rep['wall_s']:.0f} s {rep['max_rss_mib']} MiB {rep.get('error', '')[:300]}",
                  flush=True)
        if rep["rc"] == 0:
            need = rep["report"].get("predicted_on_device")
            return True, (int(need) if need is not None and need < budget else None), True
        hint = refusal_need(rep.get("error"), budget)
        oom = "out of memory" in (rep.get("error") or "")
        return False, hint, hint is not None or oom
    return probe


def search_row(tag: str, step: str, hi: int, lo: int, strategy: str, a: argparse.Namespace, runs: Path,
               work: Path, ref: list[float] | None) -> dict[str, Any]:
    """A strategy's least budget on one graph (``search_least``): its row, with its probes."""
    probe = probe_runner(tag, step, strategy, a, runs, work)
    # a solver starts where a plan is expected to fit; a baseline at the lower bound, whose refusal names
    # what the best plan of its family needs (the next probe)
    start = hi if strategy in SOLVERS else lo
    runs_done: list[tuple[int, bool]] = []

    def kept(b: int) -> tuple[bool, int | None, bool]:
        out = probe(b)
        runs_done.append((b, out[0]))
        return out
    try:
        best, tried = search_least(kept, lo, hi, int(a.tol * lo), a.max_probes, start=start)
    except NotRun as stop:  # --render: the search stopped here (the next probe, at stop.args[0], not run)
        best = min((b for b, ok in runs_done if ok), default=None)
        tried = [*runs_done, (stop.args[0], None)]
    if not runs_done:
        return {"model": tag, "run": strategy, "rc": None, "error": "not run", "wall_s": 0.0, "max_rss_mib": 0,
                "least_budget": None, "probes": tried}
    last = best if best is not None else runs_done[-1][0]
    rep = json.loads((runs / f"{tag}_{strategy}_b{last}.json").read_text())
    return {**row(tag, strategy, rep, ref), "least_budget": best, "probes": tried}


def search_markdown(rows: list[dict[str, Any]], tol: float) -> str:
    """The least-budget table: per strategy the least budget that trained and its run, or why none did."""
    head = ("| model | strategy | least budget that trained | probes (budget: trained?) | recomputations | "
            "predicted overhead | loop | loop's least cap replayed | peak in use, 2 steps: measured / replayed | "
            "losses = unmodified | wall s (its run) | max RSS MiB | commit |\n"
            "|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    out, notes = [head], []
    for r in rows:
        probes = ", ".join(f"{b}: {'not run' if ok is None else 'yes' if ok else 'no'}" for b, ok in r["probes"])
        if r["least_budget"] is not None:
            over = f"{r['predicted_overhead']:.3f}" if r.get("predicted_overhead") is not None else ""
            out.append(f"| {r['model']} | {r['run']} | {r['least_budget']} | {probes} | {r.get('recomputes') or ''} | "
                       f"{over} | {r.get('loop') or ''} | {r.get('predicted_on_device') or ''} | "
                       f"{r['measured_peak']} / {r.get('predicted_in_use')} | {r['losses_equal_unmodified']} | "
                       f"{r['wall_s']:.0f} | {r['max_rss_mib']} | {r.get('commit') or ''} |")
        elif r["rc"] is None:
            out.append(f"| {r['model']} | {r['run']} | not run | {probes} | | | | | | | | | |")
        else:
            out.append(f"| {r['model']} | {r['run']} | none (note {len(notes) + 1}) | {probes} | | | | | | | "
                       f"{r['wall_s']:.0f} | {r['max_rss_mib']} | {r.get('commit') or ''} |")
            notes.append(f"{len(notes) + 1}. {r['model']}, {r['run']}, last probe: `{r['error']}`")
    return "\n".join([f"Bisection to within {tol:.1%} of the lower bound; every budget listed trained 2 steps "
                      "under a cap of itself or was refused.", "", *out, "", *notes]) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", action="append", default=[], help="TAG=STEP.onnx:BUDGET (repeatable)")
    ap.add_argument("--strategies", default=",".join(STRATEGIES))
    ap.add_argument("--time-limit", type=float, default=60.0)
    ap.add_argument("--steps", type=int, default=2)
    ap.add_argument("--dir", required=True, help="per-run reports (kept; a run is skipped when its report exists)")
    ap.add_argument("--force", action="store_true", help="re-run runs whose report exists")
    ap.add_argument("--no-unmodified", action="store_true")
    ap.add_argument("--render", action="store_true", help="run nothing: the table of the reports kept in --dir")
    ap.add_argument("--search", action="store_true", help="each strategy's least budget (--model TAG=STEP:HI:LO)")
    ap.add_argument("--tol", type=float, default=0.01, help="--search: stop within this fraction of LO")
    ap.add_argument("--max-probes", type=int, default=5, help="--search: runs per strategy at most")
    ap.add_argument("--out", required=True, help="the table as JSON")
    ap.add_argument("--md", required=True, help="the table as markdown")
    a = ap.parse_args()
    runs = Path(a.dir).resolve()
    runs.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="remc-tt-"))
    rows, budgets = [], {}
    if a.search:  # strategy by strategy, each on every model
        for strategy in a.strategies.split(","):
            for spec in a.model:
                tag, rest = spec.split("=", 1)
                step, hi, lo = rest.rsplit(":", 2)
                ref_path = runs / f"{tag}_unmodified_no-cap.json"
                ref = json.loads(ref_path.read_text()).get("report", {}).get("losses") if ref_path.exists() else None
                rows.append(search_row(tag, os.path.abspath(step), int(hi), int(lo), strategy, a, runs, work, ref))
                Path(a.out).write_text(json.dumps({"rows": rows}, indent=1, default=float))
                Path(a.md).write_text(search_markdown(rows, a.tol))
        print(Path(a.md).read_text())
        return
    for spec in a.model:
        tag, rest = spec.split("=", 1)
        step, budget = rest.rsplit(":", 1)
        budgets[tag] = int(budget)
        step = os.path.abspath(step)
        todo: list[tuple[str, list[str]]] = []
        if not a.no_unmodified:
            todo += [(n, ["train", step, "--steps", str(a.steps), *(["--mem-limit", budget] if "no cap" not in n else []),
                          *x]) for n, x in UNMODIFIED.items()]
        todo += [(s, ["train", step, "--steps", str(a.steps), "--budget", budget, "--strategy", s,
                      "--time-limit", str(a.time_limit)]) for s in a.strategies.split(",")]
        reps = {}
        for name, args in todo:
            path = runs / f"{tag}_{name.replace(', ', '_').replace(' ', '-')}.json"
            if path.exists() and not a.force:
                reps[name] = json.loads(path.read_text())
                continue
            if a.render:
                continue
            print(f"{time.strftime('%H:%M:%S')} {tag} {name}", flush=True)
            reps[name] = run_one(args, path, work)
            reps[name]["commit"] = commit()
            if reps[name]["rc"] in (125, 126, 127):  # /usr/bin/time or remc did not start: not a result
                path.unlink()
                raise SystemExit(f"{name}: {reps[name].get('error')}")
            path.write_text(json.dumps(reps[name], indent=1, default=float))
            print(f"   rc {reps[name]['rc']} {reps[name]['wall_s']:.0f} s {reps[name]['max_rss_mib']} MiB "
                  f"{reps[name].get('error', '')[:200]}", flush=True)
        ref = (reps.get("unmodified, no cap") or {}).get("report", {}).get("losses")
        rows += [row(tag, name, rep, ref) for name, rep in reps.items()]
    Path(a.out).write_text(json.dumps({"budgets": budgets, "rows": rows}, indent=1, default=float))
    Path(a.md).write_text(markdown(rows, budgets))
    print(Path(a.md).read_text())


if __name__ == "__main__":
    main()
