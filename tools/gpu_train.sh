#!/usr/bin/env bash
# remc train on CUDA (issue 13 item 3): the unmodified step graph's least arena cap L (two steps), then the
# step graph compiled for a budget of FRACTION x L and trained under a cap of that budget, with the
# unmodified graph's losses beside it (--reference: it must run out of memory under the same cap), once
# with fresh bindings and once captured as CUDA graphs. Run under tools/gpu_session.sh:
#   tools/gpu_session.sh bash $REPO/tools/gpu_train.sh MODEL BATCH FRACTION OUTDIR
set -euo pipefail
model=$1 batch=$2 frac=$3 out=$4
python3 -m remc.cli zoo export "$model" --batch "$batch" --train -o /tmp/train_$model.onnx
python3 -m remc.cli train /tmp/train_$model.onnx --device cuda --steps 2 --least-cap --json > "$out/train_least_$model.json"
L=$(python3 -c "import json; print(json.load(open('$out/train_least_$model.json'))['least_cap'])")
B=$(python3 -c "print(int($frac * $L))")
echo "unmodified least cap $L bytes; budget $B bytes"
python3 -m remc.cli train /tmp/train_$model.onnx --device cuda --steps 8 --budget "$B" --strategy checkmate \
  --time-limit 40 --reference -o /tmp/step_$model.onnx | tee "$out/train_$model.txt"
python3 -m remc.cli train /tmp/step_$model.onnx --device cuda --steps 8 --mem-limit "$B" --cuda-graph \
  | tee "$out/train_cg_$model.txt"
