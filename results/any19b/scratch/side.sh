#!/bin/bash
# side.sh REPEATS ARGS...: replay_k.py ARGS with KICKS=0 (lead) and the branch's KICKS at the same moment, nice -n 10,
# from a folder with no remc/; prints both outputs and the load.
reps=$1; shift
W=/work/wt/any19b; mkdir -p /tmp/any19b/run && cd /tmp/any19b/run
for i in $(seq 1 $reps); do
  echo "== repeat $i $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg)"
  KICKS=0 nice -n 10 $W/.venv/bin/python $W/results/any19b/scratch/replay_k.py "$@" > /tmp/any19b/side_lead.out 2>&1 &
  p1=$!
  nice -n 10 $W/.venv/bin/python $W/results/any19b/scratch/replay_k.py "$@" > /tmp/any19b/side_branch.out 2>&1 &
  p2=$!
  wait $p1 $p2
  echo "-- lead (KICKS=0)"; cat /tmp/any19b/side_lead.out; echo "-- branch"; cat /tmp/any19b/side_branch.out
done
echo "== end $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg)"
