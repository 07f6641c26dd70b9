#!/usr/bin/env bash
# the merged main on the GPU: demo, a cold-cache compile with a time limit + run under cap = budget, U-Net b4 at 0.5
# (approx, checkmate, cpsat), each plan also with CUDA graph on its compiled layout
# Run on the GPU machine from the repository root: OUT=<dir> tools/gpu_session.sh bash $PWD/tools/gpu_main_check.sh
# (OR-Tools for Python 3.12 installed into /tmp/site first: it is a dependency of remc).
cd /tmp
python3 -c "import ortools, onnxruntime as o; o.preload_dlls(); print('ortools', ortools.__version__, 'onnxruntime', o.__version__, o.get_available_providers())" > $OUT/versions.txt 2>&1
( time timeout 240 python3 -m remc demo --device cuda --fraction 0.8 ) > $OUT/demo.txt 2>&1; echo "rc=$?" >> $OUT/demo.txt
mkdir -p /tmp/w && cd /tmp/w
( python3 -m remc zoo export resnet50 --batch 32 --train -o r50.onnx && \
  time timeout 200 python3 -m remc compile r50.onnx --device cuda --budget 1.8GB --strategy approx --time-limit 60 --plan r50c.plan -o r50c.onnx && \
  timeout 120 python3 -m remc run r50c.onnx --device cuda --plan r50c.plan --compare r50.onnx --iters 3 && \
  timeout 120 python3 -m remc run r50c.onnx --device cuda --plan r50c.plan --cuda-graph --iters 3 ) > $OUT/r50_cli.txt 2>&1; echo "rc=$?" >> $OUT/r50_cli.txt
cd /tmp
timeout 280 python3 $REPO/tools/gpu_arena_evidence.py --no-probe --out $OUT/ev_unet05.json --models unet:4:416x608 --fractions 0.5 --strategies approx,checkmate,cpsat --env-cuda-graph --cg-iters 3 --time-limit 30 --threads 4 --max-rounds 3 --jobs 3 --deadline 250 > $OUT/unet05.log 2>&1; echo "rc=$?" >> $OUT/unet05.log
