#!/usr/bin/env bash
# Session 9 on the GPU (issue 11 item 5, #13 item 5): one part per device call, each alone on the machine so that
# its timings are clean. Run from the repository root on the GPU machine:
#   OUT=<dir> tools/gpu_session.sh bash $PWD/tools/gpu_s9.sh a|b|c|d
# a: CUDA graph on remc's allocator as an environment allocator (tools/gpu_cudagraph_env_probe.py), the ResNet50
#    b32 CLI compile with --time-limit 60 (its wall time) and run under cap = budget, ResNet50 b32 evidence;
# e: the probe of a alone (rerun after a bug in its parent);
# f: the same in a buffer 1.5 times the layout's height (what the provider requests with enable_cuda_graph);
# g (not run yet): the same with --auto-runs, in a buffer of the layout's height;
# b: U-Net b4 416x608 evidence; c: MobileNetV2 b64 and GPT-2 paper size evidence; d: ViT-B/16 b32 (zoo):
#    every strategy at 0.6 (evidence rows), and `remc train` under cap = budget.
# The kernel/profile caches (~/.cache/remc/costs) are seeded from results/ and copied back to $OUT.
set -u
part=$1
C=$HOME/.cache/remc/costs
mkdir -p $C
[ -f $C/scratch.json ] || cp $REPO/results/gpu_h200_s8/scratch_cache_h200.json $C/scratch.json
for f in scratch profile; do [ -f $C/$f.json ] || [ ! -f $REPO/results/gpu_s9/cache_$f.json ] || cp $REPO/results/gpu_s9/cache_$f.json $C/$f.json; done
E="python3 $REPO/tools/gpu_arena_evidence.py --no-probe --no-placed-cuda-graph"
cd /tmp
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader > $OUT/versions_$part.txt 2>&1
python3 -c "import ortools, onnxruntime as o; o.preload_dlls(); print('ortools', ortools.__version__, 'onnxruntime', o.__version__, o.get_available_providers())" >> $OUT/versions_$part.txt 2>&1
case $part in
a)
  timeout 150 python3 $REPO/tools/gpu_cudagraph_env_probe.py --out $OUT/cg_env.json \
      --models resnet50:2:small,resnet50:32:224x224 --iters 10 > $OUT/cg_env.log 2>&1; echo "rc=$?" >> $OUT/cg_env.log
  mkdir -p /tmp/w && cd /tmp/w
  ( python3 -m remc zoo export resnet50 --batch 32 --train -o r50.onnx && \
    /usr/bin/time -f "compile wall %e s" timeout 200 python3 -m remc compile r50.onnx --device cuda --budget 1.8GB --strategy approx \
      --time-limit 60 --plan r50c.plan -o r50c.onnx && \
    timeout 120 python3 -m remc run r50c.onnx --device cuda --plan r50c.plan --compare r50.onnx --iters 3 ) > $OUT/r50_cli.txt 2>&1
  echo "rc=$?" >> $OUT/r50_cli.txt
  cd /tmp
  timeout 300 $E --out $OUT/ev_r50.json --models resnet50:32:224x224 --fractions 0.8,0.6,0.5 \
      --strategies checkmate,approx,lin-greedy --time-limit 25 --threads 1 --max-rounds 3 --jobs 9 --deadline 270 > $OUT/ev_r50.log 2>&1
  ;;
b)
  timeout 570 $E --out $OUT/ev_unet.json --models unet:4:416x608 --fractions 0.8,0.6,0.5 \
      --strategies checkmate,approx,lin-greedy --time-limit 25 --threads 1 --max-rounds 3 --jobs 9 --deadline 530 > $OUT/ev_unet.log 2>&1
  ;;
c)
  timeout 570 $E --out $OUT/ev_mnv2_gpt2.json --models mobilenet_v2:64:224x224,gpt2:8 --fractions 0.8,0.6,0.5 \
      --strategies checkmate,approx,lin-greedy --time-limit 25 --threads 1 --max-rounds 3 --jobs 5 --deadline 540 > $OUT/ev_mnv2_gpt2.log 2>&1
  ;;
c1)
  timeout 570 $E --out $OUT/ev_mnv2.json --models mobilenet_v2:64:224x224 --fractions 0.8,0.6,0.5 \
      --strategies checkmate,approx,lin-greedy --time-limit 25 --threads 1 --max-rounds 3 --jobs 9 --deadline 530 > $OUT/ev_mnv2.log 2>&1
  ;;
c2)
  timeout 570 $E --out $OUT/ev_gpt2.json --models gpt2:8 --fractions 0.8,0.6,0.5 \
      --strategies checkmate,approx,lin-greedy --time-limit 25 --threads 1 --max-rounds 3 --jobs 5 --deadline 530 > $OUT/ev_gpt2.log 2>&1
  ;;
d)
  timeout 330 $E --out $OUT/ev_vit.json --models vit:32 --fractions 0.6 \
      --strategies checkmate,approx,cpsat,ap-sqrtn,ap-greedy,lin-sqrtn,lin-greedy --time-limit 25 --threads 2 --max-rounds 3 --jobs 7 --deadline 300 > $OUT/ev_vit.log 2>&1
  python3 -m remc zoo export vit --train --batch 32 -o /tmp/vit_b32_train.onnx > $OUT/train_vit.log 2>&1
  B=$(python3 -c "import json; d=json.load(open('$OUT/ev_vit.json')); m=d['models'][0]; print(int(0.6*m['checkpoint_all_predicted']) + 2*86567656*4)" 2>>$OUT/train_vit.log)
  echo "budget $B" >> $OUT/train_vit.log
  timeout 230 python3 -m remc train /tmp/vit_b32_train.onnx --device cuda --budget $B --strategy approx --optimizer sgd \
      --momentum 0.9 --time-limit 40 --steps 3 --reference --json > $OUT/train_vit_approx.json 2>> $OUT/train_vit.log
  echo "rc $?" >> $OUT/train_vit.log
  ;;
e)
  timeout 400 python3 $REPO/tools/gpu_cudagraph_env_probe.py --out $OUT/cg_env.json \
      --models resnet50:2:small,resnet50:32:224x224,unet:4:416x608 --iters 10 > $OUT/cg_env.log 2>&1; echo "rc=$?" >> $OUT/cg_env.log
  ;;
f)
  timeout 300 python3 $REPO/tools/gpu_cudagraph_env_probe.py --out $OUT/cg_env_roomy.json --cap-factor 1.5 \
      --models resnet50:2:small,resnet50:32:224x224,unet:4:416x608 --iters 10 > $OUT/cg_env_roomy.log 2>&1; echo "rc=$?" >> $OUT/cg_env_roomy.log
  ;;
g)
  timeout 300 python3 $REPO/tools/gpu_cudagraph_env_probe.py --out $OUT/cg_env_auto.json --auto-runs \
      --models resnet50:2:small,resnet50:32:224x224,unet:4:416x608 --iters 10 > $OUT/cg_env_auto.log 2>&1; echo "rc=$?" >> $OUT/cg_env_auto.log
  ;;
esac
tar -C $C -czf $OUT/caches_$part.tgz .
tail -n 3 $OUT/*.log | cut -c1-600
