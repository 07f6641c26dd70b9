#!/usr/bin/env bash
# Session 10 on the GPU (issue 11 items 1 and 5): every strategy on CUDA, cap = budget, each plan also timed with
# CUDA graph on remc's placement (remc's allocator registered in the environment, --auto-runs, a buffer of the
# layout's height: tools/gpu_arena_evidence.py --env-cuda-graph). One part per device call, each alone on the
# machine so that its timings are clean. Run from the repository root on the GPU machine:
#   OUT=<dir> tools/gpu_session.sh bash $PWD/tools/gpu_s10.sh a|b|c|d|e
# a: ResNet50 b32 224x224; b: U-Net b4 416x608; c: MobileNetV2 b64 224x224; d: GPT-2 b8 s1024 (paper size): every
#    strategy at 0.8/0.6/0.5 of checkpoint-all's replayed arena need (the budgets of results/gpu_s9), with the proven
#    least-budget bound; e: all ten zoo models at test size, every strategy at 0.95 of checkpoint-all's layout
#    (a strategy with no plan there is compiled again at the least need its fit found, as on CPU).
# The kernel/profile caches (~/.cache/remc/costs) are seeded from results/gpu_s9 and copied back to $OUT.
set -u
part=$1
C=$HOME/.cache/remc/costs
mkdir -p $C
for f in scratch profile; do [ -f $C/$f.json ] || [ ! -f $REPO/results/gpu_s9/cache_$f.json ] || cp $REPO/results/gpu_s9/cache_$f.json $C/$f.json; done
ALL=checkmate,approx,cpsat,checkpoint-all,griewank,chen-sqrtn,chen-greedy,ap-sqrtn,ap-greedy,lin-sqrtn,lin-greedy
E="python3 $REPO/tools/gpu_arena_evidence.py --no-probe --no-placed-cuda-graph --env-cuda-graph --no-arena-time
   --strategies $ALL --time-limit 20 --threads 1 --max-rounds 3 --iters 3 --cg-iters 5"
cd /tmp
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader > $OUT/versions_$part.txt 2>&1
python3 -c "import ortools, onnxruntime as o; o.preload_dlls(); print('ortools', ortools.__version__, 'onnxruntime', o.__version__, o.get_available_providers())" >> $OUT/versions_$part.txt 2>&1
P="--fractions 0.8,0.6,0.5 --bound 30"
case $part in
a) timeout 560 $E $P --out $OUT/ev_r50.json --models resnet50:32:224x224 --jobs 14 --deadline 500 > $OUT/ev_r50.log 2>&1 ;;
b) timeout 560 $E $P --out $OUT/ev_unet.json --models unet:4:416x608 --jobs 14 --deadline 500 > $OUT/ev_unet.log 2>&1 ;;
c) timeout 560 $E $P --out $OUT/ev_mnv2.json --models mobilenet_v2:64:224x224 --jobs 14 --deadline 500 > $OUT/ev_mnv2.log 2>&1 ;;
d) J=4; [ "$(nvidia-smi --query-gpu=memory.total --format=csv,noheader,nounits | head -1)" -gt 100000 ] && J=7  # verify runs hold up to 17.6 GB each
   timeout 560 $E $P --out $OUT/ev_gpt2.json --models gpt2:8 --jobs $J --deadline 500 > $OUT/ev_gpt2.log 2>&1 ;;
e) timeout 560 $E --small --base placement --fractions 0.95 --retry-least --time-limit 10 --jobs 14 --deadline 500 --out $OUT/ev_zoo.json \
     --models vgg16:2,vgg19:2,resnet50:2,mobilenet:2,mobilenet_v2:2,unet:2,fcn8:2,segnet:2,gpt2:2,vit:2 > $OUT/ev_zoo.log 2>&1 ;;
f) timeout 400 $E --small --base placement --fractions 0.95 --retry-least --time-limit 10 --jobs 14 --deadline 360 \
     --out $OUT/ev_zoo2.json --models vgg16:2,vgg19:2,gpt2:2,vit:2 > $OUT/ev_zoo2.log 2>&1
   echo "rc=$?" >> $OUT/ev_zoo2.log
   # item 3: where a cold-cache ResNet50 b32 compile's "solver scratch" and "arena check" go (cProfile)
   mkdir -p /tmp/cold/home /tmp/w && cd /tmp/w && python3 -m remc zoo export resnet50 --batch 32 --train -o r50.onnx
   HOME=/tmp/cold/home timeout 180 python3 -m cProfile -o $OUT/r50_cold.prof -m remc compile r50.onnx --device cuda \
     --budget 1.8GB --strategy approx --time-limit 60 --plan r50c.plan -o r50c.onnx --json > $OUT/r50_cold.json 2> $OUT/r50_cold.err
   echo "rc=$?" >> $OUT/r50_cold.err
   python3 -c "import pstats,sys; p=pstats.Stats('$OUT/r50_cold.prof'); p.sort_stats('cumulative').print_stats(60); p.sort_stats('tottime').print_stats(30)" > $OUT/r50_cold_prof.txt 2>&1
   ;;
g) timeout 300 $E --small --base placement --fractions 0.95 --retry-least --time-limit 10 --jobs 14 --deadline 260 \
     --out $OUT/ev_zoo3.json --models vgg16:2,fcn8:2,gpt2:2 > $OUT/ev_zoo3.log 2>&1 ;;
esac
echo "rc=$?" >> $OUT/ev_*.log
tar -C $C -czf $OUT/caches_$part.tgz .
tail -n 2 $OUT/*.log | cut -c1-400
