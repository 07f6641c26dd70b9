#!/bin/bash
# main and lead side by side, at the same moment: remc compile under a pty, then remc run under a cap of the budget
M=$1; B=$2; S=$3; tag=${M}_${B}_${S}
for side in main lead; do
  if [ $side = main ]; then R=/work/main/.venv/bin/remc; H=$PWD/homeA; else R=/work/wt/lead/.venv/bin/remc; H=$PWD/homeB; fi
  ( /usr/bin/time -f "wall %e s" -o $tag.$side.time env HOME=$H script -qec "nice -n 10 $R compile /tmp/lead20/tv/${M}_train.onnx --budget $B -o $tag.$side.onnx --plan $tag.$side.plan --strategy $S --time-limit 60" $tag.$side.log > /dev/null
    if [ -f $tag.$side.onnx ]; then HOME=$H nice -n 10 $R run $tag.$side.onnx --plan $tag.$side.plan --compare /tmp/lead20/tv/${M}_train.onnx > $tag.$side.run.log 2>&1; fi ) &
done
wait
for side in main lead; do
  echo "== $tag $side load $(cut -d' ' -f1 /proc/loadavg) $(cat $tag.$side.time | tail -1)"
  tr '\r' '\n' < $tag.$side.log | sed 's/\x1b\[[0-9;?]*[A-Za-z]//g' | grep -a -E '^(remc: error|checkmate:|approx:|on ONNX|time:)' | cut -c1-330
  [ -f $tag.$side.run.log ] && grep -a -E "memory: measured|match" $tag.$side.run.log | cut -c1-200
done
