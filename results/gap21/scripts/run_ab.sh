#!/bin/bash
# main (/work/wt/gap21-base, its own venv) and the branch side by side: each case by both at the same moment, each in
# its own process, `remc solve G --budget Rx --strategy checkmate --time-limit 120 --threads 1 --json`, nice -n 10,
# from a folder with no remc/ in it; /usr/bin/time's max RSS. Which side starts first alternates by case.
# TAG (default ab), GRAPHS (files under results/gap21/graphs or the published data), RATIOS.
W=/work/wt/gap21
OUT=$W/results/gap21
TAG=${TAG:-ab}
RATIOS=${RATIOS:-"0.8 0.9"}
mkdir -p /tmp/gap21/run && cd /tmp/gap21/run
(while true; do echo "$(date -u +%H:%M:%S) $(cut -d' ' -f1-3 /proc/loadavg)" >> $OUT/load_${TAG}.txt; sleep 30; done) & L=$!
one() {  # $1 side dir, $2 label, $3 graph, $4 ratio
  local f=/tmp/gap21/${TAG}_$2_$(basename $3 .json)_$4
  env -u PYTHONDONTWRITEBYTECODE nice -n 10 /usr/bin/time -f "maxrss_kb %M" $1/.venv/bin/remc solve $3 --budget ${4}x \
      --strategy checkmate --time-limit 120 --threads 1 --json > $f.json 2> $f.err
  python3 - "$f" "$2" "$3" "$4" >> $OUT/${TAG}.jsonl <<'PY'
import json, sys, re
f, side, g, r = sys.argv[1:]
try:
    d = json.load(open(f + ".json"))
except Exception as e:
    d = {"error": open(f + ".err").read()[-300:]}
m = re.findall(r"maxrss_kb (\d+)", open(f + ".err").read())
d.update(side=side, graph=g.split("/")[-1], ratio=float(r), maxrss_mib=int(m[-1]) / 1024 if m else None)
print(json.dumps(d))
PY
}
k=0
for g in $GRAPHS; do
  for r in $RATIOS; do
    if [ $((k % 2)) = 0 ]; then
      one /work/wt/gap21-base main $g $r & p1=$!; sleep 1; one $W branch $g $r & p2=$!
    else
      one $W branch $g $r & p2=$!; sleep 1; one /work/wt/gap21-base main $g $r & p1=$!
    fi
    wait $p1 $p2
    k=$((k + 1))
  done
done
kill $L
