#!/bin/bash
# lead and the branch side by side, both at once, each from a `git archive` snapshot (under /tmp/bound19b/old_<sha>, run
# with the branch's venv through PYTHONPATH), each case in its own process: checkmate, 1 thread, nice -n 10, ResNet50
# and GPT-2 at ONNX-node granularity (paper size), 300 s, ratios 0.8,0.9. The load every 30 s into
# results/bound19b/load_${TAG}.txt. (results/bound19/scripts/run_ab.sh with other paths.)
OUT=/work/wt/bound19b/results/bound19b
TAG=${TAG:-ab}
MAIN=${MAIN:-/tmp/bound19b/old_e94c7cf}
BRANCH=${BRANCH:-/tmp/bound19b/old_cdc7ea0}
PY=/work/wt/bound19b/.venv/bin/python
mkdir -p /tmp/bound19b/run && cd /tmp/bound19b/run   # no remc/ here
(while true; do echo "$(date -u +%H:%M:%S) $(cut -d' ' -f1-3 /proc/loadavg)" >> $OUT/load_${TAG}.txt; sleep 30; done) & L=$!
side() {  # $1: snapshot, $2: main|branch
  env -u PYTHONDONTWRITEBYTECODE PYTHONPATH=$1/pkg nice -n 10 $PY $1/x/tools/bench_scale.py --out $OUT/${TAG}_$2.jsonl --zoo ${ZOO:-resnet50,gpt2} --sizes "" --ratios ${RATIOS:-0.8,0.9} --strategies checkmate --time-limit 300 --threads 1
}
side $MAIN main & p1=$!
side $BRANCH branch & p2=$!
wait $p1 $p2
kill $L
