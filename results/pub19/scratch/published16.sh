#!/bin/bash
# Moccasin's 14 Checkmate-extracted cases and random layered n=100 at 0.8 and 0.9: main (pub19-base), the branch and
# Moccasin one after the other per case (results/lead18/moccasin_quiet.sh with --base-*); from a folder with no remc/
B=/work/wt/pub19; out=$B/results/pub19
env -u PYTHONDONTWRITEBYTECODE nice -n 10 $B/.venv/bin/python $B/tools/bench_moccasin.py --moccasin /work/wt/moccasin-src \
  --python /work/wt/moccasin-venv/bin/python --ratios 0.8 0.9 --time-limit 60 --moccasin-timeout 60 --grace 60 \
  --base-python /work/wt/pub19-base/.venv/bin/python --base-label main-da9144a \
  --graphs VGG16 VGG19 MobileNet ResNet50 fcn_8_vgg segnet vgg_unet random_layered_n100_ --tools checkmate-base,checkmate,moccasin \
  --out $out/published16.json --markdown $out/published16.md
