#!/bin/sh
# main (ad14b31, /work/wt/feas12-base and its venv) and the branch side by side, each case by both at once,
# 2 cases at a time (4 solves on the 2 cores, beside the other sessions), 120 s, 1 solver thread
cd /work/wt/feas12
B="--base-root /work/wt/feas12-base --base-python /work/wt/feas12-base/.venv/bin/python --out results/feas12/ab.jsonl --time-limit 120 --streams 2"
nice -n 10 .venv/bin/python tools/bench_feas.py $B --strategies approx,checkmate --sizes 1000 --seeds 0-9 --ratios 0.8
nice -n 10 .venv/bin/python tools/bench_feas.py $B --strategies approx,checkmate --sizes 1000 --seeds 0-4 --ratios 0.9
nice -n 10 .venv/bin/python tools/bench_feas.py $B --strategies approx,checkmate --sizes 500 --seeds 0-2 --ratios 0.8
