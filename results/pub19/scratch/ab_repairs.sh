#!/bin/bash
# checkmate (TL s, default 300) with the stage search's repairs before CP-SAT on (main's way) and off, alternating, per case:
# the process' CPU seconds and the result.   ab_repairs.sh REPS CASE...   (CASE = path:ratio)
P=/work/wt/pub19/.venv/bin/python; S=/work/wt/pub19/results/pub19/scratch/phases.py
reps=$1; shift
for c in "$@"; do g=${c%:*}; r=${c##*:}
  for k in $(seq $reps); do for v in True False; do
    out=$( { /usr/bin/time -f "%U %S %e" env -u PYTHONDONTWRITEBYTECODE PUB19_SET="strategies.STAGE_REPAIRS_BEFORE_CP=$v" nice -n 10 $P $S $g $r ${TL:-300} | grep "checkmate " ; } 2>&1 | tr '\n' ' ')
    echo "$(basename $g) $r repairs=$v: $out"
  done; done
done
