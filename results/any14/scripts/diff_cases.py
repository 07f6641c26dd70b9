"""Cases where main's and the branch's checkmate (or approx) costs differ, from two bench_portfolio result files."""
import json, sys
m = json.load(open(sys.argv[1]))["cases"]; b = json.load(open(sys.argv[2]))["cases"]
cnt = {"branch lower": 0, "main lower": 0}
for x, y in zip(m, b):
    f = lambda r, s: f"{r[s].get('cost')} {(r[s].get('status') or '')[:9]} {r[s]['seconds']:.1f}s"
    cx, cy = x["checkmate"].get("cost"), y["checkmate"].get("cost")
    if cx != cy or x["approx"].get("cost") != y["approx"].get("cost"):
        if cx is not None and cy is not None:
            cnt["branch lower" if cy < cx else "main lower"] += cy != cx
        print(f"| {x['case']} | {f(x, 'approx')} | {f(x, 'checkmate')} | {f(y, 'approx')} | {f(y, 'checkmate')} |")
print(cnt)
