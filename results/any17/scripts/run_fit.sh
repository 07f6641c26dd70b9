#!/bin/bash
# the repair from checkpoint-all alone (fit.py: until fit / stuck / CPU s), main (any17-base's venv) and this branch at
# once on each case; cases one after the other. fitcmp.sh CPU "GRAPH RATIO" ...
cd /tmp
G=/work/wt/any17/results/gap13/graphs
FIT=/work/wt/any17/results/any16/scratch/fit.py
CPU=$1; shift
for c in "$@"; do
  set -- $c
  echo "== $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg) $c"
  env -u PYTHONDONTWRITEBYTECODE nice -n 10 /work/wt/any17-base/.venv/bin/python $FIT $G/layered_$1.json $2 $CPU | sed 's/^/main   /' &
  env -u PYTHONDONTWRITEBYTECODE nice -n 10 /work/wt/any17/.venv/bin/python $FIT $G/layered_$1.json $2 $CPU | sed 's/^/branch /' &
  wait
done
