#!/bin/bash
# As run_ab.sh, on tools/layered.py's random layered DAG of 1000 units (seed 1), checkmate 120 s (item 2's limit).
OUT=/work/wt/bound19/results/bound19
TAG=${TAG:-lay}
MAIN=${MAIN:-/tmp/bound19/old_da9144a}
BRANCH=${BRANCH:-/tmp/bound19/old_99cd283}
PY=/work/wt/bound19/.venv/bin/python
cd /tmp/bound19/run   # no remc/ here
(while true; do echo "$(date -u +%H:%M:%S) $(cut -d' ' -f1-3 /proc/loadavg)" >> $OUT/load_${TAG}.txt; sleep 30; done) & L=$!
side() {  # $1: snapshot, $2: main|branch
  env -u PYTHONDONTWRITEBYTECODE PYTHONPATH=$1/pkg nice -n 10 $PY $1/x/tools/bench_scale.py --out $OUT/${TAG}_$2.jsonl --sizes ${SIZES:-1000} --ratios ${RATIOS:-0.8,0.9} --strategies checkmate --time-limit 120 --threads 1
}
side $MAIN main & p1=$!
side $BRANCH branch & p2=$!
wait $p1 $p2
kill $L
