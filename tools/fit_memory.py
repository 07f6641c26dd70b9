"""What approx's LP relaxation costs in resident memory on a step graph (issue #13: the fit phase of
``remc train`` on GPT-2 reached 3.9 GiB for a 498 MB model): load the graph, run the pipeline to its units
(FLOP costs), then build approx's LP (``passes/milp_model.build_model``, as ``passes/approx._Relaxation``
does), load it in HiGHS, solve it at the budget, and free it, ``--rounds`` times (the fit solves once per
round); VmRSS after each phase, the LP's size (columns, rows, nonzeros) and the bytes of its matrix.

    python tools/fit_memory.py gpt2_s512_sgd_step.onnx --budget 1500000000 --rounds 2 -o results/rss/fit_memory.json

With ``--fit``: the fit's own first phase instead (``remc/fit._solve_raising``: approx at the budget, then,
when no schedule fits there, at raised solver budgets, keeping the first failure's exception for its message),
``--keep-tracebacks`` as before commit 6efbe51 (the kept exceptions with their tracebacks); VmRSS after it
returns (garbage collected, heap trimmed) and its peak (VmHWM, reset after the units).
"""
from __future__ import annotations

import argparse
import ctypes
import gc
import json
import time
from pathlib import Path
from typing import Any


def vm(field: str = "VmRSS") -> int:
    """A ``/proc/self/status`` field in MiB."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1]) // 1024
    return 0


def trim() -> None:
    """Collect, then hand glibc's free heap back to the OS (as ``remc train`` does between phases)."""
    gc.collect()
    try:
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except OSError:
        pass


def fit_phase(state: Any, a: argparse.Namespace, mark: Any) -> None:
    """``remc/fit._solve_raising`` with approx at ``a.budget`` (schedule, plan, lower), as the fit's first round."""
    from remc import fit
    from remc.backends.strategies import make_options
    from remc.pipeline import compile_pipeline, stages
    if a.keep_tracebacks:
        fit._detached = lambda e: e  # as before commit 6efbe51
    fit.RAISE_ATTEMPTS = a.raise_attempts
    passes = stages(compile_pipeline(cost="flops", strategy="approx",
                                     options=make_options("approx", time_limit=a.time_limit)), first="schedule")
    report = fit.FitReport(budget=a.budget, solver_budget=a.budget, rounds=0)
    with open("/proc/self/clear_refs", "w") as f:  # VmHWM from here
        f.write("5")
    mark("before the fit's solve (peak reset)")
    try:
        last, first = fit._solve_raising(passes, state, report, None, None)
        outcome = {"raised_from": last, "solver_budget": report.solver_budget,
                   "first_error": None if first is None else str(first)[:200]}
    except Exception as e:  # noqa: BLE001 - every attempt failed: the fit would report it
        outcome = {"failed": str(e)[:200]}
        del e
    trim()
    mark("after the fit's solve (schedule, plan, lowered model kept; gc, malloc_trim)", **outcome)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("model")
    ap.add_argument("--budget", type=int, required=True)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--time-limit", type=float, default=120.0)
    ap.add_argument("--fit", action="store_true", help="the fit's solve phase (approx) instead of the bare LP")
    ap.add_argument("--keep-tracebacks", action="store_true", help="--fit as before 6efbe51")
    ap.add_argument("--raise-attempts", type=int, default=1, help="--fit: solves above the budget at most")
    ap.add_argument("-o", "--out")
    a = ap.parse_args()
    from remc.backends.highs import HighsBackend
    from remc.backends.runtime import load_model
    from remc.passes.milp_model import build_model
    from remc.pipeline import State, compile_pipeline, run, stages
    phases: list[dict[str, Any]] = []

    def mark(name: str, **extra: Any) -> None:
        phases.append({"phase": name, "rss_mib": vm(), "hwm_mib": vm("VmHWM"), **extra})
        print(f"{vm():6d} MiB (peak {vm('VmHWM'):6d})  {name} {extra if extra else ''}", flush=True)

    mark("start")
    model = load_model(a.model)
    mark("step graph loaded")
    state = run(stages(compile_pipeline(cost="flops"), last="units"), State(model=model, budget=a.budget))
    del model
    trim()
    mark("import, costs, units (the model dropped, the imported graph kept)", units=state.dag.n)
    if a.fit:
        fit_phase(state, a, mark)
        if a.out:
            Path(a.out).write_text(json.dumps({"model": a.model, "budget": a.budget, "fit": True,
                                               "keep_tracebacks": a.keep_tracebacks, "phases": phases}, indent=1))
        return
    dag = state.dag
    for k in range(a.rounds):
        t0 = time.perf_counter()
        lp = build_model(dag, a.budget, free_form="tight", usefulness=False)
        A = lp.A
        mark(f"round {k + 1}: LP built", columns=int(lp.num_col), rows=int(lp.num_row), nonzeros=int(A.nnz),
             matrix_mib=round((A.data.nbytes + A.indices.nbytes + A.indptr.nbytes) / 2 ** 20, 1),
             seconds=round(time.perf_counter() - t0, 1))
        session = HighsBackend().lp_session(lp, threads=1)
        mark(f"round {k + 1}: LP loaded in HiGHS")
        t0 = time.perf_counter()
        res = session.solve(a.budget, time_limit=a.time_limit)
        mark(f"round {k + 1}: LP solved", status=res.status, seconds=round(time.perf_counter() - t0, 1))
        del session, res
        trim()
        mark(f"round {k + 1}: HiGHS freed (gc, malloc_trim)")
        del lp, A
        trim()
        mark(f"round {k + 1}: LP freed")
    if a.out:
        Path(a.out).write_text(json.dumps({"model": a.model, "budget": a.budget, "phases": phases}, indent=1))


if __name__ == "__main__":
    main()
