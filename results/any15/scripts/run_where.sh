#!/bin/bash
# main 8d886bf and the branch side by side, in-process (results/gap13/scripts/where.py: the solve alone, no remc solve
# start-up or reserve): checkmate on own layered n=250 seed 12 at 0.8 and 0.9 with 10 s, REPEATS times.
cd /tmp
W=/work/wt/any15; G=$W/results/gap13/graphs; O=$W/results/any15
for k in $(seq ${1:-3}); do for r in 0.8 0.9; do
  echo "== $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg) ratio $r repeat $k"
  env -u PYTHONDONTWRITEBYTECODE nice -n 10 /work/wt/any15-base/.venv/bin/python $W/results/gap13/scripts/where.py $G/layered_n250_s12.json $r checkmate 10 --out $O/where_n250s12_base.jsonl &
  env -u PYTHONDONTWRITEBYTECODE nice -n 10 $W/.venv/bin/python $W/results/gap13/scripts/where.py $G/layered_n250_s12.json $r checkmate 10 --out $O/where_n250s12_branch.jsonl &
  wait
done; done
