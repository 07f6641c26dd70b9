#!/bin/bash
# main e819bd9 (/work/main's venv) and lead, each case by both at once
for tl in 4 6 8; do
  for who in main lead; do
    if [ $who = main ]; then PY=/work/main/.venv/bin/python; T=/work/main/tools; else PY=/work/wt/lead/.venv/bin/python; T=/work/wt/lead/tools; fi
    env -u PYTHONDONTWRITEBYTECODE nice -n 5 $PY $T/bench_scale.py --out r50_$who.jsonl --sizes "" --zoo resnet50 --ratios 0.85 --strategies approx --time-limit $tl --threads 1 > /dev/null 2>&1 &
  done
  wait
done
