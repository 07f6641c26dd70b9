#!/bin/bash
# own random layered graphs (tools/bench_moccasin.py's generator), main and this branch side by side
mkdir -p /tmp/pub17/run && cd /tmp/pub17/run
B=/work/wt/pub17
env -u PYTHONDONTWRITEBYTECODE nice -n 10 $B/.venv/bin/python $B/tools/bench_moccasin.py --ratios 0.8 0.9 \
  --random 100:1701 100:1702 80:1703 200:1704 300:1705 --tools checkmate-base,checkmate \
  --base-python /work/wt/pub17-base/.venv/bin/python --base-label main-67d4873 --time-limit 60 --grace 60 \
  --out $B/results/pub17/own.json --markdown $B/results/pub17/own.md
echo done
