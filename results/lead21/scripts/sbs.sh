#!/bin/bash
# sbs.sh MODEL BUDGET STRATEGY REPS: main (no env) and REMC_SLACK_ANY=1 at the same moment, lead venv, copied homes
m=$1; b=$2; s=$3; reps=${4:-1}; R=/work/wt/lead/.venv/bin/remc
cd /tmp/lead21/tv
for i in $(seq 1 $reps); do
  echo "== $m $b $s rep $i $(date -u +%H:%M:%S) load $(cut -d' ' -f1 /proc/loadavg)"
  HOME=/tmp/lead21/homeA nice -n 5 $R compile ${m}_train.onnx --budget $b --strategy $s --time-limit 60 -o /tmp/lead21/sA.onnx > /tmp/lead21/sA.log 2>&1 &
  HOME=/tmp/lead21/homeB REMC_SLACK_ANY=1 nice -n 5 $R compile ${m}_train.onnx --budget $b --strategy $s --time-limit 60 -o /tmp/lead21/sB.onnx > /tmp/lead21/sB.log 2>&1 &
  wait
  for x in A B; do echo "-- $x"; grep -a -E "^(checkmate|approx|on ONNX|time|remc: error)" /tmp/lead21/s$x.log | cut -c1-330; done
done
