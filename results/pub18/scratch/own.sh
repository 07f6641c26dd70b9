#!/bin/bash
# own random layered graphs (tools/bench_moccasin.py's generator, seeds 1801-1803): main against this branch
B=/work/wt/pub18; mkdir -p /tmp/pub18/run; cd /tmp/pub18/run
env -u PYTHONDONTWRITEBYTECODE nice -n 10 $B/.venv/bin/python $B/tools/bench_moccasin.py --ratios 0.8 0.9 \
  --random 80:1801 120:1802 100:1803 --tools checkmate-base,checkmate \
  --base-python /work/wt/pub18-base/.venv/bin/python --base-label main-29929ca --time-limit 30 --grace 30 \
  --out $B/results/pub18/own.json --markdown $B/results/pub18/own.md
