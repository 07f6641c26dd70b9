#!/bin/bash
# evict_search alone (results/any15/scratch/ff.py, a copy of results/sched14/scratch/ff.py): CPU seconds to the first
# fit and the cost at the end, main 8d886bf and the branch side by side on each graph.
cd /tmp
W=/work/wt/any15; M=/work/wt/moccasin-src/data; G=$W/results/gap13/graphs
for a in "$G/layered_n250_s12.json 0.8 3" "$M/random_layered_n1000_w0.31_nlv0.75_ed0.2_scd0.14.json 0.8 15" "$G/layered_n500_s21.json 0.9 15"; do
  echo "== $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg) $a"
  nice -n 10 /work/wt/any15-base/.venv/bin/python $W/results/any15/scratch/ff.py $a | sed 's/^/main:   /' &
  nice -n 10 $W/.venv/bin/python $W/results/any15/scratch/ff.py $a | sed 's/^/branch: /' &
  wait
done
