#!/bin/sh
# each eviction setting alone, then evict_search, on layered n=1000 seed 3 at 0.8: main and branch at once
cd /work/wt/feas12-base && nice -n 10 .venv/bin/python /work/wt/feas12/results/feas12/scripts/evict_settings.py 1000 3 0.8 100 > /work/wt/feas12/results/feas12/evict_settings_main.txt 2>&1 &
cd /work/wt/feas12 && nice -n 10 .venv/bin/python results/feas12/scripts/evict_settings.py 1000 3 0.8 100 > results/feas12/evict_settings_branch.txt 2>&1 &
wait
