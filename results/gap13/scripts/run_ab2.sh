#!/bin/bash
# The covering MILP before CP-SAT (>= 200 units) and its 30k-column cap: main and the branch side by side, checkmate 60 s
# (item 1's protocol), each case by both at once, 1 thread.
cd /work/wt/gap13
OUT=results/gap13
M=/work/wt/moccasin-src/data
for g in "$M/ResNet50 (MLSys)_256_(224, 224, 3)_train_nx.json" $M/random_layered_n250_w0.43_nlv0.75_ed0.2_scd0.14.json; do
  for r in 0.8 0.9; do
    nice -n 10 /work/wt/gap13-base/.venv/bin/python $OUT/scripts/where.py "$g" $r checkmate 60 --out $OUT/ab2_base.jsonl &
    nice -n 10 /work/wt/gap13/.venv/bin/python $OUT/scripts/where.py "$g" $r checkmate 60 --out $OUT/ab2_branch.jsonl &
    wait
  done
done
