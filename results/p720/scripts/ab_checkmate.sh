#!/bin/bash
# main (/work/wt/p720-base, 1b2d196) and this branch (/work/wt/p720) alternating, one process at a time, each case in its
# own process: checkmate, 1 thread, nice -n 10, ResNet50 and GPT-2 at ONNX-node granularity (paper size), 300 s;
# CASES: "zoo ratio [KEY=VALUE]" lines. The 1-min load every 30 s into results/p720/load_${TAG}.txt.
OUT=/work/wt/p720/results/p720
TAG=${TAG:-ab}
mkdir -p /tmp/p720/abrun && cd /tmp/p720/abrun   # no remc/ here
(while true; do echo "$(date -u +%H:%M:%S) $(cut -d' ' -f1-3 /proc/loadavg)" >> $OUT/load_${TAG}.txt; sleep 30; done) & L=$!
while read -r zoo ratio set; do
  [ -z "$zoo" ] && continue
  for side in main branch; do
    [ $side = main ] && W=/work/wt/p720-base || W=/work/wt/p720
    echo "$(date -u +%H:%M:%S) $side $zoo $ratio $set" >> $OUT/load_${TAG}.txt
    env -u PYTHONDONTWRITEBYTECODE nice -n 10 $W/.venv/bin/python $W/tools/bench_scale.py --out $OUT/${TAG}_$side.jsonl \
      --zoo $zoo --sizes "" --ratios $ratio --strategies checkmate --time-limit 300 --threads 1 ${set:+--set $set}
  done
done <<< "$CASES"
kill $L
