#!/bin/bash
# main (67d4873, detached worktree /work/wt/pub17-base), this branch and Moccasin side by side, from a folder with no remc/
mkdir -p /tmp/pub17/run && cd /tmp/pub17/run
B=/work/wt/pub17
common="--moccasin /work/wt/moccasin-src --python /work/wt/moccasin-venv/bin/python --ratios 0.8 0.9 --base-python /work/wt/pub17-base/.venv/bin/python --base-label main-67d4873 --time-limit 60 --moccasin-timeout 60 --grace 60"
(while true; do echo "$(date -u +%T) $(cut -d' ' -f1-3 /proc/loadavg)"; sleep 30; done) > $B/results/pub17/load.txt &
LP=$!
env -u PYTHONDONTWRITEBYTECODE nice -n 10 $B/.venv/bin/python $B/tools/bench_moccasin.py $common \
  --graphs MobileNet ResNet50 VGG19 random_layered_n100_ --tools checkmate-base,checkmate,moccasin \
  --out $B/results/pub17/published_part1.json --markdown $B/results/pub17/published_part1.md
env -u PYTHONDONTWRITEBYTECODE nice -n 10 $B/.venv/bin/python $B/tools/bench_moccasin.py $common \
  --graphs VGG16 segnet vgg_unet fcn_8_vgg --tools checkmate-base,checkmate,moccasin \
  --out $B/results/pub17/published_part2.json --markdown $B/results/pub17/published_part2.md
kill $LP
echo done
