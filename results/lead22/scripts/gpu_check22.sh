#!/usr/bin/env bash
# session 22, lead: main on the GPU. Run from the repo root: OUT=<dir> tools/gpu_session.sh bash $PWD/.gpusnap/check22.sh
cd /tmp
python3 -c "import ortools, highspy, onnxruntime as o; o.preload_dlls(); print('ortools', ortools.__version__, 'onnxruntime', o.__version__, o.get_available_providers())" > $OUT/versions.txt 2>&1
nvidia-smi --query-gpu=name,memory.total --format=csv >> $OUT/versions.txt 2>&1
( time timeout 150 python3 -m remc demo --device cuda --fraction 0.8 ) > $OUT/demo.txt 2>&1; echo "rc=$?" >> $OUT/demo.txt
mkdir -p /tmp/w && cd /tmp/w
( python3 -m remc zoo export resnet50 --batch 32 --train -o r50.onnx && \
  time timeout 150 python3 -m remc compile r50.onnx --device cuda --budget 1.8GB --strategy approx --time-limit 60 --plan r50c.plan -o r50c.onnx && \
  timeout 90 python3 -m remc run r50c.onnx --device cuda --plan r50c.plan --compare r50.onnx --iters 3 && \
  timeout 90 python3 -m remc run r50c.onnx --device cuda --plan r50c.plan --cuda-graph --iters 3 ) > $OUT/r50_cli.txt 2>&1; echo "rc=$?" >> $OUT/r50_cli.txt
( python3 $REPO/results/lead19/scripts/tv_export.py efficientnet_b0 8 224 && \
  python3 -m remc grad efficientnet_b0.onnx --loss cross-entropy -o eb0_train.onnx && \
  for s in checkmate approx; do \
    time timeout 150 python3 -m remc compile eb0_train.onnx --device cuda --budget 0.8x --strategy $s --time-limit 60 --plan eb0_$s.plan -o eb0_$s.onnx && \
    timeout 90 python3 -m remc run eb0_$s.onnx --device cuda --plan eb0_$s.plan --compare eb0_train.onnx --iters 3; done ) > $OUT/eb0_cli.txt 2>&1; echo "rc=$?" >> $OUT/eb0_cli.txt
( python3 $REPO/results/lead19/scripts/tv_export.py mobilenet_v2 16 224 && \
  python3 -m remc grad mobilenet_v2.onnx --loss cross-entropy -o mnv2_train.onnx && \
  time timeout 150 python3 -m remc compile mnv2_train.onnx --device cuda --budget 0.7x --strategy checkmate --time-limit 60 --plan mnv2.plan -o mnv2.onnx && \
  timeout 90 python3 -m remc run mnv2.onnx --device cuda --plan mnv2.plan --compare mnv2_train.onnx --iters 3 ) > $OUT/mnv2_cli.txt 2>&1; echo "rc=$?" >> $OUT/mnv2_cli.txt
