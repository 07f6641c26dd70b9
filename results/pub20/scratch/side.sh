#!/bin/bash
# VGG16 and Moccasin's random layered n=100 at 0.8 and 0.9: main (pub20-base, detached at 1b2d196), the branch and
# Moccasin one after the other per case, as results/pub19/scratch/published16.sh; from a folder with no remc/.
# side.sh TAG
B=/work/wt/pub20; out=$B/results/pub20
env -u PYTHONDONTWRITEBYTECODE nice -n 10 $B/.venv/bin/python $B/tools/bench_moccasin.py --moccasin /work/wt/moccasin-src \
  --python /work/wt/moccasin-venv/bin/python --ratios 0.8 0.9 --time-limit 60 --moccasin-timeout 60 --grace 60 \
  --base-python /work/wt/pub20-base/.venv/bin/python --base-label main-1b2d196 \
  --graphs VGG16 random_layered_n100_ --tools checkmate-base,checkmate,moccasin \
  --out $out/side_$1.json --markdown $out/side_$1.md
