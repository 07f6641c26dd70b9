"""render.py DIR...: a table row per repeat of side.sh: base and branch, each its result (cost as a multiple of
computing each unit once, device need / budget, fit rounds, seconds) or its error, with the load."""
import glob
import json
import os
import re
import sys


def one(d, side, i):
    out = os.path.join(d, f"{side}_{i}.out")
    err = os.path.join(d, f"{side}_{i}.err")
    try:
        r = json.load(open(out))
    except (OSError, ValueError):
        e = open(err).read().replace("\r", "\n") if os.path.exists(err) else ""
        m = re.search(r"remc: error: (.{0,90})", e)
        return "no plan" + (f" ({m.group(1)[:60]}...)" if m else "")
    ideal = r.get("ideal_cost") or r.get("cost_ideal")
    ratio = r.get("cost_ratio") or (r["cost"] / ideal if ideal else None)
    return (f"{'' if ratio is None else f'{ratio:.4f}x, '}need {r['arena_predicted']} / {r['budget']}, "
            f"{r['fit_rounds']} round(s), {r['seconds']:.1f} s")


for d in sys.argv[1:]:
    log = open(d + ".log").read() if os.path.exists(d + ".log") else ""
    for m in re.finditer(r"== repeat (\d+) (\S+) load (\S+)", log):
        i, t, load = m.groups()
        print(f"| {os.path.basename(d)} | {i} | {t} | {load} | {one(d, 'base', i)} | {one(d, 'branch', i)} |")
