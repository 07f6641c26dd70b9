#!/bin/bash
# main 8d886bf (detached worktree /work/wt/any15-base, its venv) and this branch, started together, same cases
# usage: run_portfolio.sh LIMIT N [SUFFIX]
L=$1; N=$2; X=${3:-}
cd /work/wt/any15
env -u PYTHONDONTWRITEBYTECODE nice -n 10 /work/wt/any15-base/.venv/bin/python /work/wt/any15-base/tools/bench_portfolio.py --random $N --max-n 50 --seed 12 \
  --time-limit $L --threads 1 --label "random (seed 12), main 8d886bf" --out results/any15/portfolio_${N}_${L}s_main$X.json \
  > results/any15/portfolio_${N}_${L}s_main$X.log 2>&1 &
env -u PYTHONDONTWRITEBYTECODE nice -n 10 .venv/bin/python tools/bench_portfolio.py --random $N --max-n 50 --seed 12 \
  --time-limit $L --threads 1 --label "random (seed 12), branch any15" --out results/any15/portfolio_${N}_${L}s_branch$X.json \
  > results/any15/portfolio_${N}_${L}s_branch$X.log 2>&1 &
wait
