#!/bin/bash
# main b60afd3 (frozen worktree /work/wt/any13-base, its venv) and this branch, started together, same cases
# usage: run_portfolio.sh LIMIT N
L=$1; N=$2
cd /work/wt/any13
nice -n 10 /work/wt/any13-base/.venv/bin/python /work/wt/any13-base/tools/bench_portfolio.py --random $N --max-n 50 --seed 12 \
  --time-limit $L --threads 1 --label "random (seed 12), main b60afd3" --out results/any13/portfolio_${N}_${L}s_main.json \
  > results/any13/portfolio_${N}_${L}s_main.log 2>&1 &
nice -n 10 .venv/bin/python tools/bench_portfolio.py --random $N --max-n 50 --seed 12 \
  --time-limit $L --threads 1 --label "random (seed 12), branch any13" --out results/any13/portfolio_${N}_${L}s_branch.json \
  > results/any13/portfolio_${N}_${L}s_branch.log 2>&1 &
wait
