#!/bin/bash
# successive compiles on one HOME per side (not a fresh copy each time): main (/work/wt/base22) and the branch
# alternating, each side's HOME a copy of WARM made once; ktrace.py's trace per run in OUTDIR. SNAP: PYTHONPATH of
# the branch's code (a snapshot laid out as the editable install maps it: remc/, remc/backends, remc/passes, remc/ir).
# seq.sh MODEL BUDGET LIMIT REPEATS WARM OUTDIR [BUSY]   (scratch; results/time22)
MODEL=$1; BUDGET=$2; LIMIT=$3; N=$4; WARM=$5; OUT=$6; BUSY=${7:-0}
mkdir -p $OUT; pids=()
for i in $(seq 1 $BUSY); do nice -n ${BUSY_NICE:-10} bash -c "while :; do :; done" & pids+=($!); done
cd /tmp/time22/run
for side in main branch; do rm -rf $OUT/h_$side; mkdir -p $OUT/h_$side; cp -r $WARM/.cache $OUT/h_$side/; done
for rep in $(seq 1 $N); do
  for side in main branch; do
    [ $side = main ] && W=/work/wt/base22 || W=/work/wt/time22
    PP=""; [ $side = branch ] && PP=${SNAP:-}  # the branch's code from a snapshot (git archive), not the live tree
    load=$(cut -d' ' -f1 /proc/loadavg)
    HOME=$OUT/h_$side PYTHONPATH=$PP env -u PYTHONDONTWRITEBYTECODE nice -n 10 /usr/bin/time -f "%e %M" -o $OUT/$side$rep.time \
      $W/.venv/bin/python /work/wt/time22/results/time22/scratch/ktrace.py $MODEL --budget $BUDGET --granularity fine \
      --strategy approx --time-limit $LIMIT -o $OUT/out.onnx --json > $OUT/$side$rep.json 2> $OUT/$side$rep.err
    python3 - $OUT $side $rep $load <<'PY'
import json, sys
out, side, rep, load = sys.argv[1:]
wall = open(f"{out}/{side}{rep}.time").read().split()[-2]
err = open(f"{out}/{side}{rep}.err").read().splitlines()
probes = sum(1 for l in err if "probe " in l and "probe done" not in l)
done = sum(1 for l in err if "probe done" in l)
try:
    r = json.load(open(f"{out}/{side}{rep}.json"))
    ph = {}
    for p in r["time"]["phases"]:
        ph[p["phase"]] = round(ph.get(p["phase"], 0.0) + p["seconds"], 1)
    print(json.dumps(dict(side=side, rep=int(rep), load=float(load), wall=float(wall), seconds=round(r["seconds"], 2),
          status=r["status"], overhead_pct=round(100 * (r["overhead"] - 1), 4), unmeasured=r.get("kernels_unmeasured"),
          probes_started=probes, probes_done=done, late=r.get("late_baseline"), phases=ph)))
except Exception as e:
    print(json.dumps(dict(side=side, rep=int(rep), load=float(load), wall=float(wall), probes_started=probes,
          error=(err[-1] if err else repr(e))[:300])))
PY
  done
done
for p in "${pids[@]}"; do kill $p; done
