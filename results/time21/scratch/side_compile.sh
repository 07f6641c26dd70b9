#!/bin/bash
# `remc compile MODEL --budget B --granularity fine --strategy approx --time-limit LIMIT`, main (/work/wt/time21-base)
# and the branch alternating, nice -n 10, from /tmp/time21/run, HOME a fresh copy of WARM (or empty: WARM=cold),
# with BUSY busy loops (nice BUSY_NICE) beside; one JSON line per run into OUT.
# side_compile.sh MODEL BUDGET LIMIT REPEATS WARM OUT [BUSY]   (scratch; results/time21)
MODEL=$1; BUDGET=$2; LIMIT=$3; N=$4; WARM=$5; OUT=$6; BUSY=${7:-0}
pids=()
for i in $(seq 1 $BUSY); do nice -n ${BUSY_NICE:-0} bash -c "while :; do :; done" & pids+=($!); done
cd /tmp/time21/run
for rep in $(seq 1 $N); do
  for side in main branch; do
    [ $side = main ] && W=/work/wt/time21-base || W=/work/wt/time21
    H=$(mktemp -d /tmp/time21/home.XXXX)
    [ "$WARM" != cold ] && cp -r $WARM/.cache $H/
    load=$(cut -d' ' -f1 /proc/loadavg)
    HOME=$H env -u PYTHONDONTWRITEBYTECODE nice -n 10 /usr/bin/time -f "%e %M" -o $H/time $W/.venv/bin/remc compile $MODEL \
      --budget $BUDGET --granularity fine --strategy approx --time-limit $LIMIT -o $H/out.onnx --json > $H/report.json 2> $H/err
    rc=$?
    python3 - "$H" "$side" "$MODEL" "$rep" "$load" "$rc" "$BUSY" >> $OUT <<'PY'
import json, sys
h, side, model, rep, load, rc, busy = sys.argv[1:]
wall, rss = open(f"{h}/time").read().split()[-2:]
row = dict(side=side, model=model, repeat=int(rep), load=float(load), busy=int(busy), rc=int(rc), wall=float(wall))
try:
    r = json.load(open(f"{h}/report.json"))
    ph = {}
    for p in r["time"]["phases"]:
        ph[p["phase"]] = round(ph.get(p["phase"], 0.0) + p["seconds"], 1)
    row.update(status=r["status"], overhead_pct=round(100 * (r["overhead"] - 1), 4), seconds=round(r["seconds"], 2),
               solve_seconds=round(r.get("solve_seconds"), 2), rounds=r.get("fit_rounds"), phases=ph, rule=r.get("rule"),
               notes=[n[:90] for n in r["time"].get("notes", [])],
               solves=[(round(p["start"], 1), round(p["start"] + p["seconds"], 1), p["deadline"] and round(p["deadline"], 1))
                       for p in r["time"]["phases"] if p["phase"] == "schedule"])
except Exception as e:  # noqa: BLE001
    row["error"] = (open(f"{h}/err").read().strip().splitlines() or [repr(e)])[-1][:300]
print(json.dumps(row))
PY
    tail -n 1 $OUT | cut -c1-330
    rm -rf $H
  done
done
for p in "${pids[@]}"; do kill $p; done
