"""Counts behind BENCHMARKS "Session 10 on the H200": run from results/gpu_s10 (python ../../tools/gpu_s10_summary.py)."""
import json


def summ(files: list[str], label: str) -> None:
    """One line of counts over the rows of ``files``."""
    rows = []
    for f in files:
        for m in json.load(open(f))["models"]:
            for r in m["rows"]:
                if r["strategy"].startswith("unmod"):
                    continue
                rows.append((m, r))
    comp=[(m,r) for m,r in rows if r.get("compiled")]
    notlin=[r for m,r in rows if not r.get("compiled") and "linear forward graph" in r.get("why","")]
    other=[r for m,r in rows if not r.get("compiled") and "linear forward graph" not in r.get("why","")]
    ran=[(m,r) for m,r in comp if r.get("ran")]
    oom=[(m,r) for m,r in comp if r.get("ran") is False]
    unmeas=[(m,r) for m,r in comp if "ran" not in r]
    eq=sum(r["measured_in_use"]==r["predicted"] for m,r in ran)
    le=sum(r["measured_in_use"]<=r["budget"] for m,r in ran)
    allp=sum(r["placement"]["planned"]==r["placement"]["calls"] for m,r in ran if isinstance(r.get("placement"),dict))
    match=sum(r["outputs_match"] for m,r in ran)
    cg=[(m,r) for m,r in ran if r.get("cg_stage")=="done"]
    cgfail=[(m,r) for m,r in ran if r.get("cg_stage") not in (None,"done")]
    cgp=sum(r["cg_planned"]==r["cg_requests"] and r["cg_fallback"]==0 for m,r in cg)
    cgle=[r["cg_total"]/r["budget"] for m,r in cg]
    cgm=sum(bool(r.get("cg_outputs_match")) for m,r in cg)
    prof=[abs(r["predicted_overhead_profile"]/r["measured_overhead"]-1) for m,r in ran if r.get("predicted_overhead_profile")]
    fl=[abs(r["predicted_overhead"]/r["measured_overhead"]-1) for m,r in ran]
    least=sum(bool(r.get("first_budget")) for m,r in ran)
    print(f"{label}: {len(rows)} (model, budget, strategy) rows: {len(notlin)} do not apply (need a linear forward graph), "
          f"{len(other)} no plan fits, {len(comp)} compiled ({least} at the least feasible budget found); ran under cap = budget {len(ran)}, "
          f"out of memory {len(oom)}, not measured {len(unmeas)}; measured = predicted {eq}/{len(ran)}; measured <= budget {le}/{len(ran)}; "
          f"every request at its planned address {allp}/{len(ran)}; outputs match {match}/{len(ran)}; "
          f"overhead |profile/measured - 1| max {max(prof):.3f} (>0.10: {sum(x>0.10 for x in prof)}), flops max {max(fl):.3f} (>0.10: {sum(x>0.10 for x in fl)}); "
          f"CUDA graph on remc's placement ran {len(cg)}/{len(ran)} (failed {len(cgfail)}), every request planned {cgp}/{len(cg)}, "
          f"held in all <= budget {sum(x<=1 for x in cgle)}/{len(cg)} (max {max(cgle):.3f}), outputs match {cgm}/{len(cg)}")
summ(["ev_r50.json","ev_unet.json","ev_mnv2.json","ev_gpt2.json"], "GPU paper sizes")
for f in ["ev_r50.json","ev_unet.json","ev_mnv2.json","ev_gpt2.json"]:
    summ([f], f)
summ(["ev_zoo.json"], "zoo test size, run e")
summ(["ev_zoo2.json"], "zoo test size, run f")
summ(["ev_zoo3.json"], "zoo test size, run g")
summ(["ev_zoo_merged.json"], "zoo test size, each model's last run")
