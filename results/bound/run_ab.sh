#!/bin/bash
# before (main 5c20d83, /work/main/.venv) and after (this branch) side by side, started together
cd /work/wt/bound
B=/work/main/.venv/bin/python
A=.venv/bin/python
(for seed in 2 3; do
  nice -n 10 $B tools/bench_scale.py --out results/bound/before_main.jsonl --sizes 250,500,1000 --seed $seed --ratios 0.8,0.9 --strategies approx --time-limit 120 --threads 1
done) > results/bound/before_main.log 2>&1 &
(for seed in 2 3; do
  nice -n 10 $A tools/bench_scale.py --out results/bound/after_branch.jsonl --sizes 250,500,1000 --seed $seed --ratios 0.8,0.9 --strategies approx --time-limit 120 --threads 1
done
for seed in 2 3; do
  nice -n 10 $A tools/bench_scale.py --out results/bound/after_branch_checkmate.jsonl --sizes 250,500,1000 --seed $seed --ratios 0.8 --strategies checkmate --time-limit 120 --threads 1
done) > results/bound/after_branch.log 2>&1 &
wait
