"""CPU evidence for issue 11 on remc's placement: every zoo model (test size), every strategy, run under a cap
equal to the budget.

For each model: the checkpoint-all plan's lowered graph gives what the graph needs on CPU with remc's
placement (``remc.fit.predict``: its layout's height plus the bytes outside the buffer; the BFC arena's
replayed need beside it); the budget is ``--fraction`` of that. Every strategy compiles at that budget with
``remc.fit.compile_fit`` (``verify``: runs under the cap). A plan that compiles runs twice more under
cap = budget on remc's allocator (``backends.capi``): measured = the buffer's high-water mark plus the bytes
outside it, against the prediction. A strategy that finds no plan there is compiled again at the least
need its fit reported (the best plan's prediction), and that plan runs under a cap of that budget: the
least feasible budget found for it. Strategies that do not apply to the graph (griewank and chen-* need a
linear chain) say so. The unmodified training graph runs under cap = budget too.

    python tools/cpu_placement_evidence.py --out results/cpu_placement.json [--fraction 0.95] [--models a,b]
    python tools/cpu_placement_evidence.py --render results/cpu_placement.json

``--no-prepack``: every session, measurement and prediction with ``session.disable_prepacking=1``
(``DeviceSettings(prepack=False)``); checkpoint-all's need (and so the budget) is then its need that way.
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import time
from pathlib import Path

from remc import zoo
from remc.backends import runtime
from remc.backends.strategies import make_options
from remc.fit import compile_fit, predict
from remc.ir.errors import RemcError
from remc.passes.strategies import SOLVER_NAMES, STRATEGIES
from remc.pipeline import State, compile_pipeline, run, stages

SETTINGS = [runtime.DeviceSettings()]
"""The settings of every session, measurement and prediction (``--no-prepack`` replaces it)."""


def under_cap(model, budget: int) -> dict:
    """Two runs of ``model`` under cap = ``budget`` on remc's allocator (as ``remc run --mem-limit``)."""
    try:
        cap = runtime.arena_cap(model, "cpu", budget)
        sess, alloc = runtime.capped_session(model, "cpu", cap, SETTINGS[0])
        r = runtime.Runner(sess, runtime.random_inputs(model, 0), "cpu", mem_limit=cap, allocator=alloc)
        r()
        r()
    except runtime.OutOfMemory as e:
        return {"ran": False, "oom": str(e)}
    out = runtime.outside_bytes(model, "cpu")
    st = alloc.stats
    return {"ran": True, "measured": st.high_water + out, "requests": st.calls, "planned": st.planned}


def compile_at(passes, s: State, budget: int) -> tuple[dict, object]:
    s.budget = budget
    t0 = time.perf_counter()
    fit = compile_fit(stages(passes, first="schedule"), s, device="cpu", verify=True, settings=SETTINGS[0])
    return {"budget": budget, "rounds": fit.rounds, "solver_budget": fit.solver_budget,
            "predicted": fit.prediction.total, "live_peak": int(s.sim.peak),
            "seconds": round(time.perf_counter() - t0, 1)}, s.lowered


def one_strategy(train, strat: str, budget: int, time_limit: float) -> dict:
    options = make_options(strat, time_limit=time_limit) if strat in SOLVER_NAMES else None
    passes = compile_pipeline(strategy=strat, options=options)
    row: dict = {"strategy": strat}
    try:
        s = run(stages(passes, last="units"), State(model=train))
    except RemcError as e:
        return {**row, "applies": False, "why": str(e).splitlines()[0]}
    try:
        res, low = compile_at(passes, s, budget)
        row.update(compiled=True, **res)
        row.update(under_cap(low, budget))
        return row
    except RemcError as e:
        row.update(compiled=False, why=str(e).splitlines()[0])
        rep = getattr(e, "fit_report", None)
        least = min((h["predicted"] for h in rep.history if "predicted" in h), default=None) if rep else None
        if least is None:  # refused in remc's model before any round: start from the least peak it names
            least = getattr(e, "least_feasible", None)
            row["least_from"] = "model" if least is not None else None
        else:
            row["least_from"] = "fit"
        if least is None:
            row["applies"] = "needs a linear forward graph" not in str(e)
            return row
    b = int(least)
    for _ in range(4):  # the least feasible budget found: the best plan's need, then what the fit says it needs
        try:
            s = run(stages(passes, last="units"), State(model=train))
            res, low = compile_at(passes, s, b)
        except RemcError as e:
            row.setdefault("least_attempts", []).append({"budget": b, "why": str(e).splitlines()[0][:160]})
            rep = getattr(e, "fit_report", None)
            need = min((h["predicted"] for h in rep.history if "predicted" in h), default=0) if rep else 0
            b = max(int(b * 1.01) + 1, int(need))
            continue
        row["least"] = {**res, **under_cap(low, b)}
        break
    return row


def one_model(name: str, fraction: float, time_limit: float, strategies: list[str]) -> dict:
    cfg = dict(zoo.small_config(name))
    batch = cfg.pop("batch")
    train = zoo.export(name, batch, train=True, **cfg)
    low = run(compile_pipeline(strategy="checkpoint-all"), State(model=train, budget=1 << 50)).lowered
    need = predict(low, "cpu", settings=SETTINGS[0]).total
    arena_need = predict(low, "cpu", settings=dataclasses.replace(SETTINGS[0], placement="arena")).total
    budget = int(fraction * need)
    rows = []
    for strat in strategies:
        rows.append(one_strategy(train, strat, budget, time_limit))
        print(json.dumps(rows[-1]), flush=True)
    return {"model": name, "batch": batch, "checkpoint_all_needs": need, "checkpoint_all_arena_needs": arena_need,
            "budget": budget, "fraction": fraction, "unmodified_under_cap": under_cap(train, budget), "rows": rows,
            "prepack": SETTINGS[0].prepack}


def render(data: list[dict]) -> str:
    out = ["| model | budget (fraction of checkpoint-all's need) | strategy | rounds | predicted | measured "
           "under cap = budget | measured / predicted | least feasible budget found (measured under it) |",
           "|---|---|---|---|---|---|---|---|"]
    for m in data:
        for r in m["rows"]:
            head = f"| {m['model']} b{m['batch']} | {m['budget']} ({m['fraction']:.2f}) | {r['strategy']} "
            if r.get("applies") is False:
                out.append(head + f"| – | – | does not apply: {r['why'][:80]} | | |")
                continue
            if r.get("compiled"):
                if r.get("ran"):
                    ok = "≤ budget" if r["measured"] <= m["budget"] else "ABOVE budget"
                    out.append(head + f"| {r['rounds']} | {r['predicted']} | {r['measured']} ({ok}) | "
                               f"{r['measured'] / r['predicted']:.3f} | |")
                else:
                    out.append(head + f"| {r['rounds']} | {r['predicted']} | OOM: {r.get('oom', '')[:80]} | | |")
                continue
            lf = r.get("least")
            if lf is None:
                out.append(head + f"| – | – | no plan: {r['why'][:80]} | | none found |")
                continue
            meas = f"{lf['measured']} ({lf['measured'] / lf['predicted']:.3f} of predicted)" if lf.get("ran") \
                else f"OOM: {lf.get('oom', '')[:60]}"
            src = "refused in remc's model; " if r.get("least_from") == "model" else ""
            out.append(head + f"| – | – | no plan fits the budget | | {src}{lf['budget']} "
                       f"({lf['budget'] / m['budget']:.3f}x the budget; {lf['rounds']} round(s)): {meas} |")
        u = m["unmodified_under_cap"]
        out.append(f"| {m['model']} b{m['batch']} | {m['budget']} | unmodified graph | | | "
                   f"{'ran' if u.get('ran') else 'out of memory (as it must)'} | | |")
    return "\n".join(out)


def summary(data: list[dict]) -> dict:
    """Counts over a run: rows, pairs that apply, compiled at the budget (by fit rounds), least budget found,
    no plan; plans that ran with measured = predicted and within their cap; unmodified graphs out of memory."""
    out = {"models": len(data), "rows": 0, "apply": 0, "compiled": 0, "least_found": 0, "no_plan": 0,
           "measured_eq_predicted": 0, "within_cap": 0, "unmodified_oom": 0, "rounds": {}}
    for m in data:
        out["unmodified_oom"] += not m["unmodified_under_cap"].get("ran")
        for r in m["rows"]:
            out["rows"] += 1
            if r.get("applies") is False:
                continue
            out["apply"] += 1
            run_, cap = (r, m["budget"]) if r.get("compiled") else (r.get("least"), (r.get("least") or {}).get("budget"))
            if r.get("compiled"):
                out["compiled"] += 1
                out["rounds"][r["rounds"]] = out["rounds"].get(r["rounds"], 0) + 1
            elif run_:
                out["least_found"] += 1
            else:
                out["no_plan"] += 1
            if run_ and run_.get("ran"):
                out["measured_eq_predicted"] += run_["measured"] == run_["predicted"]
                out["within_cap"] += run_["measured"] <= cap
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out")
    ap.add_argument("--fraction", type=float, default=0.95)
    ap.add_argument("--models", default=",".join(zoo.list_models()))
    ap.add_argument("--strategies", default=",".join(STRATEGIES))
    ap.add_argument("--time-limit", type=float, default=10.0)
    ap.add_argument("--render")
    ap.add_argument("--summary", help="print the counts over a run's JSON (``summary``)")
    ap.add_argument("--no-prepack", dest="prepack", action="store_false")
    a = ap.parse_args()
    SETTINGS[0] = runtime.DeviceSettings(prepack=a.prepack)
    if a.summary:
        print(json.dumps(summary(json.loads(Path(a.summary).read_text()))))
        return
    if a.render:
        print(render(json.loads(Path(a.render).read_text())))
        return
    data = []
    for name in a.models.split(","):
        data.append(one_model(name, a.fraction, a.time_limit, a.strategies.split(",")))
        if a.out:
            Path(a.out).write_text(json.dumps(data, indent=1))
        print(render([data[-1]]), flush=True)


if __name__ == "__main__":
    main()
