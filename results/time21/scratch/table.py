"""The side-by-side table of results/time21/*.jsonl (side_compile.sh). python table.py FILE...   (scratch)"""
import json
import sys

print("| file | repeat | side | load at start | wall s | report s | result | solve: start-end (deadline) | phases (s) |")
print("|---|---|---|---|---|---|---|---|---|")
for f in sys.argv[1:]:
    for line in open(f):
        r = json.loads(line)
        if r.get("error") or "status" not in r:
            print(f"| {f.split('/')[-1]} | {r['repeat']} | {r['side']} | {r['load']} | {r['wall']} | | **error**: "
                  f"{r.get('error', '')[:120]} | | |")
            continue
        sol = ", ".join(f"{a}-{b} ({d})" for a, b, d in r.get("solves", []))
        ph = ", ".join(f"{k} {v:g}" for k, v in r["phases"].items())
        print(f"| {f.split('/')[-1]} | {r['repeat']} | {r['side']} | {r['load']} | {r['wall']} | {r['seconds']} | "
              f"{r['status']}, +{r['overhead_pct']:.4f}% ({r['rule']}), {r['rounds']} round(s) | {sol} | {ph} |")
