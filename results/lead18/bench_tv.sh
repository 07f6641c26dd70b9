#!/bin/bash
# main vs lead, `remc compile --strategy approx --time-limit 60 --budget 0.9x` on torchvision exports (batch 4,
# 96 px; `results/lead16/scripts/tv_export.py NAME 4 96`, then `remc grad NAME.onnx --loss cross-entropy`), each
# checkout with a cache of its own that starts empty: repeat 1 is a first compile, repeat 2 a later one.
#   bash results/lead18/bench_tv.sh MODELDIR MAIN_PYTHON LEAD_PYTHON OUTDIR
set -u
dir=$1; main=$2; lead=$3; out=$4
here=$(cd "$(dirname "$0")/../.." && pwd)
for m in swin_t convnext_tiny; do
  env -u PYTHONDONTWRITEBYTECODE nice -n 5 "$lead" "$here/tools/bench_compile_time.py" --model "$dir/${m}_train.onnx" \
    --budget 0.9x --time-limit 60 --args "--strategy approx" --repeats 2 --python main="$main" --python lead="$lead" \
    --out "$out/compile_${m}_approx.jsonl"
done
