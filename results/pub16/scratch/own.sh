#!/bin/bash
while ! grep -q '^done' /tmp/pub16/final.log; do sleep 5; done
cd /tmp/pub16/run
B=/work/wt/pub16
(while true; do echo "$(date -u +%T) $(cut -d' ' -f1-3 /proc/loadavg)"; sleep 30; done) > $B/results/pub16/load_own.txt &
LP=$!
env -u PYTHONDONTWRITEBYTECODE nice -n 10 $B/.venv/bin/python $B/tools/bench_moccasin.py --ratios 0.8 0.9 \
  --random 100:1601 100:1602 80:1603 --tools checkmate-base,checkmate \
  --base-python /work/wt/pub16-base/.venv/bin/python --base-label main-604ceb1 --time-limit 60 --grace 60 \
  --out $B/results/pub16/own.json --markdown $B/results/pub16/own.md
kill $LP
echo owndone
