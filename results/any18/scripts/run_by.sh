#!/bin/bash
# The stage search's feasibility phase alone (results/any18/scratch/by.py: CPU s and rows per producer to the first
# schedule), main (29929ca, /work/wt/any18-base's venv) and this branch at once on each case. run_by.sh WALL "CASE RATIO" ...
cd /tmp/any18/run
BY=/work/wt/any18/results/any18/scratch/by.py
W=$1; shift
for c in "$@"; do
  set -- $c
  echo "== $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg) $*"
  env -u PYTHONDONTWRITEBYTECODE nice -n 15 /work/wt/any18-base/.venv/bin/python $BY $1 $2 $W > /tmp/any18/byb_main.txt 2>&1 &
  env -u PYTHONDONTWRITEBYTECODE nice -n 15 /work/wt/any18/.venv/bin/python $BY $1 $2 $W > /tmp/any18/byb_branch.txt 2>&1 &
  wait
  echo "-- main"; cat /tmp/any18/byb_main.txt; echo "-- branch"; cat /tmp/any18/byb_branch.txt
done
echo "== $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg) done"
