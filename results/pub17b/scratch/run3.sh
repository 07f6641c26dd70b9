#!/bin/sh
# ResNet50 and MobileNet with Moccasin beside lead and pub17b; then own random layered seeds 1701 and 1703
B=/work/wt/pub17b
cd /tmp/pub17b/run
common="--ratios 0.8 0.9 --base-python /work/wt/pub17b-base/.venv/bin/python --base-label lead-e14626c --time-limit 60 --grace 60"
uptime > $B/results/pub17b/load3.txt
env -u PYTHONDONTWRITEBYTECODE nice -n 10 $B/.venv/bin/python $B/tools/bench_moccasin.py $common \
  --moccasin /work/wt/moccasin-src --python /work/wt/moccasin-venv/bin/python --moccasin-timeout 60 \
  --graphs MobileNet ResNet50 --tools checkmate-base,checkmate,moccasin \
  --out $B/results/pub17b/moccasin.json --markdown $B/results/pub17b/moccasin.md
uptime >> $B/results/pub17b/load3.txt
env -u PYTHONDONTWRITEBYTECODE nice -n 10 $B/.venv/bin/python $B/tools/bench_moccasin.py $common \
  --random 100:1701 80:1703 --tools checkmate-base,checkmate --out $B/results/pub17b/own.json --markdown $B/results/pub17b/own.md
uptime >> $B/results/pub17b/load3.txt
