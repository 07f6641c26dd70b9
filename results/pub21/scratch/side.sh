#!/bin/bash
# VGG16 and Moccasin's random layered n=100 at 0.8 and 0.9: main (pub21-base, detached at 5a286c0), the branch and
# Moccasin one after the other per case, as results/pub19/scratch/published16.sh; from a folder with no remc/.
# side.sh TAG
B=/work/wt/pub21; out=$B/results/pub21
env -u PYTHONDONTWRITEBYTECODE setsid nice -n 10 $B/.venv/bin/python $B/tools/bench_moccasin.py --moccasin /work/wt/moccasin-src \
  --python /work/wt/moccasin-venv/bin/python --ratios 0.8 0.9 --time-limit 60 --moccasin-timeout 60 --grace 60 \
  --base-python /work/wt/pub21-base/.venv/bin/python --base-label main-5a286c0 \
  --graphs VGG16 random_layered_n100_ --tools checkmate-base,checkmate,moccasin \
  --out $out/side_$1.json --markdown $out/side_$1.md
