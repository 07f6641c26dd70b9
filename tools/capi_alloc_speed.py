"""Run time on remc's CPU placement (``backends.capi``) against ONNX Runtime's arena, side by side in one process.

For each zoo model (test size, the checkpoint-all plan's lowered training graph): one session on remc's
allocator (cap = its layout's height, ``runtime.capped_session``) and one on a one-region arena of twice that
(``runtime.make_session``), run alternately ``--runs`` times (ONNX Runtime's default threads: the kernel scratch remc measured, and so
its layout, is per thread count) after two warm-up runs each; the medians and
their ratio. Where the placed runs' extra time goes, from two more variants of the same placed session:

- ``allocator methods``: the seconds per run spent inside ``PlacedAllocator.alloc``/``free`` (wrapped with a
  timer; the timer's own cost included), i.e. remc's Python lookup;
- ``bare table``: the allocator replaced by a Python function returning the recorded addresses of a previous
  run by request index, and a no-op free: the ctypes callback boundary and ONNX Runtime's own
  allocation path, with the least Python possible (unchecked: a measurement, never used for real runs);
- ``Python alone``: one run's requests replayed on the allocator without ONNX Runtime, through its hot path
  and through its general path (what every request took before the hot path), the least of 30 replays:
  robust to a loaded machine, unlike the run times.

    nice -n 10 python tools/capi_alloc_speed.py --models mobilenet_v2,resnet50 --runs 20 --out results/capi_alloc_speed.json
"""
from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path

from remc import zoo
from remc.backends import runtime
from remc.fit import predict
from remc.pipeline import State, compile_pipeline, run


def _lowered(name: str, batch: int | None):  # noqa: ANN202
    cfg = dict(zoo.small_config(name))
    b = batch or cfg.pop("batch")
    cfg.pop("batch", None)
    train = zoo.export(name, b, train=True, **cfg)
    return run(compile_pipeline(strategy="checkpoint-all"), State(model=train, budget=1 << 50)).lowered, b


def one_model(name: str, batch: int | None, runs: int) -> dict:
    low, b = _lowered(name, batch)
    cap = predict(low, "cpu").arena
    feeds = runtime.random_inputs(low, 0)
    sess, alloc = runtime.capped_session(low, "cpu", cap)
    placed = runtime.Runner(sess, feeds, "cpu", mem_limit=cap, allocator=alloc)
    arena = runtime.Runner(runtime.make_session(low, "cpu", mem_limit=2 * cap), feeds, "cpu")
    for f in (placed, arena, placed, arena):
        f()

    # the bare table: the addresses of one traced run, by request index
    alloc.trace = []
    placed()
    addrs = [alloc.base + off for (_ph, _k, _n, off, _how) in alloc.trace]
    alloc.trace = None
    real_alloc, real_free = alloc.alloc, alloc.free
    k = [0]

    def table_alloc(_n: int, addrs: list[int] = addrs, k: list[int] = k) -> int:
        i = k[0]
        k[0] = i + 1
        return addrs[i]

    inside = [0.0]
    clock = time.perf_counter

    def timed_alloc(n: int) -> int | None:
        t0 = clock()
        p = real_alloc(n)
        inside[0] += clock() - t0
        return p

    def timed_free(p: int | None) -> bool:
        t0 = clock()
        ours = real_free(p)
        inside[0] += clock() - t0
        return ours

    def use(a, f) -> None:  # noqa: ANN001
        alloc.alloc, alloc.free = a, f

    def timed_table() -> None:
        k[0] = 0
        placed()

    times: dict[str, list[float]] = {"arena": [], "remc": [], "remc, methods timed": [], "bare table": []}
    calls0, planned0 = alloc.stats.calls, alloc.stats.planned
    for _ in range(runs):
        for key, fn, (a, f) in (("arena", arena, (real_alloc, real_free)),
                                ("remc", placed, (real_alloc, real_free)),
                                ("remc, methods timed", placed, (timed_alloc, timed_free)),
                                ("bare table", timed_table, (table_alloc, lambda _p: True))):
            use(a, f)
            t0 = clock()
            fn()
            times[key].append(clock() - t0)
    use(real_alloc, real_free)
    med = {key: statistics.median(v) for key, v in times.items()}
    requests = (alloc.stats.calls - calls0) / (2 * runs)
    python = _python_only(alloc, placed, sess.layout)
    return {"model": name, "batch": b, "runs": runs, "requests_per_run": requests,
            "planned_share": (alloc.stats.planned - planned0) / (alloc.stats.calls - calls0),
            "median_ms": {key: round(1e3 * v, 2) for key, v in med.items()},
            "remc_over_arena": round(med["remc"] / med["arena"], 3),
            "bare_table_over_arena": round(med["bare table"] / med["arena"], 3),
            "allocator_methods_ms_per_run": round(1e3 * inside[0] / runs, 2),
            "allocator_us_per_request": round(1e6 * inside[0] / runs / requests, 2), **python}


def _python_only(alloc, placed, lay, reps: int = 30) -> dict:  # noqa: ANN001
    """remc's allocator alone, no ONNX Runtime: one run's recorded requests and frees replayed on a fresh
    ``PlacedAllocator`` of the same layout (from the live state the run started with), ``reps`` times; the
    least seconds per request (an alloc and its free), through ``alloc`` (its hot path) and through
    ``_alloc`` (the general path every request took before the hot path)."""
    from remc.backends.placement import from_layout
    placed()
    before = (list(alloc.starts), dict(alloc.size_at), alloc.in_use, alloc.runs)
    alloc.record = []
    placed()
    rec, alloc.record = alloc.record, None
    out = {}
    for key in ("alloc", "_alloc"):
        best = float("inf")
        for _ in range(reps):
            pa = from_layout(alloc.base, alloc.capacity, lay)
            pa.starts, pa.size_at, pa.in_use, pa.runs = list(before[0]), dict(before[1]), before[2], before[3]
            pa.phase = "run"
            pa.begin_run()
            get, put, base = getattr(pa, key), pa.free, pa.base
            t0 = time.perf_counter()
            for _run, op, off, n in rec:
                if op == "a":
                    get(n)
                else:
                    put(base + off)
            best = min(best, time.perf_counter() - t0)
        assert pa.stats.fallback == 0, "the replay left the layout"
        out["python_us_per_request_" + ("hot_path" if key == "alloc" else "general_path")] = round(
            1e6 * best / (len(rec) / 2), 2)
    return out


def render(rows: list[dict]) -> str:
    out = ["| model | requests per run | arena (ms) | remc's placement (ms) | remc / arena | bare table (ms) | "
           "bare table / arena | inside remc's alloc+free per run (ms) | per request (µs) | Python alone, hot path "
           "(µs per request) | Python alone, general path (µs) |",
           "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        m = r["median_ms"]
        out.append(f"| {r['model']} b{r['batch']} | {r['requests_per_run']:.0f} | {m['arena']} | {m['remc']} | "
                   f"{r['remc_over_arena']} | {m['bare table']} | {r['bare_table_over_arena']} | "
                   f"{r['allocator_methods_ms_per_run']} | {r['allocator_us_per_request']} | "
                   f"{r.get('python_us_per_request_hot_path', '–')} | {r.get('python_us_per_request_general_path', '–')} |")
    return "\n".join(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", default="mobilenet_v2,resnet50")
    ap.add_argument("--batch", type=int, default=None, help="default: the zoo's test batch")
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--out")
    a = ap.parse_args()
    rows = []
    for name in a.models.split(","):
        rows.append(one_model(name, a.batch, a.runs))
        print(json.dumps(rows[-1]), flush=True)
    if a.out:
        Path(a.out).write_text(json.dumps(rows, indent=1))
    print(render(rows))


if __name__ == "__main__":
    main()
