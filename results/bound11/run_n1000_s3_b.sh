#!/bin/bash
# layered n=1000 seed 3 at 0.8, approx and checkmate 120 s: main (e2f6057, /work/main/.venv) and the branch's
# final code, started together (second run, after the others)
cd /work/wt/bound
O=results/bound11
for who in before after; do
  if [ $who = before ]; then P=/work/main/.venv/bin/python; else P=.venv/bin/python; fi
  nice -n 10 $P tools/bench_scale.py --out $O/n1000_s3_b_$who.jsonl --sizes 1000 --seed 3 --ratios 0.8 --strategies approx,checkmate --time-limit 120 --threads 1 > $O/n1000_s3_b_$who.log 2>&1 &
done
wait
