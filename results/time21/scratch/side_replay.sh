#!/bin/bash
# approx on a captured solve, main (/work/wt/time21-base) and the branch alternating, nice -n 10, with BUSY busy-loop
# processes (nice $BUSY_NICE, default 0) beside: side_replay.sh PKL LIMIT REPEATS BUSY > OUT   (scratch; results/time21)
PKL=$1; LIMIT=$2; N=$3; BUSY=${4:-0}
pids=()
for i in $(seq 1 $BUSY); do nice -n ${BUSY_NICE:-0} bash -c "while :; do :; done" & pids+=($!); done
cd /tmp/time21/run
for rep in $(seq 1 $N); do
  for side in main branch; do
    [ $side = main ] && W=/work/wt/time21-base || W=/work/wt/time21
    line=$(env -u PYTHONDONTWRITEBYTECODE nice -n 10 $W/.venv/bin/python /work/wt/time21/results/time21/scratch/replay.py $PKL $LIMIT 1 2>&1 | grep '^END')
    echo "$side rep $rep load $(cut -d' ' -f1 /proc/loadavg) $line"
  done
done
for p in "${pids[@]}"; do kill $p; done
