#!/bin/bash
# evict_search alone (results/any16/scratch/ff.py: CPU seconds to its first schedule within budget; wall deadline DL s),
# main (/work/wt/any17-base's venv) and this branch at once on each case, the cases of a batch at once;
# the load printed before each batch. run_ff.sh DL "CASE RATIO" ...
cd /tmp
G=/work/wt/any17/results/gap13/graphs
FF=/work/wt/any17/results/any16/scratch/ff.py
DL=$1; shift
echo "== $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg) deadline $DL s: $*"
for c in "$@"; do
  set -- $c
  env -u PYTHONDONTWRITEBYTECODE nice -n 10 /work/wt/any17-base/.venv/bin/python $FF $G/layered_$1.json $2 200 $DL > /tmp/any17/ff_main_$1_$2.txt 2>&1 &
  env -u PYTHONDONTWRITEBYTECODE nice -n 10 /work/wt/any17/.venv/bin/python $FF $G/layered_$1.json $2 200 $DL > /tmp/any17/ff_branch_$1_$2.txt 2>&1 &
done
wait
for c in "$@"; do set -- $c; for s in main branch; do printf "%-7s" $s; cat /tmp/any17/ff_${s}_$1_$2.txt; done; done
echo "== $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg) done"
