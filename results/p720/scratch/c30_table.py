"""The table of results/p720/compile30*.jsonl (scripts/compile30.sh). python c30_table.py FILE..."""
import json
import sys

print("| model, caches | repeat | side | load at start | wall s | report s | result | solve s | phases (s) |")
print("|---|---|---|---|---|---|---|---|---|")
for f in sys.argv[1:]:
    for line in open(f):
        r = json.loads(line)
        if r["rc"] == 0:
            res = f"{r['status']}, +{r['overhead_pct']:.3f}% ({r['rule']}), gap {100 * r['gap']:.1f}%, {r['rounds']} round(s)"
            ph = ", ".join(f"{k} {v:g}" for k, v in r["phases"].items())
            rep, solve = f"{r['seconds']:.1f}", f"{r['solve_seconds']:.1f}"
        else:
            res, ph, rep, solve = "**error**: " + r["error"].split("remc: error: ")[-1][:150] + " ...", "", "", ""
        print(f"| {r['model']} b{'256' if r['model'] == 'resnet50' else '8'}, {r['cache']} | {r['repeat']} | {r['side']} | "
              f"{r['load']:.1f} | {r['wall']:.1f} | {rep} | {res} | {solve} | {ph} |")
