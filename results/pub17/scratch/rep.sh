#!/bin/bash
# main and this branch again (no Moccasin) on the cases the first run showed slower or near 10x, twice
mkdir -p /tmp/pub17/run && cd /tmp/pub17/run
B=/work/wt/pub17
for i in 1 2; do
env -u PYTHONDONTWRITEBYTECODE nice -n 10 $B/.venv/bin/python $B/tools/bench_moccasin.py --ratios 0.8 0.9 \
  --graphs random_layered_n100_ VGG19 VGG16 --moccasin /work/wt/moccasin-src --tools checkmate-base,checkmate \
  --base-python /work/wt/pub17-base/.venv/bin/python --base-label main-67d4873 --time-limit 60 --grace 60 \
  --out $B/results/pub17/rep$i.json --markdown $B/results/pub17/rep$i.md
done
echo done
