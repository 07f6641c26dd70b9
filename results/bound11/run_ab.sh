#!/bin/bash
# before (main e2f6057, its own venv in a worktree at /tmp/bnd/base) and after (branch `bound`), started
# together, each case in its own process, 1 solver thread, 120 s, nice 10, on the shared 2 cores
cd /work/wt/bound
B=/tmp/bnd/base/.venv/bin/python
A=.venv/bin/python
O=results/bound11
for who in before after; do
  (if [ $who = before ]; then P=$B; else P=$A; fi
   run() { nice -n 10 $P tools/bench_scale.py --out $O/ab_$who.jsonl --time-limit 120 --threads 1 "$@"; }
   run --sizes 1000 --seed 3 --ratios 0.8 --strategies approx
   run --sizes 250 --seed 2 --ratios 0.8 --strategies approx
   run --sizes "" --zoo gpt2 --ratios 0.8 --strategies approx
   run --sizes 1000 --seed 3 --ratios 0.8 --strategies checkmate
   run --sizes 250 --seed 2 --ratios 0.8 --strategies checkmate
   run --sizes 1000 --seed 2 --ratios 0.8 --strategies approx
   if [ $who = after ]; then run --sizes 500 --seed 2 --ratios 0.8 --strategies approx --variants "window=false";
   else run --sizes 500 --seed 2 --ratios 0.8 --strategies approx; fi
  ) > $O/ab_$who.log 2>&1 &
done
wait
