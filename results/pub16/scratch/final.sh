#!/bin/bash
cd /tmp/pub16/run
B=/work/wt/pub16
common="--moccasin /work/wt/moccasin-src --python /work/wt/moccasin-venv/bin/python --ratios 0.8 0.9 --base-python /work/wt/pub16-base/.venv/bin/python --base-label main-604ceb1 --time-limit 60 --moccasin-timeout 60 --grace 60"
(while true; do echo "$(date -u +%T) $(cut -d' ' -f1-3 /proc/loadavg)"; sleep 30; done) > $B/results/pub16/load.txt &
LP=$!
env -u PYTHONDONTWRITEBYTECODE nice -n 10 $B/.venv/bin/python $B/tools/bench_moccasin.py $common \
  --graphs VGG19 VGG16 random_layered_n100_ segnet vgg_unet fcn_8_vgg --tools checkmate-base,checkmate,moccasin \
  --out $B/results/pub16/published_part1.json --markdown $B/results/pub16/published_part1.md
env -u PYTHONDONTWRITEBYTECODE nice -n 10 $B/.venv/bin/python $B/tools/bench_moccasin.py $common \
  --graphs MobileNet ResNet50 --tools checkmate-base,checkmate,moccasin \
  --out $B/results/pub16/published_part2.json --markdown $B/results/pub16/published_part2.md
kill $LP
echo done
