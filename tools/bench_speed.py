"""Speed checks that used to be wall-clock assertions in tests/ (a loaded CI box failed them): each one
timed here, compared with the limit the test had, and written to a JSON file.

    nice -n 10 python tools/bench_speed.py --out results/bench_speed.json [--check]

Measured (seconds, best of ``--repeat``):
- ``alloc_10k``: ``passes/alloc.allocate`` on the 10,000-statement plan of
  tests/test_alloc.py::test_ten_thousand_statements (limit 15 s);
- ``zoo_forward_run/<model>``: one ONNX Runtime run of the small forward zoo model (limit 2 s);
- ``zoo_paper_build/<model>``: building the paper-size model with shape-only weights (limit 2 s);
- ``zoo_train_run/<model>``: one ONNX Runtime run of the small training graph (limit 2 s);
- ``zoo_paper_train_export/<model>``: exporting the paper-size training graph, shape-only (limit 10 s);
- ``milp_hard_stop``: checkmate's MILP on the small U-Net's dense-row model with a 3 s limit, where HiGHS
  would stay in its presolve for minutes: the child is killed and the incumbent returned (limit: 3 s +
  ``HARD_STOP_GRACE`` + 5 s, as tests/test_milp.py::test_time_limit_holds_where_highs_overruns_it had).

With ``--check`` the exit status is 1 when any measurement is above its limit. Absolute times depend on
the machine and its load; compare runs made on the same machine.
"""
from __future__ import annotations

import argparse
import json
import platform
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort

from remc import zoo
from remc.backends.highs import HARD_STOP_GRACE
from remc.ir.plan import Compute, Deallocate, Plan, Unit
from remc.passes.alloc import allocate


def best_of(fn: Callable[[], object], repeat: int) -> float:
    """The least wall time of ``repeat`` calls of ``fn``."""
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def ten_thousand_statements() -> Plan:
    """The plan of tests/test_alloc.py::test_ten_thousand_statements (same seed, same plan)."""
    rng = np.random.default_rng(0)
    n = 5000
    units = tuple(Unit(f"u{i}", (f"u{i}",), int(m), int(w), 1.0) for i, (m, w) in
                  enumerate(zip(rng.integers(1, 1 << 20, n), rng.integers(0, 1 << 18, n) * (rng.random(n) < 0.3))))
    dies = np.arange(n) + 1 + rng.geometric(0.05, n)
    stages: list[list] = []
    for i in range(n):
        stages.append([Compute(i, f"u{i}")] + [Deallocate(int(r)) for r in np.flatnonzero(dies == i)])
    stages[-1] += [Deallocate(int(r)) for r in np.flatnonzero(dies >= n)]
    return Plan("big", None, 0, "random", "fine", units, stages)


def session(model: onnx.ModelProto) -> ort.InferenceSession:
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    return ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])


def feeds(model: onnx.ModelProto, classes: int) -> dict[str, np.ndarray]:
    """Random inputs: floats N(0, 1), integers (labels, token ids) in [0, classes)."""
    rng = np.random.RandomState(0)
    out = {}
    for vi in model.graph.input:
        t = vi.type.tensor_type
        shape = [d.dim_value for d in t.shape.dim]
        dtype = onnx.helper.tensor_dtype_to_np_dtype(t.elem_type)
        out[vi.name] = (rng.randint(0, classes, size=shape).astype(dtype) if dtype.kind in "iu"
                        else rng.standard_normal(shape).astype(dtype))
    return out


def measure(models: list[str], repeat: int) -> list[dict]:
    rows = []

    def add(name: str, seconds: float, limit: float) -> None:
        rows.append({"name": name, "seconds": seconds, "limit": limit, "within": seconds <= limit})
        print(f"{name:40s} {seconds:8.3f} s  (limit {limit:g} s){'' if seconds <= limit else '  OVER'}",
              flush=True)

    plan = ten_thousand_statements()
    add("alloc_10k", best_of(lambda: allocate(plan), repeat), 15.0)
    for name in models:
        rows_of_model(name, repeat, add)
    add("milp_hard_stop", milp_hard_stop(3.0), 3.0 + HARD_STOP_GRACE + 5.0)
    return rows


def milp_hard_stop(limit: float) -> float:
    """Seconds checkmate's MILP takes under ``limit`` where HiGHS would overrun it (see the docstring)."""
    from remc.backends.strategies import least_budget_bound, solve_approx, solve_milp
    from remc.ir.schedule import checkpoint_all
    from remc.pipeline import State, compile_pipeline, run, stages
    cfg = dict(zoo.small_config("unet"))
    dag = run(stages(compile_pipeline(), last="units"),
              State(model=zoo.export("unet", cfg.pop("batch"), train=True, **cfg))).dag
    full, least = checkpoint_all(dag).peak(dag), least_budget_bound(dag, time_limit=60)
    budget = int(least + 0.5 * (full - least))
    inc = solve_approx(dag, budget)
    t0 = time.perf_counter()
    solve_milp(dag, budget, time_limit=limit, memory_form="dense", incumbent=inc, warm_start=False)
    return time.perf_counter() - t0


def rows_of_model(name: str, repeat: int, add: Callable[[str, float, float], None]) -> None:
    """The zoo rows of one model."""
    small = dict(zoo.small_config(name))
    batch = small.pop("batch")
    classes = int(small.get("num_classes", small.get("vocab_size", 10)))
    fwd = zoo.build(name, batch, **small)
    sess, data = session(fwd), feeds(fwd, classes)
    add(f"zoo_forward_run/{name}", best_of(lambda: sess.run(["logits"], data), repeat), 2.0)
    paper = dict(zoo.paper_config(name))
    add(f"zoo_paper_build/{name}", best_of(lambda: zoo.build(name, weights="shape-only", **paper), repeat), 2.0)
    train = zoo.export(name, batch, train=True, **small)
    tsess, tdata = session(train), feeds(train, classes)
    add(f"zoo_train_run/{name}", best_of(lambda: tsess.run(None, tdata), repeat), 2.0)
    pbatch = paper.pop("batch")
    add(f"zoo_paper_train_export/{name}",
        best_of(lambda: zoo.export(name, pbatch, train=True, weights="shape-only", **paper), repeat), 10.0)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", required=True, help="JSON file for the results")
    ap.add_argument("--models", default=",".join(zoo.list_models()), help="zoo models (comma-separated)")
    ap.add_argument("--repeat", type=int, default=3, help="time each step this often and keep the best")
    ap.add_argument("--check", action="store_true", help="exit 1 when a measurement is above its limit")
    args = ap.parse_args(argv)
    rows = measure([m for m in args.models.split(",") if m], max(args.repeat, 1))
    report = {"machine": platform.platform(), "python": sys.version.split()[0], "onnxruntime": ort.__version__,
              "repeat": args.repeat, "rows": rows}
    Path(args.out).write_text(json.dumps(report, indent=2) + "\n")
    over = [r["name"] for r in rows if not r["within"]]
    print(f"wrote {args.out}; {len(rows) - len(over)} of {len(rows)} within their limits")
    return 1 if args.check and over else 0


if __name__ == "__main__":
    sys.exit(main())
