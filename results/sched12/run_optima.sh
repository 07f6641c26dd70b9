#!/bin/bash
# Proven optima (CP-SAT, C=3) beside approx and the retention-gap bound on cut-down fine graphs (item 1 of the brief).
cd "$(dirname "$0")/../.."
. .venv/bin/activate
for case in "gpt2-L1 0.8" "resnet50-1000 0.9" "resnet50-1000 0.8" "gpt2-L2 0.9"; do
  set -- $case
  nice -n 10 python results/sched12/scripts/gap_where.py $1 $2 --approx 30 --long 300 --long-strategy cpsat \
      >> results/sched12/optima.jsonl 2>> results/sched12/optima.err
done
