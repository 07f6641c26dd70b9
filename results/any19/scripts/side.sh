#!/bin/bash
# side.sh REPEATS SCRIPT ARGS...: run results/any19/scratch/SCRIPT with main's (any19-base) and the branch's venv at
# the same moment, nice -n 10, from a folder with no remc/, REPEATS times; prints both outputs and the load.
reps=$1; shift; script=$1; shift
B=/work/wt/any19-base; W=/work/wt/any19
mkdir -p /tmp/any19/run && cd /tmp/any19/run
for i in $(seq 1 $reps); do
  echo "== repeat $i $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg)"
  nice -n 10 $B/.venv/bin/python $W/results/any19/scratch/$script "$@" > /tmp/any19/side_main.out 2>&1 &
  p1=$!
  nice -n 10 $W/.venv/bin/python $W/results/any19/scratch/$script "$@" > /tmp/any19/side_branch.out 2>&1 &
  p2=$!
  wait $p1 $p2
  echo "-- main"; cat /tmp/any19/side_main.out; echo "-- branch"; cat /tmp/any19/side_branch.out
done
echo "== end $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg)"
