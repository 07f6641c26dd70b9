#!/bin/bash
# main (git archive of /work/main's HEAD under /tmp/bound18/old_<main>, run with this venv through PYTHONPATH) and the
# branch side by side, both at once, each case in its own process: checkmate, 1 thread, nice -n 10: ResNet50 and GPT-2
# at ONNX-node granularity (paper size) at 300 s, then a random layered DAG of 1000 units (tools/layered.py, seed 1)
# at 120 s (not with NO_LAYERED set); 0.8 and 0.9 (RATIOS). The load every 30 s into results/bound18/load_${TAG}.txt. TAG (default ab).
OUT=/work/wt/bound18/results/bound18
TAG=${TAG:-ab}
MAIN=${MAIN:-/tmp/bound18/old_29929ca}
PY=/work/wt/bound18/.venv/bin/python
cd /tmp/bound18/run   # no remc/ here
(while true; do echo "$(date -u +%H:%M:%S) $(cut -d' ' -f1-3 /proc/loadavg)" >> $OUT/load_${TAG}.txt; sleep 30; done) & L=$!
side() {  # $1: tools folder, $2: main|branch, $3: PYTHONPATH
  env -u PYTHONDONTWRITEBYTECODE PYTHONPATH=$3 nice -n 10 $PY $1/bench_scale.py --out $OUT/${TAG}_$2.jsonl --zoo ${ZOO:-resnet50,gpt2} --sizes "" --ratios ${RATIOS:-0.8,0.9} --strategies checkmate --time-limit 300 --threads 1
  [ -n "$NO_LAYERED" ] || env -u PYTHONDONTWRITEBYTECODE PYTHONPATH=$3 nice -n 10 $PY $1/bench_scale.py --out $OUT/${TAG}_$2.jsonl --sizes ${SIZES:-1000} --ratios ${RATIOS:-0.8,0.9} --strategies checkmate --time-limit 120 --threads 1
}
side $MAIN/x/tools main $MAIN/pkg & p1=$!
side /work/wt/bound18/tools branch "" & p2=$!
wait $p1 $p2
kill $L
