#!/bin/bash
# main (29929ca, /work/wt/any18-base and its venv) and this branch side by side (each case by both at the same moment),
# remc solve as a user runs it (tools/bench_overrun.py); the load printed before each part. run_overrun.sh PART
cd /work/wt/any18
G=/work/wt/any18/results/gap13/graphs
M=/work/wt/moccasin-src/data
O=results/any18/overrun_$1.jsonl
B="--base-python /work/wt/any18-base/.venv/bin/python --out $O"
run() { echo "== $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg) $*"; env -u PYTHONDONTWRITEBYTECODE nice -n 10 .venv/bin/python tools/bench_overrun.py $B "$@"; }
case $1 in
own)
  run --graphs $G/layered_n250_s11.json --ratios 0.9,0.8 --strategies checkmate,approx --limits 120
  run --graphs $G/layered_n500_s21.json $G/layered_n500_s22.json --ratios 0.8 --strategies checkmate,approx --limits 120 ;;
own2)
  run --graphs $G/layered_n250_s11.json --ratios 0.9 --strategies checkmate,approx --limits 120
  run --graphs $G/layered_n500_s21.json --ratios 0.8 --strategies approx --limits 120 ;;
race)
  run --graphs results/s12b/bench_moccasin_graphs/random_layered_n140_w0.3_nlv0.75_ed0.2_scd0.14_seed12.json --ratios 0.8 --strategies checkmate,approx --limits 120 ;;
final)
  run --graphs results/s12b/bench_moccasin_graphs/random_layered_n140_w0.3_nlv0.75_ed0.2_scd0.14_seed12.json --ratios 0.8 --strategies checkmate --limits 120
  run --graphs $G/layered_n250_s11.json --ratios 0.9 --strategies checkmate,approx --limits 120 ;;
moc)
  run --graphs $M/random_layered_n250_*.json $M/random_layered_n500_*.json $M/random_layered_n1000_*.json --ratios 0.8,0.9 --strategies checkmate,approx --limits 60 ;;
esac
echo "== $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg) done"
