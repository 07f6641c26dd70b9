#!/usr/bin/env bash
# session 22, lead: EfficientNet-B0 b8 checkmate 0.8x on CUDA, merged main against d36414c, each from its own empty HOME, alternating.
set -u
python3 -m pip install -q --no-deps --no-build-isolation --no-index --target /tmp/basesite $REPO/.gpusnap/base > /dev/null 2>&1
mkdir -p /tmp/w3 && cd /tmp/w3
python3 $REPO/results/lead19/scripts/tv_export.py efficientnet_b0 8 224 > /dev/null 2>&1
python3 -m remc grad efficientnet_b0.onnx --loss cross-entropy -o eb0_train.onnx > /dev/null 2>&1
MAINPP=$PYTHONPATH; BASEPP=/tmp/ortgpu:/tmp/site:/tmp/basesite
for i in 1 2; do for tag in main base; do
  echo "== $tag run $i $(date -u +%T)"; mkdir -p /tmp/h_${tag}_$i
  pp=$MAINPP; [ $tag = base ] && pp=$BASEPP
  ( export PYTHONPATH=$pp HOME=/tmp/h_${tag}_$i; time timeout 150 python3 -m remc compile eb0_train.onnx --device cuda --budget 0.8x --strategy checkmate --time-limit 60 -o eb0_$tag$i.onnx --plan eb0_$tag$i.plan --json > eb0_$tag$i.json ) 2>&1
  python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(d.get('status'), d.get('overhead'), d.get('fit_rounds'), d.get('time_text'))" eb0_$tag$i.json 2>&1 | cut -c1-1500
done; done > $OUT/eb0_cold.txt 2>&1
