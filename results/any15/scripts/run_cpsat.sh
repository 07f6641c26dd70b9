#!/bin/bash
# main 8d886bf and the branch side by side, in-process (results/gap13/scripts/where.py: the solve alone): cpsat on
# Moccasin's random layered n=1000 at 0.8 and 0.9 with 10 and 30 s.
cd /tmp
W=/work/wt/any15; M=/work/wt/moccasin-src/data; O=$W/results/any15
G=$M/random_layered_n1000_w0.31_nlv0.75_ed0.2_scd0.14.json
for T in 10 30; do for r in 0.8 0.9; do
  echo "== $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg) ratio $r limit $T"
  env -u PYTHONDONTWRITEBYTECODE nice -n 10 /work/wt/any15-base/.venv/bin/python $W/results/gap13/scripts/where.py $G $r cpsat $T --out $O/where_cpsat_base.jsonl &
  env -u PYTHONDONTWRITEBYTECODE nice -n 10 $W/.venv/bin/python $W/results/gap13/scripts/where.py $G $r cpsat $T --out $O/where_cpsat_branch.jsonl &
  wait
done; done
