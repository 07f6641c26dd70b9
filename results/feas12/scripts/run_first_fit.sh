#!/bin/sh
# time to evict_search's first fitting schedule (improve off), main and branch started together on each case,
# the next case only when both have ended (so both see the same load)
OUT=/work/wt/feas12/results/feas12
for C in ${CASES:-1000:3:0.8 1000:0:0.8 1000:3:0.9 250:2:0.8}; do
  (cd /work/wt/feas12-base && nice -n 10 .venv/bin/python /work/wt/feas12/results/feas12/scripts/first_fit.py 120 $C >> $OUT/first_fit_pair_main.txt 2>&1) &
  (cd /work/wt/feas12 && nice -n 10 .venv/bin/python results/feas12/scripts/first_fit.py 120 $C >> $OUT/first_fit_pair_branch.txt 2>&1) &
  wait
done
