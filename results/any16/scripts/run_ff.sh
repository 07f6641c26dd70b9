#!/bin/bash
# evict_search alone (results/any16/scratch/ff.py: CPU seconds to its first schedule within budget; wall deadline DL s),
# main 604ceb1 (/work/wt/any16-base's venv) and this branch at once on each case, the cases of a batch at once;
# the load printed before each batch. run_ff.sh DL "CASE RATIO" ...
cd /tmp
G=/work/wt/any16/results/gap13/graphs
FF=/work/wt/any16/results/any16/scratch/ff.py
DL=$1; shift
echo "== $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg) deadline $DL s: $*"
for c in "$@"; do
  set -- $c
  env -u PYTHONDONTWRITEBYTECODE nice -n 10 /work/wt/any16-base/.venv/bin/python $FF $G/layered_$1.json $2 200 $DL | sed 's/^/main   /' &
  env -u PYTHONDONTWRITEBYTECODE nice -n 10 /work/wt/any16/.venv/bin/python $FF $G/layered_$1.json $2 200 $DL | sed 's/^/branch /' &
done
wait
echo "== $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg) done"
