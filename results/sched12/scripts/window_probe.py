"""The sparse window search (passes/window.py) from approx's schedule on a fine graph: approx's schedule is
computed once (--approx seconds) and cached in results/sched12/cache/, then windows are solved one by one with
their build/solve time, columns and the cost after each. Prints one line per window.

    nice -n 10 python results/sched12/scripts/window_probe.py CUT RATIO [--approx 60] [--seconds 120] [--width 12]
"""
from __future__ import annotations

import argparse
import resource
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from fine_graphs import fine_dag  # noqa: E402

from remc.backends.highs import HighsBackend  # noqa: E402
from remc.backends.strategies import make_options, solve  # noqa: E402
from remc.ir.schedule import check, checkpoint_all, stage_peaks  # noqa: E402
from remc.passes import window as W  # noqa: E402
from remc.passes.milp_model import clean  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("cut")
    ap.add_argument("ratio", type=float)
    ap.add_argument("--approx", type=float, default=60)
    ap.add_argument("--seconds", type=float, default=120)
    ap.add_argument("--width", type=int, default=12)
    ap.add_argument("--back", type=int, default=24)
    ap.add_argument("--window-seconds", type=float, default=8)
    a = ap.parse_args()
    dag = fine_dag(a.cut)
    budget = int(a.ratio * checkpoint_all(dag).peak(dag))
    base = float(dag.cost.sum())
    cache = Path(__file__).parent.parent / "cache" / f"{a.cut}_{a.ratio}_{a.approx:g}.npz"
    if cache.exists():
        z = np.load(cache)
        R, S = z["R"], z["S"]
    else:
        t0 = time.perf_counter()
        s = solve("approx", dag, budget, make_options("approx", time_limit=a.approx, threads=1))
        R, S = s.R, s.S
        print(f"approx {100 * (s.report.cost / base - 1):+.4f}% in {time.perf_counter() - t0:.1f} s "
              f"(bound {100 * (s.report.bound / base - 1):+.4f}%)", flush=True)
        cache.parent.mkdir(exist_ok=True)
        np.savez_compressed(cache, R=R, S=S)
    R, S = clean(dag, R, S)
    cost = float(R.sum(0) @ dag.cost)
    print(f"{a.cut} {dag.n} units, ratio {a.ratio}: start {100 * (cost / base - 1):+.4f}%", flush=True)
    mip = HighsBackend()
    end = time.perf_counter() + a.seconds
    done = set()
    while time.perf_counter() < end:
        starts = [x for x in W.windows_by_recompute(dag, R, a.width) if x not in done]
        if not starts:
            break
        x = starts[0]
        done.add(x)
        t0 = time.perf_counter()
        sw = W.sub_window(dag, R, S, x, x + a.width, back=a.back)
        t1 = time.perf_counter()
        out = W.sub_window_solve(dag, budget, R, S, x, x + a.width, mip, time_limit=a.window_seconds, threads=1,
                                 back=a.back)
        t2 = time.perf_counter()
        msg = "none"
        if out is not None:
            R1, S1 = out
            c1 = float(R1.sum(0) @ dag.cost)
            ok = not check(dag, R1, S1) and stage_peaks(dag, R1, S1).max() <= budget
            msg = f"{100 * (c1 / base - 1):+.4f}% ok={ok}"
            if ok and c1 < cost - 1e-9 * cost:
                R, S, cost = R1, S1, c1
                msg += " ACCEPTED"
        print(f"window {x}: k={None if sw is None else sw.dag.n} sub-build {t1 - t0:.2f}s solve {t2 - t1:.2f}s -> {msg}", flush=True)
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"end {100 * (cost / base - 1):+.4f}% windows {len(done)} max RSS {rss:.0f} MiB", flush=True)


if __name__ == "__main__":
    main()
