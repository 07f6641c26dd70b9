#!/bin/bash
# main b60afd3 (/work/wt/gap13-base, its venv) and the branch side by side: each case by both at once, each in its
# own process, 1 solver thread, nice -n 10. Random layered: checkmate 120 s (where.py: the solve's wall, max RSS of
# the process or its HiGHS child); zoo at ONNX-node granularity: checkmate 300 s (tools/bench_scale.py).
cd /work/wt/gap13
OUT=results/gap13
M=/work/wt/moccasin-src/data
G=$OUT/graphs
BASE=/work/wt/gap13-base/.venv/bin/python
NEW=/work/wt/gap13/.venv/bin/python
for g in $M/random_layered_n250_w0.43_nlv0.75_ed0.2_scd0.14.json $M/random_layered_n500_w0.36_nlv0.75_ed0.2_scd0.14.json \
         $M/random_layered_n1000_w0.31_nlv0.75_ed0.2_scd0.14.json $G/layered_n500_s21.json $G/layered_n1000_s21.json; do
  for r in 0.8 0.9; do
    nice -n 10 $BASE $OUT/scripts/where.py $g $r checkmate 120 --out $OUT/ab_base.jsonl &
    nice -n 10 $NEW $OUT/scripts/where.py $g $r checkmate 120 --out $OUT/ab_branch.jsonl &
    wait
  done
done
if [ "$1" != "random" ]; then
  nice -n 10 $BASE /work/wt/gap13-base/tools/bench_scale.py --out $OUT/ab_zoo_base.jsonl --zoo resnet50,gpt2 --sizes "" --ratios 0.9,0.8 --strategies checkmate --time-limit 300 --threads 1 &
  nice -n 10 $NEW tools/bench_scale.py --out $OUT/ab_zoo_branch.jsonl --zoo resnet50,gpt2 --sizes "" --ratios 0.9,0.8 --strategies checkmate --time-limit 300 --threads 1 &
  wait
fi
