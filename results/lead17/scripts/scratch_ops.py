"""Per op type, the kernel-memory measurements in remc's cache (~/.cache/remc/costs/scratch.json): how many, and
how many had scratch, or pre-packed, persistent or later bytes (backends/scratch.py OUTPUT_ONLY_ON_CPU).

    python scratch_ops.py [~/.cache/remc/costs/scratch.json]
"""
import collections
import json
import os
import sys

path = sys.argv[1] if len(sys.argv) > 1 else os.path.expanduser("~/.cache/remc/costs/scratch.json")
entries = json.load(open(path))["entries"]
tot, scratch, other = collections.Counter(), collections.Counter(), collections.Counter()
for k, v in entries.items():
    if not k.startswith("mem:") or "op" not in v:
        continue
    tot[v["op"]] += 1
    scratch[v["op"]] += v.get("scratch", 0) > 0
    other[v["op"]] += v.get("prepack", 0) > 0 or v.get("persistent", 0) > 0 or v.get("later_extra", 0) > 0
print(f"{sum(tot.values())} signatures")
for op, n in tot.most_common():
    print(f"{op:22s} {n:5d} scratch>0 {scratch[op]:5d} other {other[op]}")
