#!/bin/bash
# `remc compile MODEL --budget B --strategy S --granularity G --time-limit LIMIT --json`, main (/work/wt/base22) and the
# branch (its code from SNAP, a snapshot on PYTHONPATH) alternating, nice -n 10, each with a fresh copy of WARM's
# .cache as HOME, BUSY busy loops (nice BUSY_NICE, default 10) beside; one JSON line per run into OUT.
# side.sh MODEL BUDGET LIMIT STRATEGY GRAN REPEATS WARM OUT [BUSY]   (scratch; results/time22)
MODEL=$1; BUDGET=$2; LIMIT=$3; STRAT=$4; GRAN=$5; N=$6; WARM=$7; OUT=$8; BUSY=${9:-0}
pids=()
for i in $(seq 1 $BUSY); do nice -n ${BUSY_NICE:-10} bash -c "while :; do :; done" & pids+=($!); done
cd /tmp/time22/run
for rep in $(seq 1 $N); do
  for side in main branch; do
    [ $side = main ] && W=/work/wt/base22 || W=/work/wt/time22
    PP=""; [ $side = branch ] && PP=${SNAP:-}
    H=$(mktemp -d /tmp/time22/home.XXXX)
    cp -r $WARM/.cache $H/
    load=$(cut -d' ' -f1 /proc/loadavg)
    HOME=$H PYTHONPATH=$PP env -u PYTHONDONTWRITEBYTECODE nice -n 10 /usr/bin/time -f "%e %M" -o $H/time $W/.venv/bin/python \
      /work/wt/time22/results/time22/scratch/ktrace.py $MODEL --budget $BUDGET --granularity $GRAN --strategy $STRAT \
      --time-limit $LIMIT -o $H/out.onnx --json > $H/report.json 2> $H/err
    rc=$?
    python3 - "$H" "$side" "$MODEL" "$rep" "$load" "$rc" "$BUSY" "$STRAT" >> $OUT <<'PY'
import json, sys
h, side, model, rep, load, rc, busy, strat = sys.argv[1:]
wall, rss = open(f"{h}/time").read().split()[-2:]
err = open(f"{h}/err").read().splitlines()
probes = sum(1 for l in err if "probe " in l and "probe done" not in l)
row = dict(side=side, model=model, strategy=strat, repeat=int(rep), load=float(load), busy=int(busy), rc=int(rc),
           wall=float(wall), probes_started=probes)
try:
    r = json.load(open(f"{h}/report.json"))
    ph = {}
    for p in r["time"]["phases"]:
        ph[p["phase"]] = round(ph.get(p["phase"], 0.0) + p["seconds"], 1)
    row.update(status=r["status"], overhead_pct=round(100 * (r["overhead"] - 1), 4), seconds=round(r["seconds"], 2),
               rounds=r.get("fit_rounds"), phases=ph, late=r.get("late_baseline"), unmeasured=r.get("kernels_unmeasured"),
               solves=[(round(p["start"], 1), round(p["start"] + p["seconds"], 1), p["deadline"] and round(p["deadline"], 1))
                       for p in r["time"]["phases"] if p["phase"] == "schedule"])
except Exception as e:  # noqa: BLE001
    row["error"] = ([l for l in err if "error" in l.lower()] or err or [repr(e)])[-1][:300]
print(json.dumps(row))
PY
    tail -n 1 $OUT | cut -c1-300
    rm -rf $H
  done
done
for p in "${pids[@]}"; do kill $p; done
