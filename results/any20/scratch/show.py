"""show.py JSONL...: each traced compile: its phases, solves and arena checks, and the result."""
import json
import sys

for path in sys.argv[1:]:
    for line in open(path):
        d = json.loads(line)
        print(f"--- {path} load {d['load']:.1f}")
        for e in d["events"]:
            if "phases" in e:
                print("  phases:", ", ".join(f"{n} {s:.1f}+{x:.1f}" + (f"(dl {dl:.1f})" if dl is not None else "")
                                           for n, s, x, dl in e["phases"]), f"| elapsed {e['elapsed']:.1f}")
            elif "solve" in e:
                r = (f"cost {e['cost']:.4f} peak {e['peak']} {e['status']} first_fit {e.get('first_fit')}"
                     if "cost" in e else f"{e['error']}: {e['msg'][:120]}")
                lim = e['limit']
                print(f"  solve {e['solve']} budget {e['budget']} limit {lim if lim is None else round(lim, 2)} warm {e['warm']} "
                      f"wall {e['wall']:.1f} cpu {e['cpu']:.1f} load {e['load']:.1f}: {r}")
            elif "predict" in e:
                print(f"  predict {e['predict']} live lb {e.get('lb')} ub_only {e.get('ub_only')} {e.get('order')} ({e['wall']:.1f} s)")
