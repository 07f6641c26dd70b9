#!/bin/bash
# the repair from checkpoint-all alone (results/any16/scratch/fit.py: until fit / stuck / CPU seconds), this branch
# with swaps (SWAP_CANDIDATES 12) and without (0: main's repair, with ROW_SPARSE_FROM), at once
cd /work/wt/any16
G=results/gap13/graphs
for c in "n250_s11 0.8" "n250_s11 0.9" "n500_s21 0.8"; do
  set -- $c
  for k in 0 12; do nice -n 10 .venv/bin/python results/any16/scratch/fit.py $G/layered_$1.json $2 90 $k & done
done
wait
