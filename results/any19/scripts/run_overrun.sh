#!/bin/bash
# main (da9144a, /work/wt/any19-base and its venv) and this branch side by side (each case by both at the same moment),
# remc solve as a user runs it (tools/bench_overrun.py); the load printed before each part. run_overrun.sh PART
cd /work/wt/any19
G=/work/wt/any19/results/gap13/graphs
M=/work/wt/moccasin-src/data
O=results/any19/overrun_$1.jsonl
B="--base-python /work/wt/any19-base/.venv/bin/python --out $O"
run() { echo "== $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg) $*"; env -u PYTHONDONTWRITEBYTECODE nice -n 10 .venv/bin/python tools/bench_overrun.py $B "$@"; }
case $1 in
lp|lp2)
  run --graphs $G/layered_n250_s11.json --ratios 0.9 --strategies approx --limits 120
  run --graphs $M/random_layered_n250_*.json --ratios 0.8,0.9 --strategies approx --limits 60
  run --graphs results/s12b/bench_moccasin_graphs/random_layered_n140_w0.3_nlv0.75_ed0.2_scd0.14_seed12.json --ratios 0.8 --strategies approx --limits 60 ;;
s11)
  run --graphs $G/layered_n250_s11.json --ratios 0.9 --strategies approx --limits 120
  run --graphs $G/layered_n250_s11.json --ratios 0.9 --strategies approx --limits 120 ;;
esac
echo "== $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg) done"
