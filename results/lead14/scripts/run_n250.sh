#!/bin/bash
for seed in 11 12 13; do
  for who in main lead; do
    if [ $who = main ]; then PY=/work/main/.venv/bin/python; T=/work/main/tools; else PY=/work/wt/lead/.venv/bin/python; T=/work/wt/lead/tools; fi
    env -u PYTHONDONTWRITEBYTECODE nice -n 5 $PY $T/bench_scale.py --out small_$who.jsonl --sizes 250 --seed $seed --ratios 0.8 --strategies approx,checkmate --time-limit 10 --threads 1 > /dev/null 2>&1 &
  done
  wait
done
