#!/bin/bash
# Moccasin's 14 Checkmate-extracted cases and random layered n=100 at 0.8 and 0.9: main (this checkout's venv) and
# Moccasin one after the other per case, on a machine with nothing else running (pub18's part A without a base)
#   bash results/lead18/moccasin_quiet.sh CHECKOUT OUTDIR      (run from a folder with no remc/ in it)
B=$1; out=$2
env -u PYTHONDONTWRITEBYTECODE "$B/.venv/bin/python" "$B/tools/bench_moccasin.py" --moccasin /work/wt/moccasin-src \
  --python /work/wt/moccasin-venv/bin/python --ratios 0.8 0.9 --time-limit 60 --moccasin-timeout 60 --grace 60 \
  --graphs VGG16 VGG19 MobileNet ResNet50 fcn_8_vgg segnet vgg_unet random_layered_n100_ --tools checkmate,moccasin \
  --out "$out/moccasin_quiet.json" --markdown "$out/moccasin_quiet.md"
