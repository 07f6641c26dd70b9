"""render.py JSONL: bench.py's records as one table row per graph and ratio, variants side by side (KICKS:SPAN_KICKS)."""
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
vs = sorted({(r["kicks"], r.get("span_kicks", 1)) for r in rows})
hdr = ["graph", "ratio"] + [f"{k}:{s} repair from ckpt-all (rows)" for k, s in vs] + [f"{k}:{s} first schedule: producer, rows, cost" for k, s in vs]
print("| " + " | ".join(hdr) + " |"); print("|" + "---|" * len(hdr))
keys = []
for r in rows:
    if (r["graph"], r["ratio"]) not in keys: keys.append((r["graph"], r["ratio"]))
short = lambda f: "-" if f is None else "ckpt-all repair" if f == "stage search repair" else "least-memory" if f.startswith("least") else "eviction"
for g, ra in keys:
    by = {(r["kicks"], r.get("span_kicks", 1)): r for r in rows if (r["graph"], r["ratio"]) == (g, ra)}
    a = [f"{by[v]['repair']} ({by[v]['repair_rows']})" if v in by else "" for v in vs]
    b = [(f"{short(by[v]['found'])}, {by[v]['rows']}, " + (f"{by[v]['cost']:.3f}" if by[v]['cost'] else "none")) if v in by else "" for v in vs]
    print(f"| {g} | {ra if ra else 'own'} | " + " | ".join(a + b) + " |")
