#!/bin/sh
# seed 1701 with the branch run first in each case (--tools checkmate,checkmate-base)
B=/work/wt/pub17b
cd /tmp/pub17b/run
uptime > $B/results/pub17b/load5.txt
env -u PYTHONDONTWRITEBYTECODE nice -n 10 $B/.venv/bin/python $B/tools/bench_moccasin.py --ratios 0.8 0.9 \
  --base-python /work/wt/pub17b-base/.venv/bin/python --base-label lead-e14626c --time-limit 60 --grace 60 \
  --random 100:1701 --tools checkmate,checkmate-base --out $B/results/pub17b/own_swap.json --markdown $B/results/pub17b/own_swap.md
uptime >> $B/results/pub17b/load5.txt
