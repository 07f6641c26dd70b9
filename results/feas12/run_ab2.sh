#!/bin/sh
# the final branch (checkmate as approx where only approx runs) and main again on the 0.8 cases where main had
# no schedule, side by side, 2 cases at a time, 120 s
cd /work/wt/feas12
nice -n 10 .venv/bin/python tools/bench_feas.py --base-root /work/wt/feas12-base --base-python /work/wt/feas12-base/.venv/bin/python \
  --out results/feas12/ab2.jsonl --time-limit 120 --streams 2 --strategies approx,checkmate --sizes 1000 --seeds 5,8 --ratios 0.8
