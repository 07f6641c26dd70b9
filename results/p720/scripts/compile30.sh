#!/bin/bash
# `remc compile --strategy approx --granularity fine --time-limit 30` of the paper-size zoo graphs, main (/work/wt/p720-base)
# and this branch alternating, one process at a time, nice -n 10, from /tmp/p720/run (no remc/ there).
# warm: HOME = a fresh copy of $WARM_<model> (the caches a long compile filled); cold: an empty HOME.
# MODELS: "name onnx budget" lines; REPEATS; CACHES ("warm cold"). One JSON line per run into results/p720/${TAG}.jsonl.
OUT=/work/wt/p720/results/p720
TAG=${TAG:-compile30}
cd /tmp/p720/run
for rep in $(seq 1 ${REPEATS:-2}); do
  while read -r name onnx budget; do
    [ -z "$name" ] && continue
    for cache in ${CACHES:-warm cold}; do
      for side in main branch; do
        [ $side = main ] && W=/work/wt/p720-base || W=/work/wt/p720
        H=$(mktemp -d /tmp/p720/home.XXXX)
        if [ $cache = warm ]; then v=WARM_$name; cp -r ${!v}/.cache $H/; fi
        load=$(cut -d' ' -f1 /proc/loadavg)
        HOME=$H env -u PYTHONDONTWRITEBYTECODE nice -n 10 /usr/bin/time -f "%e %M" -o $H/time $W/.venv/bin/remc compile $onnx \
          --budget $budget --granularity fine --strategy approx --time-limit 30 -o $H/out.onnx --json > $H/report.json 2> $H/err
        rc=$?
        python3 - "$H" "$side" "$name" "$cache" "$rep" "$load" "$rc" >> $OUT/$TAG.jsonl <<'PY'
import json, sys
h, side, name, cache, rep, load, rc = sys.argv[1:]
wall, rss = open(f"{h}/time").read().split()[-2:]
row = dict(side=side, model=name, cache=cache, repeat=int(rep), load=float(load), rc=int(rc), wall=float(wall),
           max_rss_mib=round(int(rss) / 1024))
try:
    r = json.load(open(f"{h}/report.json"))
    ph = {}
    for p in r["time"]["phases"]:
        ph[p["phase"]] = round(ph.get(p["phase"], 0.0) + p["seconds"], 1)
    row.update(status=r["status"], overhead_pct=round(100 * (r["overhead"] - 1), 4), gap=r.get("gap"),
               seconds=r["seconds"], solve_seconds=r.get("solve_seconds"), rounds=r.get("fit_rounds"), phases=ph,
               notes=r["time"].get("notes"), strategy=r.get("strategy"), rule=r.get("rule"), bound=r.get("bound"),
               ideal_cost=r.get("ideal_cost"), recomputes=r.get("recomputes"))
except Exception as e:  # noqa: BLE001
    row["error"] = (open(f"{h}/err").read().strip().splitlines() or [repr(e)])[-1][:400]
print(json.dumps(row))
PY
        tail -n 1 $OUT/$TAG.jsonl | cut -c1-400
        rm -rf $H
      done
    done
  done <<< "$MODELS"
done
