#!/bin/bash
# checkmate 60 s on own Moccasin-family graphs n=160-250 at 0.8/0.9, one after the other
cd /work/wt/gap13 && . .venv/bin/activate
for g in n160_s11 n160_s12 n200_s11 n200_s12 n250_s11 n250_s12; do for r in 0.8 0.9; do
  nice -n 10 python results/gap13/scripts/where.py results/gap13/graphs/layered_$g.json $r checkmate 60 --out results/gap13/where60.jsonl
done; done
