#!/bin/bash
# main (67d4873, /work/wt/any17-base and its venv) and this branch side by side (each case by both at the same moment),
# remc solve as a user runs it (tools/bench_overrun.py); the load printed before each part. PART: main | seeds
cd /work/wt/any17
G=/work/wt/any17/results/gap13/graphs
O=results/any17/overrun_$1.jsonl
B="--base-python /work/wt/any17-base/.venv/bin/python --out $O"
run() { echo "== $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg) $*"; env -u PYTHONDONTWRITEBYTECODE nice -n 10 .venv/bin/python tools/bench_overrun.py $B "$@"; }
case $1 in
main)
  run --graphs $G/layered_n250_s11.json --ratios 0.9,0.8 --strategies checkmate,approx --limits 120
  run --graphs $G/layered_n500_s21.json --ratios 0.8 --strategies checkmate,approx --limits 120 ;;
all)
  $0 main; $0 seeds ;;
seeds)
  run --graphs $G/layered_n500_s22.json --ratios 0.8 --strategies checkmate,approx --limits 120
  run --layered 250:31 --work /tmp/any17/layered --ratios 0.8 --strategies checkmate,approx --limits 120 ;;
esac
echo "== $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg) done"
