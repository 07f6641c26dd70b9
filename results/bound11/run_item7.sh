#!/bin/bash
# item 7: checkmate with a 300 s limit on ResNet50 and GPT-2 paper size at ONNX-node granularity (branch)
cd /work/wt/bound
nice -n 10 .venv/bin/python tools/bench_scale.py --out results/bound11/item7.jsonl --sizes "" --zoo resnet50 --ratios 0.9 --strategies checkmate --time-limit 300 --threads 1 > results/bound11/item7_r50.log 2>&1 &
nice -n 10 .venv/bin/python tools/bench_scale.py --out results/bound11/item7_g2.jsonl --sizes "" --zoo gpt2 --ratios 0.9 --strategies checkmate --time-limit 300 --threads 1 > results/bound11/item7_g2.log 2>&1 &
wait
