"""From bench_portfolio result files: the cases where approx alone ended by itself (status not time_limit, a
schedule), checkmate's cost against it there, and the counts. usage: own_cases.py FILE..."""
import json, sys
for f in sys.argv[1:]:
    d = json.load(open(f))
    ended = [c for c in d["cases"] if c["approx"].get("cost") is not None and c["approx"]["status"] != "time_limit"]
    worse = [c for c in ended if c["checkmate"].get("cost") is None or c["checkmate"]["cost"] > c["approx"]["cost"] * (1 + 1e-9)]
    nosched = [c["case"] for c in d["cases"] if c["checkmate"].get("cost") is None and c["approx"].get("cost") is not None]
    print(f"{d['label']}: approx ended by itself in {len(ended)}; checkmate worse there: {len(worse)} "
          f"{[(c['case'], c['approx']['cost'], c['checkmate'].get('cost')) for c in worse]}; checkmate no schedule where approx has one: {nosched}")
