#!/bin/bash
# before (main 5c20d83) and after (this branch), the same compiles, alternating
cd /tmp/cpu11
for spec in "unet_s2.onnx 1128192 approx" "unet_s2.onnx 1128192 checkmate" "gpt2_s2.onnx 140000 approx" "gpt2_s2.onnx 145000 approx" "gpt2_s2.onnx 140000 lin-greedy" "unet_s2.onnx 1200000 lin-greedy"; do
  set -- $spec
  for side in before after; do
    if [ $side = before ]; then pp=/tmp/cpu11/snap5c/pkg; else pp=; fi
    out=$(PYTHONPATH=$pp nice -n 10 /work/wt/cpu11/.venv/bin/python -m remc compile $1 --budget $2 --strategy $3 --time-limit 20 --json -o /tmp/cpu11/fc_$side.onnx 2>&1)
    echo "$1 $2 $3 $side :: $(echo "$out" | /work/wt/cpu11/.venv/bin/python /tmp/cpu11/fitsum.py)"
  done
done
