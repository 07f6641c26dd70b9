#!/bin/sh
# GPT-2 paper size at ONNX-node granularity (1730 units), approx at 0.8, 60 s: main and branch started together
cd /work/wt/feas12-base && nice -n 10 .venv/bin/python tools/bench_scale.py --out /work/wt/feas12/results/feas12/gpt2_main.jsonl --sizes "" --zoo gpt2 --ratios 0.8 --strategies approx --time-limit 60 --threads 1 > /dev/null 2>&1 &
cd /work/wt/feas12 && nice -n 10 .venv/bin/python tools/bench_scale.py --out results/feas12/gpt2_branch.jsonl --sizes "" --zoo gpt2 --ratios 0.8 --strategies approx --time-limit 60 --threads 1 > /dev/null 2>&1 &
wait
