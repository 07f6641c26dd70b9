#!/bin/sh
# all 16 published Checkmate-extracted / n=100 cases, lead (e14626c) against pub17b, then n=100 alone twice more
B=/work/wt/pub17b
cd /tmp/pub17b/run
common="--moccasin /work/wt/moccasin-src --ratios 0.8 0.9 --tools checkmate-base,checkmate \
  --base-python /work/wt/pub17b-base/.venv/bin/python --base-label lead-e14626c --time-limit 60 --grace 60"
uptime > $B/results/pub17b/load2.txt
env -u PYTHONDONTWRITEBYTECODE nice -n 10 $B/.venv/bin/python $B/tools/bench_moccasin.py $common \
  --graphs MobileNet ResNet50 VGG19 VGG16 segnet vgg_unet fcn_8_vgg random_layered_n100_ \
  --out $B/results/pub17b/all16.json --markdown $B/results/pub17b/all16.md
uptime >> $B/results/pub17b/load2.txt
for k in 1 2; do
env -u PYTHONDONTWRITEBYTECODE nice -n 10 $B/.venv/bin/python $B/tools/bench_moccasin.py $common \
  --graphs random_layered_n100_ --out $B/results/pub17b/n100_rep$k.json --markdown $B/results/pub17b/n100_rep$k.md
uptime >> $B/results/pub17b/load2.txt
done
