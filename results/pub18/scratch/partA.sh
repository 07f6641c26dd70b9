#!/bin/bash
# Moccasin's 14 Checkmate-extracted cases and random layered n=100: main (detached worktree pub18-base, own install),
# this branch and Moccasin, one after the other per case
B=/work/wt/pub18; mkdir -p /tmp/pub18/run; cd /tmp/pub18/run
common="--moccasin /work/wt/moccasin-src --python /work/wt/moccasin-venv/bin/python --ratios 0.8 0.9 \
  --base-python /work/wt/pub18-base/.venv/bin/python --base-label main-29929ca --time-limit 60 --moccasin-timeout 60 --grace 60"
env -u PYTHONDONTWRITEBYTECODE nice -n 10 $B/.venv/bin/python $B/tools/bench_moccasin.py $common \
  --graphs VGG16 VGG19 MobileNet ResNet50 fcn_8_vgg segnet vgg_unet random_layered_n100_ --tools checkmate-base,checkmate,moccasin \
  --out $B/results/pub18/published_small.json --markdown $B/results/pub18/published_small.md
