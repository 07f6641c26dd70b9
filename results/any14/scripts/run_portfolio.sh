#!/bin/bash
# main e819bd9 (detached worktree /work/wt/any14-base, its venv) and this branch, started together, same cases
# usage: run_portfolio.sh LIMIT N [SUFFIX]
L=$1; N=$2; X=${3:-}
cd /work/wt/any14
env -u PYTHONDONTWRITEBYTECODE nice -n 10 /work/wt/any14-base/.venv/bin/python /work/wt/any14-base/tools/bench_portfolio.py --random $N --max-n 50 --seed 12 \
  --time-limit $L --threads 1 --label "random (seed 12), main e819bd9" --out results/any14/portfolio_${N}_${L}s_main$X.json \
  > results/any14/portfolio_${N}_${L}s_main$X.log 2>&1 &
env -u PYTHONDONTWRITEBYTECODE nice -n 10 .venv/bin/python tools/bench_portfolio.py --random $N --max-n 50 --seed 12 \
  --time-limit $L --threads 1 --label "random (seed 12), branch any14" --out results/any14/portfolio_${N}_${L}s_branch$X.json \
  > results/any14/portfolio_${N}_${L}s_branch$X.log 2>&1 &
wait
