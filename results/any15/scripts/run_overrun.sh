#!/bin/bash
# main 8d886bf (/work/wt/any15-base, its venv) and this branch side by side (each case by both at the same moment),
# remc solve as a user runs it (tools/bench_overrun.py); the load printed before and after each part.
cd /work/wt/any15
M=/work/wt/moccasin-src/data
G=/work/wt/any15/results/gap13/graphs
O=results/any15/overrun.jsonl
B="--base-python /work/wt/any15-base/.venv/bin/python --out $O"
run() { echo "== $(date -u +%H:%M:%S) $(cut -d' ' -f1-3 /proc/loadavg) $*"; env -u PYTHONDONTWRITEBYTECODE nice -n 10 .venv/bin/python tools/bench_overrun.py $B "$@"; }
run --graphs $G/layered_n250_s12.json --ratios 0.8,0.9 --strategies checkmate --limits 10         # (b)
run --graphs $M/random_layered_n1000_w0.31_nlv0.75_ed0.2_scd0.14.json --ratios 0.8 --strategies cpsat,approx --limits 10,20   # (c), (d)
run --graphs $M/random_layered_n1000_w0.31_nlv0.75_ed0.2_scd0.14.json --ratios 0.8 --strategies checkmate --limits 120     # sched14's gain kept?
run --graphs $G/layered_n250_s11.json --ratios 0.8,0.9 --strategies checkmate --limits 120         # (e)
run --graphs $G/layered_n500_s21.json --ratios 0.8 --strategies checkmate --limits 120             # (e)
echo "== $(date -u +%H:%M:%S) $(cut -d' ' -f1-3 /proc/loadavg) done"
