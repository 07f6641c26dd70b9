"""What ``session.disable_prepacking`` (``DeviceSettings(prepack=False)``, ``--no-prepack``) saves and costs on
remc's CPU placement, side by side in one process.

For each zoo model (test size, the checkpoint-all plan's lowered training graph), with pre-packing on and
off: the need ``remc.fit.predict`` gives (remc's layout's height plus the bytes outside the buffer), a session
on remc's allocator of exactly the layout's height (its high-water mark and how many requests were at their
planned offsets), and the median time of ``--runs`` runs, the two sessions alternating.

    nice -n 10 python tools/prepack_cost.py --models vgg16,vgg19,gpt2,resnet50,mobilenet_v2 --out results/prepack_cost.json
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


def one_model(name: str, runs: int) -> dict:
    cfg = dict(zoo.small_config(name))
    b = cfg.pop("batch")
    train = zoo.export(name, b, train=True, **cfg)
    low = run(compile_pipeline(strategy="checkpoint-all"), State(model=train, budget=1 << 50)).lowered
    feeds = runtime.random_inputs(low, 0)
    row: dict = {"model": name, "batch": b}
    runners = {}
    for tag, st in (("prepack", runtime.DeviceSettings()), ("no_prepack", runtime.DeviceSettings(prepack=False))):
        p = predict(low, "cpu", settings=st)
        sess, alloc = runtime.capped_session(low, "cpu", p.arena, st)
        r = runtime.Runner(sess, feeds, "cpu", mem_limit=p.arena, allocator=alloc)
        r()
        r()
        runners[tag] = r
        row[tag] = {"need": p.total, "layout": p.arena, "outside": p.outside}
    times: dict[str, list[float]] = {k: [] for k in runners}
    for _ in range(runs):
        for tag, r in runners.items():
            t0 = time.perf_counter()
            r()
            times[tag].append(time.perf_counter() - t0)
    for tag, r in runners.items():
        st = r.allocator.stats
        row[tag].update(high_water=st.high_water, planned=st.planned, calls=st.calls,
                        median_ms=round(1e3 * statistics.median(times[tag]), 2))
    row["need_ratio"] = round(row["no_prepack"]["need"] / row["prepack"]["need"], 3)
    row["time_ratio"] = round(row["no_prepack"]["median_ms"] / row["prepack"]["median_ms"], 3)
    return row


def render(rows: list[dict]) -> str:
    out = ["| model | need, pre-packing (bytes) | need, --no-prepack | ratio | high-water = layout, planned/requests "
           "(off) | run, pre-packing (ms) | run, --no-prepack (ms) | ratio |", "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        on, off = r["prepack"], r["no_prepack"]
        exact = "yes" if off["high_water"] == off["layout"] and on["high_water"] == on["layout"] else "NO"
        out.append(f"| {r['model']} b{r['batch']} | {on['need']} | {off['need']} | {r['need_ratio']} | {exact}, "
                   f"{off['planned']}/{off['calls']} | {on['median_ms']} | {off['median_ms']} | {r['time_ratio']} |")
    return "\n".join(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", default="vgg16,vgg19,gpt2,resnet50,mobilenet_v2")
    ap.add_argument("--runs", type=int, default=15)
    ap.add_argument("--out")
    a = ap.parse_args()
    rows = []
    for name in a.models.split(","):
        rows.append(one_model(name, a.runs))
        print(json.dumps(rows[-1]), flush=True)
        if a.out:
            Path(a.out).write_text(json.dumps(rows, indent=1))
    print(render(rows))


if __name__ == "__main__":
    main()
