"""Run time on remc's CPU placement (``backends.capi``) against ONNX Runtime's arena, side by side in one process.

For each zoo model (the checkpoint-all plan's lowered training graph, at test size or ``--batch``/``--size``):
three sessions of the same graph, run alternately ``--runs`` times after two warm-up runs each (ONNX Runtime's
default threads: the kernel scratch remc measured, and so its layout, is per thread count); the medians and
their ratios to the arena:

- ``arena``: ONNX Runtime's one-region arena of twice the layout's height (``runtime.make_session``);
- ``remc``: remc's allocator with every request served by its Python callbacks (``native=False``), cap = the
  layout's height (``runtime.capped_session``);
- ``remc, native``: the same with the native hot path (``backends.nativealloc``; only when numba is installed),
  with whether it followed the layout as the Python one did (planned share, the same high-water mark);
- ``bare table``: the Python session's allocator replaced by a Python function returning the recorded addresses
  of a previous run by request index, and a no-op free: the ctypes callback boundary and ONNX Runtime's own
  allocation path with the least Python possible (unchecked: a measurement, never used for real runs);
- ``Python alone``: one run's requests replayed on the allocator without ONNX Runtime, through its hot path
  and through its general path, the least of 30 replays: robust to a loaded machine, unlike the run times.

    nice -n 10 python tools/capi_alloc_speed.py --models mobilenet_v2,resnet50 --runs 20 --out results/capi_alloc_speed.json
    nice -n 10 python tools/capi_alloc_speed.py --models resnet50 --batch 8 --size height=128,width=128,width_mult=0.25
"""
from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path

from remc import zoo
from remc.backends import nativealloc, runtime
from remc.fit import predict
from remc.pipeline import State, compile_pipeline, run


def _lowered(name: str, batch: int | None, size: dict | None = None):  # noqa: ANN202
    cfg = dict(zoo.small_config(name))
    b = batch or cfg.pop("batch")
    cfg.pop("batch", None)
    cfg.update(size or {})
    train = zoo.export(name, b, train=True, **cfg)
    return run(compile_pipeline(strategy="checkpoint-all"), State(model=train, budget=1 << 50)).lowered, b


def one_model(name: str, batch: int | None, runs: int, size: dict | None = None) -> dict:
    low, b = _lowered(name, batch, size)
    cap = predict(low, "cpu").arena
    feeds = runtime.random_inputs(low, 0)
    sess, alloc = runtime.capped_session(low, "cpu", cap, native=False)
    placed = runtime.Runner(sess, feeds, "cpu", mem_limit=cap, allocator=alloc)
    nsess, nalloc = runtime.capped_session(low, "cpu", cap)
    native = runtime.Runner(nsess, feeds, "cpu", mem_limit=cap, allocator=nalloc) \
        if getattr(nsess, "native", None) is not None else None
    arena = runtime.Runner(runtime.make_session(low, "cpu", mem_limit=2 * cap), feeds, "cpu")
    for f in (placed, arena, placed, arena, native, native):
        if f is not None:
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

    def use(a, f) -> None:  # noqa: ANN001
        alloc.alloc, alloc.free = a, f

    def timed_table() -> None:
        k[0] = 0
        placed()

    clock = time.perf_counter
    times: dict[str, list[float]] = {"arena": [], "remc": [], "bare table": []}
    if native is not None:
        times["remc, native"] = []
    calls0, planned0 = alloc.stats.calls, alloc.stats.planned
    ncalls0, nplanned0 = nalloc.stats.calls, nalloc.stats.planned
    for _ in range(runs):
        for key, fn, (a, f) in (("arena", arena, (real_alloc, real_free)),
                                ("remc", placed, (real_alloc, real_free)),
                                ("remc, native", native, (real_alloc, real_free)),
                                ("bare table", timed_table, (table_alloc, lambda _p: True))):
            if fn is None:
                continue
            use(a, f)
            t0 = clock()
            fn()
            times[key].append(clock() - t0)
    use(real_alloc, real_free)
    med = {key: statistics.median(v) for key, v in times.items()}
    requests = (alloc.stats.calls - calls0) / runs
    python = _python_only(alloc, placed, sess.layout)
    out = {"model": name, "batch": b, "size": size or {}, "runs": runs, "requests_per_run": requests,
           "planned_share": (alloc.stats.planned - planned0) / (alloc.stats.calls - calls0),
           "median_ms": {key: round(1e3 * v, 2) for key, v in med.items()},
           "remc_over_arena": round(med["remc"] / med["arena"], 3),
           "bare_table_over_arena": round(med["bare table"] / med["arena"], 3), **python}
    if native is not None:
        out["native_over_arena"] = round(med["remc, native"] / med["arena"], 3)
        out["native_planned_share"] = (nalloc.stats.planned - nplanned0) / max(nalloc.stats.calls - ncalls0, 1)
        out["native_high_water_equals_python"] = nalloc.stats.high_water == alloc.stats.high_water
        out["native_served"] = int(nsess.native.s[nativealloc.FREES]) > 0
    return out


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
    out = ["| model | requests per run | arena (ms) | remc, Python callbacks (ms) | remc / arena | remc, native "
           "hot path (ms) | native / arena | native: planned share, high-water = Python's | bare table (ms) | "
           "bare table / arena | Python alone, hot path (µs per request) |",
           "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        m = r["median_ms"]
        size = "".join(f" {k}={v}" for k, v in r.get("size", {}).items())
        out.append(f"| {r['model']} b{r['batch']}{size} | {r['requests_per_run']:.0f} | {m['arena']} | {m['remc']} | "
                   f"{r['remc_over_arena']} | {m.get('remc, native', '–')} | {r.get('native_over_arena', '–')} | "
                   f"{r.get('native_planned_share', '–')}, {r.get('native_high_water_equals_python', '–')} | "
                   f"{m['bare table']} | {r['bare_table_over_arena']} | {r.get('python_us_per_request_hot_path', '–')} |")
    return "\n".join(out)


def _size(text: str) -> dict:
    """``height=128,width_mult=0.25`` as keyword arguments of ``zoo.export`` (numbers parsed)."""
    out: dict = {}
    for item in filter(None, text.split(",")):
        k, v = item.split("=")
        out[k] = float(v) if "." in v else int(v)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", default="mobilenet_v2,resnet50")
    ap.add_argument("--batch", type=int, default=None, help="default: the zoo's test batch")
    ap.add_argument("--size", default="", help="size parameters over the test size, e.g. height=128,width=128")
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--out")
    a = ap.parse_args()
    rows = []
    for name in a.models.split(","):
        rows.append(one_model(name, a.batch, a.runs, _size(a.size)))
        print(json.dumps(rows[-1]), flush=True)
    if a.out:
        Path(a.out).write_text(json.dumps(rows, indent=1))
    print(render(rows))


if __name__ == "__main__":
    main()
