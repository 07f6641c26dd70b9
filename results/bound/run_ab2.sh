#!/bin/bash
# before (main 5c20d83, /work/main/.venv) and after (this branch) side by side, started together
cd /work/wt/bound
B=/work/main/.venv/bin/python
A=.venv/bin/python
for who in before after; do
  (if [ $who = before ]; then P=$B; else P=$A; fi
   for seed in 2 3; do
     nice -n 10 $P tools/bench_scale.py --out results/bound/ab_$who.jsonl --sizes 250,500,1000 --seed $seed --ratios 0.8,0.9 --strategies approx --time-limit 120 --threads 1
   done
   nice -n 10 $P tools/bench_scale.py --out results/bound/ab_$who.jsonl --sizes 250,500,1000 --seed 2 --ratios 0.8 --strategies checkmate --time-limit 120 --threads 1
   nice -n 10 $P tools/bench_scale.py --out results/bound/ab_$who.jsonl --sizes "" --zoo gpt2 --ratios 0.8 --strategies approx --time-limit 120 --threads 1
  ) > results/bound/ab_$who.log 2>&1 &
done
wait
