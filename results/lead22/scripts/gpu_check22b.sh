#!/usr/bin/env bash
# session 22, lead: checkmate on CUDA, merged main against main d36414c (before the session's merges), alternating.
# Run from the repo root: OUT=<dir> tools/gpu_session.sh bash $PWD/.gpusnap/check22b.sh
set -u
python3 -m pip install -q --no-deps --no-build-isolation --no-index --target /tmp/basesite $REPO/.gpusnap/base > /dev/null 2>&1
mkdir -p /tmp/w2 && cd /tmp/w2
python3 $REPO/results/lead19/scripts/tv_export.py efficientnet_b0 8 224 > /dev/null 2>&1
python3 -m remc grad efficientnet_b0.onnx --loss cross-entropy -o eb0_train.onnx > /dev/null 2>&1
python3 $REPO/results/lead19/scripts/tv_export.py mobilenet_v2 16 224 > /dev/null 2>&1
python3 -m remc grad mobilenet_v2.onnx --loss cross-entropy -o mnv2_train.onnx > /dev/null 2>&1
MAINPP=$PYTHONPATH; BASEPP=/tmp/ortgpu:/tmp/site:/tmp/basesite
one() {  # one TAG MODEL BUDGET
  local tag=$1 m=$2 b=$3
  echo "== $tag $m $b $(date -u +%T)"
  if [ "$tag" = base ]; then
    ( export PYTHONPATH=$BASEPP; time timeout 150 python3 -m remc compile ${m}_train.onnx --device cuda --budget $b --strategy checkmate --time-limit 60 -o ${m}_$tag.onnx --plan ${m}_$tag.plan ) 2>&1
  else
    ( export PYTHONPATH=$MAINPP; [ "$tag" = main0 ] && export GROWTH=0; time timeout 150 python3 $REPO/results/lead22/scripts/grown_log.py compile ${m}_train.onnx --device cuda --budget $b --strategy checkmate --time-limit 60 -o ${m}_$tag.onnx --plan ${m}_$tag.plan ) 2>&1
  fi
}
for t in main base main0; do one $t eb0 0.8x; done > $OUT/eb0_ab.txt 2>&1
for t in main base; do one $t mnv2 0.7x; done > $OUT/mnv2_ab.txt 2>&1
