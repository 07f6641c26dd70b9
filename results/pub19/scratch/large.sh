#!/bin/bash
# Moccasin's random layered n=250 at 0.8 and 0.9, then own n=250/200 at 0.9: main (pub19-base) against the branch,
# checkmate with a 60 s limit, one after the other per case (run from a folder with no remc/ in it)
B=/work/wt/pub19; out=$B/results/pub19
common="--ratios 0.8 0.9 --base-python /work/wt/pub19-base/.venv/bin/python --base-label main-da9144a --time-limit 60 --grace 60 --tools checkmate-base,checkmate"
env -u PYTHONDONTWRITEBYTECODE nice -n 10 $B/.venv/bin/python $B/tools/bench_moccasin.py $common --moccasin /work/wt/moccasin-src \
  --graphs random_layered_n250_ --out $out/large250.json --markdown $out/large250.md
env -u PYTHONDONTWRITEBYTECODE nice -n 10 $B/.venv/bin/python $B/tools/bench_moccasin.py $common --ratios 0.9 \
  --random 250:1912 200:1913 --out $out/own250.json --markdown $out/own250.md
