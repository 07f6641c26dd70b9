"""Counts behind BENCHMARKS "Session 11": run from results/gpu_s11 (python ../../tools/gpu_s11_summary.py)."""
import json


def rows_of(files: list[str]) -> list[tuple[dict, dict]]:
    out = []
    for f in files:
        for m in json.load(open(f))["models"]:
            out += [(m, r) for r in m["rows"] if not r["strategy"].startswith("unmod")]
    return out


def summ(files: list[str], label: str) -> None:
    """One line of counts over the rows of ``files``."""
    rows = rows_of(files)
    comp = [(m, r) for m, r in rows if r.get("compiled")]
    notlin = [r for m, r in rows if not r.get("compiled") and "linear forward graph" in r.get("why", "")]
    other = [r for m, r in rows if not r.get("compiled") and "linear forward graph" not in r.get("why", "")]
    ran = [(m, r) for m, r in comp if r.get("ran")]
    oom = [(m, r) for m, r in comp if r.get("ran") is False]
    unmeas = [(m, r) for m, r in comp if "ran" not in r]
    eq = sum(r["measured_in_use"] == r["predicted"] for m, r in ran)
    le = sum(r["measured_in_use"] <= r["budget"] for m, r in ran)
    allp = sum(r["placement"]["planned"] == r["placement"]["calls"] for m, r in ran if isinstance(r.get("placement"), dict))
    match = sum(r["outputs_match"] for m, r in ran)
    cg = [(m, r) for m, r in ran if r.get("cg_stage") == "done"]
    cgfail = [(m, r) for m, r in ran if r.get("cg_stage") not in (None, "done")]
    cgp = sum(r["cg_planned"] == r["cg_requests"] and r["cg_fallback"] == 0 for m, r in cg)
    cgeq = sum(r["cg_total"] == r["predicted"] for m, r in cg)
    cgle = [r["cg_total"] / r["budget"] for m, r in cg]
    cgm = sum(bool(r.get("cg_outputs_match")) for m, r in cg)
    replay0 = sum(all(x == 0 for x in r["cg_requests_per_run"][1:]) for m, r in cg)
    print(f"{label}: {len(rows)} rows: {len(notlin)} do not apply (need a linear forward graph), {len(other)} no plan "
          f"fits, {len(comp)} compiled; ran under cap = budget {len(ran)}, out of memory {len(oom)}, not measured "
          f"{len(unmeas)} ({', '.join(sorted({r.get('skipped', 'killed') for m, r in unmeas}))}); "
          f"measured = predicted {eq}/{len(ran)}; measured <= budget {le}/{len(ran)}; every request planned "
          f"{allp}/{len(ran)}; outputs match {match}/{len(ran)}. CUDA graph on the compiled layout: ran {len(cg)}/{len(ran)} "
          f"(failed {len(cgfail)}), measured = predicted {cgeq}/{len(cg)}, <= budget {sum(x <= 1 for x in cgle)}/{len(cg)} "
          f"(max {max(cgle, default=0):.3f} of budget), every request planned {cgp}/{len(cg)}, no allocation in any "
          f"replay {replay0}/{len(cg)}, outputs match the unmodified graph's CUDA-graph run {cgm}/{len(cg)}")


def exceeded_before() -> None:
    """Session 10's CUDA-graph rows above the budget, against this session's same rows."""
    now = {(m["model"], r["fraction"], r["strategy"]): r for m, r in rows_of(["ev_unet.json", "ev_gpt2.json"])}
    for f in ["../gpu_s10/ev_unet.json", "../gpu_s10/ev_gpt2.json"]:
        for m, r in rows_of([f]):
            if r.get("cg_total_over_budget", 0) > 1:
                n = now.get((m["model"], r["fraction"], r["strategy"]), {})
                got = (f"{n['cg_total']} = {n['cg_total'] / n['budget']:.3f} of budget, predicted {n['predicted']}"
                       if n.get("cg_stage") == "done" else f"not run ({n.get('cg_stage') or n.get('skipped')})")
                print(f"  {m['model']} {r['fraction']} {r['strategy']}: session 10 {r['cg_total']} = "
                      f"{r['cg_total_over_budget']:.3f} of budget {r['budget']}; now {got}")


summ(["ev_unet.json", "ev_gpt2.json", "ev_r50.json", "ev_mnv2.json"], "GPU paper sizes")
for f in ["ev_unet.json", "ev_gpt2.json", "ev_r50.json", "ev_mnv2.json", "ev_vgg19.json"]:
    summ([f], f)
print("session 10's 11 paper rows whose CUDA-graph run exceeded the budget:")
exceeded_before()
