#!/bin/bash
# ab.sh N "graph:ratio" ... : alternate the three checkouts, report wall, cpu(user+sys), status, solve seconds
N=$1; shift
D=/work/wt/moccasin-src/data
cd /tmp/pub15/run
for c in "$@"; do g=${c%:*}; r=${c##*:}
  B=$(/work/wt/pub15/.venv/bin/python -c "
import math,sys; from remc.ir.nodelink import load_nodelink; from remc.ir.schedule import checkpoint_all
d=load_nodelink(sys.argv[1]); print(math.ceil(checkpoint_all(d).peak(d)*float(sys.argv[2])))" "$D/$g" $r)
  for i in $(seq $N); do for w in ${WT:-pub15-s13 pub15-base pub15}; do
    /usr/bin/time -f "%e %U %S" -o /tmp/pub15/t.txt env -u PYTHONDONTWRITEBYTECODE nice -n 10 /work/wt/$w/.venv/bin/python -m remc.cli solve "$D/$g" --budget $B --strategy checkmate --time-limit 60 --json > /tmp/pub15/o.json 2>/dev/null
    read e u s < /tmp/pub15/t.txt
    st=$(python3 -c "import json; r=json.load(open('/tmp/pub15/o.json')); print(r['status'], round(r['seconds'],2))" 2>/dev/null || echo fail)
    printf "%-28s %s %-10s wall %5s cpu %5.2f  %s  load %s\n" "${g:0:28}" $r $w $e $(echo "$u + $s" | bc) "$st" "$(cut -d' ' -f1 /proc/loadavg)"
  done; done
done
