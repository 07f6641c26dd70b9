import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
by = {}
for d in rows:
    by.setdefault((d['graph'], d['ratio']), {})[d['side']] = d
def cell(d):
    if d is None: return "| | | | |"
    if 'cost' not in d: return f"| error: {d.get('error','')[-80:]} | | | |"
    ov = 100*(d['cost']/d['ideal_cost']-1); b = 100*(d['bound']/d['ideal_cost']-1)
    return f"| +{ov:.4f}% ({d['status']}) | +{b:.4f}%, **{100*d['gap']:.1f}%** | {d['seconds']:.0f} | {d['maxrss_mib']:.0f} |"
print("| graph | ratio | main: overhead | main: bound, gap | main: wall s | main: max RSS MiB | branch: overhead | branch: bound, gap | branch: wall s | branch: max RSS MiB |")
print("|---|---|---|---|---|---|---|---|---|---|")
for (g, r), v in by.items():
    print(f"| {g.replace('.json','')} | {r} " + cell(v.get('main')) + cell(v.get('branch'))[1:])
for d in rows:
    if 'improve from the best' in (d.get('portfolio') or ''):
        print(d['side'], d['graph'], d['ratio'], d['portfolio'].split('; then')[-1])
