#!/bin/bash
# main 604ceb1 (/work/wt/any16-base, its venv) and this branch side by side (each case by both at the same moment),
# remc solve as a user runs it (tools/bench_overrun.py); the load printed before each part. PART: long | short | seeds
cd /work/wt/any16
M=/work/wt/moccasin-src/data
G=/work/wt/any16/results/gap13/graphs
O=results/any16/overrun_$1.jsonl
B="--base-python /work/wt/any16-base/.venv/bin/python --out $O"
run() { echo "== $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg) $*"; env -u PYTHONDONTWRITEBYTECODE nice -n 10 .venv/bin/python tools/bench_overrun.py $B "$@"; }
case $1 in
long)
  run --graphs $G/layered_n250_s11.json --ratios 0.8,0.9 --strategies checkmate --limits 120
  run --graphs $G/layered_n500_s21.json --ratios 0.8 --strategies checkmate --limits 120 ;;
short)
  run --graphs $G/layered_n250_s11.json --ratios 0.9 --strategies checkmate,approx,cpsat --limits 20
  run --graphs $G/layered_n500_s21.json --ratios 0.8 --strategies checkmate,approx,cpsat --limits 20 ;;
seeds)
  run --layered 250:31,500:31,1000:31 --work /tmp/any16/layered --ratios 0.8,0.9 --strategies checkmate --limits 20 ;;
again)
  run --graphs $G/layered_n250_s11.json --ratios 0.9 --strategies checkmate,approx --limits 120 ;;
approx)
  run --graphs $G/layered_n250_s11.json --ratios 0.9 --strategies approx --limits 120
  run --graphs $G/layered_n500_s21.json --ratios 0.8 --strategies approx --limits 120 ;;
moc)
  run --graphs $M/random_layered_n1000_w0.31_nlv0.75_ed0.2_scd0.14.json --ratios 0.8 --strategies checkmate --limits 120 ;;
esac
echo "== $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg) done"
# (second run of s11 at 0.9, 05:01 UTC: `run_overrun.sh again`)
