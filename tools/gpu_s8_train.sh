#!/usr/bin/env bash
# GPT-2 paper size (batch 8, sequence 1024) trained with `remc train --device cuda` under a cap of 15 GB with
# lin-greedy and checkmate side by side (approx: tools/gpu_s8_batch.sh), each with --reference; one output file.
set -u
cd /tmp && python3 -m remc zoo export gpt2 --train --batch 8 -o /tmp/gpt2_b8_train.onnx > $OUT/train2.log 2>&1
for s in lin-greedy checkmate; do
  ( timeout 150 python3 -m remc train /tmp/gpt2_b8_train.onnx --device cuda --budget 15000000000 --strategy $s \
      --time-limit 40 --steps 3 --reference --json > /tmp/train_gpt2_$s.json 2>> /tmp/train2_$s.log;
    echo "$s rc $?" >> /tmp/train2_$s.log ) &
done
wait
for s in lin-greedy checkmate; do
  echo "== $s" >> $OUT/train2.log; grep -v "plugin EP" /tmp/train2_$s.log >> $OUT/train2.log
  echo "== $s json" >> $OUT/train2.log; cat /tmp/train_gpt2_$s.json >> $OUT/train2.log; echo >> $OUT/train2.log
done
tail -c 3000 $OUT/train2.log
