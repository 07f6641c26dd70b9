#!/bin/bash
# main (604ceb1, /work/wt/bound16-base, its venv) and the branch side by side, both at once, each in its own process:
# checkmate 300 s, 1 thread, nice -n 10, ResNet50 and GPT-2 at ONNX-node granularity (paper size), 0.9 and 0.8;
# the load every 30 s into results/bound16/load_${TAG}.txt. TAG (default ab), ZOO, RATIOS pick the cases.
OUT=/work/wt/bound16/results/bound16
cd /tmp/bound16/run   # no remc/ here
(while true; do echo "$(date -u +%H:%M:%S) $(cut -d' ' -f1-3 /proc/loadavg)" >> $OUT/load_${TAG:-ab}.txt; sleep 30; done) & L=$!
env -u PYTHONDONTWRITEBYTECODE nice -n 10 /work/wt/bound16-base/.venv/bin/python /work/wt/bound16-base/tools/bench_scale.py --out $OUT/${TAG:-ab}_main.jsonl --zoo ${ZOO:-resnet50,gpt2} --sizes "" --ratios ${RATIOS:-0.9,0.8} --strategies checkmate --time-limit 300 --threads 1 & p1=$!
env -u PYTHONDONTWRITEBYTECODE nice -n 10 /work/wt/bound16/.venv/bin/python /work/wt/bound16/tools/bench_scale.py --out $OUT/${TAG:-ab}_branch.jsonl --zoo ${ZOO:-resnet50,gpt2} --sizes "" --ratios ${RATIOS:-0.9,0.8} --strategies checkmate --time-limit 300 --threads 1 & p2=$!
wait $p1 $p2
kill $L
