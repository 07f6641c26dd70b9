#!/bin/bash
# A user's first compile of a torchvision model (empty caches: HOME a new folder) at --time-limit 60, then
# `remc run` of the plan under a cap of its budget, with two checkouts one after the other (before, after).
#   [BUDGET=0.7x] bash cold_compile.sh MODEL_train.onnx STRATEGY BEFORE_VENV AFTER_VENV OUTDIR
set -u
model=$1; strat=$2; before=$3; after=$4; out=$5
mkdir -p "$out"
for side in before after; do
  venv=$before; [ $side = after ] && venv=$after
  home=$(mktemp -d); stem=$out/$(basename "$model" .onnx)_${strat}_$side
  echo "== $side ($venv) load $(cut -d' ' -f1 /proc/loadavg)"
  HOME=$home "$venv/bin/remc" compile "$model" --budget "${BUDGET:-0.7x}" -o "$stem.onnx" --plan "$stem.plan" \
    --strategy "$strat" --time-limit 60 > "$stem.compile.log" 2>&1
  echo "compile rc=$?"; grep -a -E '^(time|on ONNX|note: kernel)' "$stem.compile.log" | cut -c1-260
  if [ -f "$stem.onnx" ]; then
    HOME=$home "$venv/bin/remc" run "$stem.onnx" --plan "$stem.plan" --compare "$model" > "$stem.run.log" 2>&1
    echo "run rc=$?"; grep -a -E 'memory: measured|error' "$stem.run.log" | cut -c1-260
  fi
  rm -rf "$home"
done
