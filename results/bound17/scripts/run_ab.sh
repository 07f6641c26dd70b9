#!/bin/bash
# main (/work/wt/bound17-base, its venv) and the branch side by side, both at once, each in its own process:
# checkmate, 1 thread, nice -n 10: ResNet50 and GPT-2 at ONNX-node granularity (paper size) at 300 s, then a random
# layered DAG of 1000 units (tools/layered.py, seed 1) at 120 s (item 2's limit); 0.9 and 0.8.
# The load every 30 s into results/bound17/load_${TAG}.txt. TAG (default ab).
OUT=/work/wt/bound17/results/bound17
TAG=${TAG:-ab}
cd /tmp/bound17/run   # no remc/ here
(while true; do echo "$(date -u +%H:%M:%S) $(cut -d' ' -f1-3 /proc/loadavg)" >> $OUT/load_${TAG}.txt; sleep 30; done) & L=$!
side() {  # $1: worktree, $2: main|branch
  env -u PYTHONDONTWRITEBYTECODE nice -n 10 $1/.venv/bin/python $1/tools/bench_scale.py --out $OUT/${TAG}_$2.jsonl --zoo ${ZOO:-resnet50,gpt2} --sizes "" --ratios 0.9,0.8 --strategies checkmate --time-limit 300 --threads 1
  env -u PYTHONDONTWRITEBYTECODE nice -n 10 $1/.venv/bin/python $1/tools/bench_scale.py --out $OUT/${TAG}_$2.jsonl --sizes ${SIZES:-1000} --ratios 0.9,0.8 --strategies checkmate --time-limit 120 --threads 1
}
side /work/wt/bound17-base main & p1=$!
side /work/wt/bound17 branch & p2=$!
wait $p1 $p2
kill $L
