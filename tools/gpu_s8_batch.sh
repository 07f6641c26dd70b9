#!/usr/bin/env bash
# One device call (tools/gpu_session.sh bash tools/gpu_s8_batch.sh), four jobs side by side (16 cores, one GPU;
# their timings overlap, their bytes do not depend on it): ResNet50 b32 at 0.6 and MobileNetV2 b64 at 0.5
# (every strategy), GPT-2 paper size at 0.6 with checkmate (tools/gpu_arena_evidence.py, remc's placement),
# and GPT-2 paper size trained with `remc train --device cuda` under a cap of 15 GB (approx, checkmate,
# lin-greedy, each with --reference: the unmodified step's losses, and the unmodified step under the cap).
set -u
E="python3 $REPO/tools/gpu_arena_evidence.py --no-probe"
( timeout 520 $E --out $OUT/ev_r50.json --models resnet50:32:224x224 --fractions 0.6 \
    --strategies checkmate,approx,lin-greedy --time-limit 40 --threads 2 --max-rounds 3 --jobs 3 --deadline 460 \
    > $OUT/ev_r50.log 2>&1 ) &
( timeout 520 $E --out $OUT/ev_mnv2.json --models mobilenet_v2:64:224x224 --fractions 0.5 \
    --strategies checkmate,approx,lin-greedy --time-limit 30 --threads 1 --max-rounds 3 --jobs 3 --deadline 460 \
    > $OUT/ev_mnv2.log 2>&1 ) &
( timeout 540 $E --out $OUT/ev_gpt2.json --models gpt2:8 --fractions 0.6 --strategies checkmate --time-limit 60 \
    --threads 4 --max-rounds 3 --jobs 1 --deadline 480 > $OUT/ev_gpt2.log 2>&1 ) &
(
  cd /tmp && python3 -m remc zoo export gpt2 --train --batch 8 -o /tmp/gpt2_b8_train.onnx > $OUT/train_gpt2.log 2>&1
  for s in approx lin-greedy checkmate; do
    echo "== $s $(date +%T)" >> $OUT/train_gpt2.log
    timeout 170 python3 -m remc train /tmp/gpt2_b8_train.onnx --device cuda --budget 15000000000 --strategy $s \
      --time-limit 40 --steps 3 --reference --json > $OUT/train_gpt2_$s.json 2>> $OUT/train_gpt2.log
    echo "rc $?" >> $OUT/train_gpt2.log
  done
) &
wait
tail -3 $OUT/*.log | cut -c1-400
