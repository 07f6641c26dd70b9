#!/bin/sh
# cProfile of one eviction setting (weight 1, closure 1) and of the least-memory starts on layered n=1000 seed 3
# at 0.8, main and branch started together
OUT=/work/wt/feas12/results/feas12
S=/work/wt/feas12/results/feas12/scripts
(cd /work/wt/feas12-base && nice -n 10 .venv/bin/python $S/prof_evict.py 1000 3 0.8 1 1 0 200 > $OUT/prof_evict_main.txt 2>&1; nice -n 10 .venv/bin/python $S/prof_least.py 1000 3 0.8 least > $OUT/prof_least_main.txt 2>&1) &
(cd /work/wt/feas12 && nice -n 10 .venv/bin/python $S/prof_evict.py 1000 3 0.8 1 1 0 200 > $OUT/prof_evict_branch.txt 2>&1; nice -n 10 .venv/bin/python $S/prof_least.py 1000 3 0.8 least > $OUT/prof_least_branch.txt 2>&1) &
wait
