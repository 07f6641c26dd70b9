#!/bin/bash
# layered n=1000 seed 3 at 0.8, approx 120 s: main (e2f6057) and the branch's final code, started together
cd /work/wt/bound
O=results/bound11
for who in before after; do
  if [ $who = before ]; then P=/tmp/bnd/base/.venv/bin/python; else P=.venv/bin/python; fi
  nice -n 10 $P tools/bench_scale.py --out $O/n1000_s3_$who.jsonl --sizes 1000 --seed 3 --ratios 0.8 --strategies approx --time-limit 120 --threads 1 > $O/n1000_s3_$who.log 2>&1 &
done
wait
