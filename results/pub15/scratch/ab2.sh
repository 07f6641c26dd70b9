#!/bin/bash
# ab2.sh N "graph:ratio" -- SET1 ; SET2 ... (sets separated by ';' in $SETS)
N=$1; shift
D=/work/wt/moccasin-src/data
cd /tmp/pub15/run
IFS=';' read -ra SL <<< "$SETS"
for c in "$@"; do g=${c%:*}; r=${c##*:}
  for i in $(seq $N); do for set in "${SL[@]}"; do
    SET="$set" /usr/bin/time -f "%e %U %S" -o /tmp/pub15/t2.txt env -u PYTHONDONTWRITEBYTECODE nice -n 10 /work/wt/pub15/.venv/bin/python /work/wt/pub15/results/pub15/scratch/prof.py "$D/$g" $r > /tmp/pub15/o2.txt 2>&1
    read e u s < /tmp/pub15/t2.txt
    st=$(grep 'done:' /tmp/pub15/o2.txt | sed 's/.*done: //')
    cov=$(grep -o 'cover beside thread end.*' /tmp/pub15/o2.txt | cut -c25-80)
    printf "%-12s %s %-28s wall %5s cpu %5.2f  %s | %s\n" "${g:0:12}" $r "[$set]" $e $(echo "$u + $s" | bc) "$st" "$cov"
  done; done
done
