#!/bin/bash
# The Lagrangian beside the windowed covering MILP (depth 1, windows of at most 12k columns, 1 thread, nice -n 10):
# two streams at once; random layered 90 s for the windows, the zoo at ONNX-node granularity 150 s.
cd /work/wt/bound14
OUT=results/bound14/wbound.jsonl
M=/work/wt/moccasin-src/data
G=results/gap13/graphs
PY=.venv/bin/python
S=results/bound14/scripts/wbound.py
(for c in "$M/random_layered_n500_w0.36_nlv0.75_ed0.2_scd0.14.json 90" "$M/random_layered_n1000_w0.31_nlv0.75_ed0.2_scd0.14.json 90" "resnet50 150"; do
   set -- $c; for r in 0.9 0.8; do nice -n 10 $PY $S $1 $r $2 --out $OUT; done; done) &
(for c in "$G/layered_n500_s21.json 90" "$G/layered_n1000_s21.json 90" "gpt2 150"; do
   set -- $c; for r in 0.9 0.8; do nice -n 10 $PY $S $1 $r $2 --out $OUT; done; done) &
wait
