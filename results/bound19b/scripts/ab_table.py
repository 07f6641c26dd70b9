"""Markdown rows of lead and the branch side by side: python ab_table.py TAG (results/bound19b/TAG_{main,branch}.jsonl)."""
import json
import sys

tag = sys.argv[1]
rows = {}
for side in ("main", "branch"):
    for line in open(f"results/bound19b/{tag}_{side}.jsonl"):
        d = json.loads(line)
        rows.setdefault((d["graph"], d["ratio"]), {})[side] = d
print("| graph | ratio | lead: overhead | lead: bound, gap | lead: wall s | branch: overhead | branch: bound, gap | branch: wall s |")
print("|---|---|---|---|---|---|---|---|")
for (g, r), s in rows.items():
    cells = []
    for side in ("main", "branch"):
        d = s.get(side)
        cells += ["", "", ""] if d is None else [f"+{d['overhead_pct']:.4f}% ({d['status']})",
                                                  f"+{d['bound_pct']:.5f}% ({d['bound_source']}), **{100 * d['gap']:.3f}%**",
                                                  f"{d['wall_seconds']:.0f}"]
    print(f"| {g} | {r} | " + " | ".join(cells) + " |")
