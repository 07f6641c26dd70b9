#!/bin/sh
# lead (e14626c, /work/wt/pub17b-base) against pub17b, side by side, from a folder with no remc/ in it
B=/work/wt/pub17b
cd /tmp/pub17b/run
uptime > $B/results/pub17b/load.txt
env -u PYTHONDONTWRITEBYTECODE nice -n 10 $B/.venv/bin/python $B/tools/bench_moccasin.py --moccasin /work/wt/moccasin-src \
  --ratios 0.8 0.9 --graphs ResNet50 MobileNet VGG19 segnet random_layered_n100_ --tools checkmate-base,checkmate \
  --base-python /work/wt/pub17b-base/.venv/bin/python --base-label lead-e14626c --time-limit 60 --grace 60 \
  --out $B/results/pub17b/sidebyside.json --markdown $B/results/pub17b/sidebyside.md
uptime >> $B/results/pub17b/load.txt
