#!/bin/bash
# Moccasin's random layered n=250/500/1000 at 0.8 and 0.9: this branch against Moccasin, one after the other per case
B=/work/wt/pub18; mkdir -p /tmp/pub18/run; cd /tmp/pub18/run
common="--moccasin /work/wt/moccasin-src --python /work/wt/moccasin-venv/bin/python --ratios 0.8 0.9 --time-limit 60 --moccasin-timeout 60 --grace 60"
env -u PYTHONDONTWRITEBYTECODE nice -n 10 $B/.venv/bin/python $B/tools/bench_moccasin.py $common \
  --graphs random_layered_n250_ random_layered_n500_ random_layered_n1000_ --tools checkmate,moccasin \
  --out $B/results/pub18/published_large.json --markdown $B/results/pub18/published_large.md
