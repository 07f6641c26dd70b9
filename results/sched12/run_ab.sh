#!/bin/bash
# main (ad14b31, its own worktree and venv: /work/wt/sched12-base) and the branch side by side: ResNet50 and
# GPT-2 at ONNX-node granularity, 0.9 and 0.8, approx (30 s) then checkmate (300 s), 1 solver thread, nice 10.
cd "$(dirname "$0")/../.."
run() {  # $1 = main|branch, $2 = repository root
  local py=$2/.venv/bin/python out=$PWD/results/sched12/ab_$1
  (cd $2 && nice -n 10 $py tools/bench_scale.py --out ${out}_approx.jsonl --zoo resnet50,gpt2 --sizes "" \
      --ratios 0.9,0.8 --strategies approx --time-limit 30 --threads 1
   nice -n 10 $py tools/bench_scale.py --out ${out}_checkmate.jsonl --zoo resnet50,gpt2 --sizes "" \
      --ratios 0.9,0.8 --strategies checkmate --time-limit 300 --threads 1) > ${out}.log 2>&1
}
run main /work/wt/sched12-base &
run branch $PWD &
wait
