#!/bin/bash
# compile under a pty with a 60 s limit, then run the plan under a cap of the budget with --compare
R=${REMC:-/work/main/.venv/bin/remc}
for spec in "$@"; do
  IFS=: read m b s <<< "$spec"; stem=${m}_${s}_${b}
  echo "== $m $b $s load $(cut -d' ' -f1 /proc/loadavg)"
  /usr/bin/time -f "wall %e s maxrss %M KB" -o $stem.time env HOME=${TVHOME:-/tmp/lead22/home} script -qec "$R compile ${m}_train.onnx --budget $b -o $stem.onnx --plan $stem.plan --strategy $s --time-limit 60" $stem.log > /dev/null
  echo "compile rc=$?"; cat $stem.time
  tr '\r' '\n' < $stem.log | sed 's/\x1b\[[0-9;?]*[A-Za-z]//g' | grep -a -E '^(time|on ONNX|note|remc: error|strategy|predicted|checkmate|approx|cpsat|wrote)' | grep -av ' s  ' | cut -c1-400 | tail -8
  if [ -f $stem.onnx ]; then
    HOME=${TVHOME:-/tmp/lead22/home} $R run $stem.onnx --plan $stem.plan --compare ${m}_train.onnx > $stem.run.log 2>&1
    echo "run rc=$?"; grep -a -E "memory: measured|error|match|Error" $stem.run.log | cut -c1-300
  fi
done
