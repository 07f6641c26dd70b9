#!/usr/bin/env bash
# Session 11 on the GPU (issue 11 items 1, 2, 5): CUDA graph on the COMPILED layout. Every plan is run under
# cap = budget on remc's allocator, then with CUDA graph through backends.boundrun (remc's allocator registered
# in the environment, the same cap, every graph output bound at its planned offset in remc's buffer), so both
# runs hold the layout the compile checked. Run from the repository root on the GPU machine:
#   OUT=<dir> tools/gpu_session.sh bash $REPO/tools/gpu_s11.sh a|b
# a: U-Net b4 416x608 and GPT-2 b8 s1024 (the paper rows whose CUDA-graph run exceeded the budget in session 10)
#    at 0.8/0.6/0.5 of checkpoint-all's replayed arena need (session 9's budgets), side by side with
#    `remc run --cuda-graph` on a ResNet50 b32 plan and VGG19 at test size (every strategy, 0.95 of checkpoint-all's
#    layout): four processes at once on one GPU (their times share it; bytes do not depend on it).
# b: ResNet50 b32 224x224 and MobileNetV2 b64, the same way (two processes at once).
# The kernel/profile caches (~/.cache/remc/costs) are seeded from results/gpu_s10/caches.tgz.
set -u
part=$1
C=$HOME/.cache/remc/costs
mkdir -p $C
[ -f $C/scratch.json ] || tar -C $C -xzf $REPO/results/gpu_s10/caches.tgz
E="python3 $REPO/tools/gpu_arena_evidence.py --no-probe --no-placed-cuda-graph --env-cuda-graph --no-arena-time
   --time-limit 20 --threads 1 --max-rounds 3 --iters 3 --cg-iters 3"
P="--fractions 0.8,0.6,0.5"
mem=$(nvidia-smi --query-gpu=memory.total --format=csv,noheader,nounits | head -1)
cd /tmp
mkdir -p $OUT/logs
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader > $OUT/logs/versions_$part.txt 2>&1
python3 -c "import ortools, onnxruntime as o; o.preload_dlls(); print('ortools', ortools.__version__, 'onnxruntime', o.__version__, o.get_available_providers())" >> $OUT/logs/versions_$part.txt 2>&1
case $part in
a) J=2; [ "$mem" -gt 100000 ] && J=4  # GPT-2 b8 verify runs hold up to 17.6 GB each
   timeout 520 $E $P --strategies checkmate,approx,cpsat,ap-greedy,lin-sqrtn,lin-greedy --out $OUT/ev_unet.json \
     --models unet:4:416x608 --jobs 6 --deadline 420 > $OUT/logs/ev_unet.log 2>&1 &
   timeout 520 $E $P --strategies checkmate,approx,ap-sqrtn,ap-greedy,lin-greedy --out $OUT/ev_gpt2.json \
     --models gpt2:8 --jobs $J --deadline 420 > $OUT/logs/ev_gpt2.log 2>&1 &
   (
     mkdir -p /tmp/cli && cd /tmp/cli
     python3 -m remc zoo export resnet50 --batch 32 --train -o r50.onnx
     timeout 200 python3 -m remc compile r50.onnx --device cuda --budget 1.8GB --strategy lin-greedy --time-limit 60 \
       --plan r50.plan -o r50c.onnx
     echo "rc=$?"
     echo '$ remc run r50c.onnx --plan r50.plan --compare r50.onnx --device cuda --cuda-graph --iters 5'
     timeout 200 python3 -m remc run r50c.onnx --plan r50.plan --compare r50.onnx --device cuda --cuda-graph --iters 5
     echo "rc=$?"
     echo '$ remc run r50c.onnx --plan r50.plan --device cuda --cuda-graph --mem-limit 1.5GB --iters 2'
     timeout 100 python3 -m remc run r50c.onnx --plan r50.plan --device cuda --cuda-graph --mem-limit 1.5GB --iters 2
     echo "rc=$?"
   ) > $OUT/cli.txt 2>&1 &
   timeout 520 $E --small --base placement --fractions 0.95 --retry-least --time-limit 10 --jobs 4 --deadline 400 \
     --strategies checkmate,approx,cpsat,checkpoint-all,griewank,chen-sqrtn,chen-greedy,ap-sqrtn,ap-greedy,lin-sqrtn,lin-greedy \
     --out $OUT/ev_vgg19.json --models vgg19:2 > $OUT/logs/ev_vgg19.log 2>&1 &
   wait ;;
b) timeout 520 $E $P --strategies checkmate,approx,cpsat,ap-sqrtn,ap-greedy,lin-greedy --out $OUT/ev_r50.json \
     --models resnet50:32:224x224 --jobs 6 --deadline 420 > $OUT/logs/ev_r50.log 2>&1 &
   timeout 520 $E $P --strategies checkmate,approx,cpsat,ap-sqrtn,ap-greedy,lin-sqrtn,lin-greedy --out $OUT/ev_mnv2.json \
     --models mobilenet_v2:64:224x224 --jobs 6 --deadline 420 > $OUT/logs/ev_mnv2.log 2>&1 &
   wait ;;
esac
tail -n 2 $OUT/logs/*.log | cut -c1-300
tar -C $OUT -czf $OUT/logs_$part.tgz logs && rm -rf $OUT/logs
