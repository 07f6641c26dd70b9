"""fixedwork.py DIR...: per side.sh repeat, when the first solve started (s on the compile's clock) and the kernel
memory + solver scratch phases' seconds, base and branch."""
import json
import os
import sys

for d in sys.argv[1:]:
    rows = {}
    for side in ("base", "branch"):
        for k, line in enumerate(open(os.path.join(d, f"{side}.jsonl"))):
            ev = json.loads(line)["events"]
            ph = next(e["phases"] for e in ev if "phases" in e)
            first = next(s for n, s, x, dl in ph if n == "schedule")
            km = sum(x for n, s, x, dl in ph if n in ("kernel memory", "solver scratch"))
            rows.setdefault(k + 1, {})[side] = f"{first:.1f} s ({km:.1f} s)"
    for k, r in rows.items():
        print(f"| {os.path.basename(d)} | {k} | {r.get('base')} | {r.get('branch')} |")
