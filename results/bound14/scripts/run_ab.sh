#!/bin/bash
# main e819bd9 (/work/wt/bound14-base, its venv) and the branch side by side: each case by both at once, each in its
# own process, 1 solver thread, nice -n 10. Random layered: checkmate 120 s (where.py: the solve's wall, max RSS of
# the process or its HiGHS child); zoo at ONNX-node granularity: checkmate 300 s (tools/bench_scale.py), the zoo
# pair running at the same time as the random pairs.
cd /work/wt/bound14
OUT=results/bound14
M=/work/wt/moccasin-src/data
G=results/gap13/graphs
BASE=/work/wt/bound14-base/.venv/bin/python
NEW=/work/wt/bound14/.venv/bin/python
W=results/bound14/scripts/where.py
if [ "$1" != "random" ]; then
  (cd /tmp && nice -n 10 $BASE /work/wt/bound14-base/tools/bench_scale.py --out /work/wt/bound14/$OUT/ab_zoo_base.jsonl --zoo resnet50,gpt2 --sizes "" --ratios 0.9,0.8 --strategies checkmate --time-limit 300 --threads 1) &
  (cd /tmp && nice -n 10 $NEW /work/wt/bound14/tools/bench_scale.py --out /work/wt/bound14/$OUT/ab_zoo_branch.jsonl --zoo resnet50,gpt2 --sizes "" --ratios 0.9,0.8 --strategies checkmate --time-limit 300 --threads 1) &
fi
if [ "$1" != "zoo" ]; then
for g in $M/random_layered_n250_w0.43_nlv0.75_ed0.2_scd0.14.json $M/random_layered_n500_w0.36_nlv0.75_ed0.2_scd0.14.json \
         $M/random_layered_n1000_w0.31_nlv0.75_ed0.2_scd0.14.json $G/layered_n500_s21.json $G/layered_n1000_s21.json; do
  for r in 0.9 0.8; do
    nice -n 10 $BASE $W $g $r checkmate 120 --out $OUT/ab_base.jsonl & p1=$!
    nice -n 10 $NEW $W $g $r checkmate 120 --out $OUT/ab_branch.jsonl & p2=$!
    wait $p1 $p2
  done
done
fi
wait
