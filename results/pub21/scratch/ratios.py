"""Moccasin's wall over each remc column's wall, from side_*.json: ratios.py side_a.json side_b.json ..."""
import json
import sys

for f in sys.argv[1:]:
    for c in json.load(open(f))["cases"] if isinstance(json.load(open(f)), dict) else json.load(open(f)):
        t = c["tools"]
        m = t["moccasin"]["wall"]
        print(f"{f.split('/')[-1]:12s} {c['graph'][:24]:24s} {c['ratio']} main {t['checkmate-base']['wall']:6.2f} s "
              f"({m / t['checkmate-base']['wall']:5.1f}x)  branch {t['checkmate']['wall']:6.2f} s ({m / t['checkmate']['wall']:5.1f}x)  "
              f"Moccasin {m:6.1f} s {t['moccasin']['status']}")
