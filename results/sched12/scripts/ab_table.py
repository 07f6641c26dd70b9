"""main vs branch, side by side, from results/sched12/ab_{main,branch}_{approx,checkmate}.jsonl (run_ab.sh)."""
import json
from pathlib import Path

d = Path(__file__).parent.parent
rows = {}
for who in ("main", "branch"):
    for strat in ("approx", "checkmate"):
        f = d / f"ab_{who}_{strat}.jsonl"
        if f.exists():
            for line in f.read_text().splitlines():
                r = json.loads(line)
                rows.setdefault((r["graph"], r["ratio"], r["strategy"], r["time_limit"]), {})[who] = r


def cell(r):
    if r is None:
        return "| | | | |"
    if r.get("status") == "error":
        return f"| {r['error'][:60]} | | {r['wall_seconds']:.0f} | |"
    return (f"| {r['overhead_pct']:+.4f}% ({r['status']}) | {r['bound_pct']:+.4f}%, gap {100 * r['gap']:.1f}% "
            f"| {r['wall_seconds']:.0f} | {r['max_rss_mib']:.0f} ")


print("| graph | ratio | strategy (limit s) | main: overhead | main: bound, gap on overhead | main: wall s | main: max RSS MiB "
      "| branch: overhead | branch: bound, gap | branch: wall s | branch: max RSS MiB |")
print("|---|---|---|---|---|---|---|---|---|---|---|")
for (g, ratio, s, tl), v in sorted(rows.items(), key=lambda kv: (kv[0][2], kv[0][0], -kv[0][1])):
    print(f"| {g} | {ratio} | {s} ({tl:g}) " + cell(v.get("main")) + cell(v.get("branch")).rstrip("|").rstrip() + " |")
