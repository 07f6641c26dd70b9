"""Checkmate's and approx's in-process seconds past the limit in bench_portfolio result files: max, median, count > limit + 0.5 s."""
import json, statistics, sys
for f in sys.argv[1:]:
    d = json.load(open(f)); L = d["time_limit"]
    for s in ("approx", "checkmate"):
        xs = [c[s]["seconds"] - L for c in d["cases"]]
        print(f"{d['label']} {L:g} s {s}: max over {max(xs):+.2f} s, median {statistics.median(xs):+.2f} s, "
              f"{sum(x > 0.5 for x in xs)} of {len(xs)} more than 0.5 s over")
