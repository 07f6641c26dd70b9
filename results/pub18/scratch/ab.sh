#!/bin/bash
# A/B walls of `remc solve` (base worktree vs branch), alternating, N reps:  ab.sh N NAME:BUDGET...
N=$1; shift; D=/work/wt/moccasin-src/data; mkdir -p /tmp/pub18/run; cd /tmp/pub18/run
for G in "$@"; do n=${G%%:*}; b=${G##*:}; f="$(ls $D/$n*train_nx.json 2>/dev/null || ls $D/$n*.json)"
  for i in $(seq $N); do for side in base branch; do
    [ $side = base ] && P=/work/wt/pub18-base/.venv/bin/python || P=/work/wt/pub18/.venv/bin/python
    s=$( { /usr/bin/time -f "%e %U %S" env -u PYTHONDONTWRITEBYTECODE nice -n 10 $P -m remc.cli solve "$f" --budget $b --strategy checkmate --time-limit 60 --json > /tmp/pub18/run/o.json; } 2>&1 | tail -1)
    echo "$n $b $side wall/user/sys $s $(python3 -c "import json; r=json.load(open('/tmp/pub18/run/o.json')); print(r['status'], r['cost'], round(r['seconds'],3))")"
  done; done; done
