#!/bin/bash
# side.sh N MODEL BUDGET STRATEGY LIMIT TAG [HOMEPRISTINE]: base (main) and branch compiles at once, N times,
# each side with its own copy of the pristine cost cache (made once per TAG), nice -n 10; traces in
# /tmp/any20/side/TAG/{base,branch}.jsonl, outputs .out, plans .onnx/.plan per repeat
N=$1; M=$2; B=$3; S=$4; L=$5; TAG=$6; PH=${7:-/tmp/any20/homes/pristine18}
D=/tmp/any20/side/$TAG; mkdir -p $D; cd $D
for side in base branch; do [ -d home_$side ] || cp -r $PH home_$side; done
T=/work/wt/any20/results/any20/scratch/trace.py
for i in $(seq 1 $N); do
  echo "== repeat $i $(date -u +%T) load $(cut -d' ' -f1 /proc/loadavg)"
  for side in base branch; do
    if [ $side = base ]; then PY=/work/wt/any20-base/.venv/bin/python; else PY=/work/wt/any20/.venv/bin/python; fi
    ( HOME=$D/home_$side TRACE=$D/$side.jsonl nice -n 10 env -u PYTHONDONTWRITEBYTECODE $PY $T compile $M --budget $B \
        --strategy $S --time-limit $L -o $D/${side}_$i.onnx --plan $D/${side}_$i.plan --json > $D/${side}_$i.out 2> $D/${side}_$i.err;
      echo "$side rc=$?" ) &
  done
  wait
done
