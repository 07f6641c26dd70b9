#!/bin/bash
# compile_side.sh REPEATS MODEL BUDGET STRATEGY LIMIT OUTDIR: `remc compile MODEL_train.onnx` with main's (any19-base) and
# the branch's venv at the same moment (not niced: as a user runs it), each with its own copy of one cost cache
# (HOME=OUTDIR/home_{main,branch}, copied from $SEED_HOME at the start), REPEATS times; --json reports kept.
reps=$1; m=$2; b=$3; s=$4; lim=$5; out=$6
B=/work/wt/any19-base; W=/work/wt/any19
mkdir -p $out; cd /tmp/any19/tv
for side in main branch; do rm -rf $out/home_$side; cp -r ${SEED_HOME:-/tmp/any19/homeA} $out/home_$side; done
for i in $(seq 1 $reps); do
  echo "== repeat $i $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg)"
  for side in main branch; do
    py=$B/.venv/bin/python; [ $side = branch ] && py=$W/.venv/bin/python
    env -u PYTHONDONTWRITEBYTECODE HOME=$out/home_$side /usr/bin/time -f "wall %e maxrss_kb %M" -o $out/${side}_$i.time \
      $py -m remc.cli compile ${m}_train.onnx --budget $b -o $out/${side}_$i.onnx --strategy $s --time-limit $lim --json \
      > $out/${side}_$i.json 2> $out/${side}_$i.err &
  done
  wait
  for side in main branch; do
    echo "-- $side $(tail -1 $out/${side}_$i.time)"
    python3 - $out/${side}_$i.json $out/${side}_$i.err <<'PY'
import json, sys
try:
    d = json.load(open(sys.argv[1]))
    ph = [(p['phase'], round(p['seconds'], 1)) for p in d['time']['phases'] if p['phase'] == 'schedule']
    print(f"   {d['status']} cost {d['cost']:.4f} ideal {d['ideal_cost']:.4f} ({d['cost']/d['ideal_cost']:.3f}x) gap {d['gap']:.3f} rule {d.get('rule')} seconds {d['seconds']:.1f} schedule phases {ph}")
except Exception:
    err = open(sys.argv[2]).read().strip().splitlines()
    print("   " + (err[-1][:700] if err else "no output"))
PY
  done
  rm -f $out/*.onnx
done
echo "== end $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg)"
