#!/bin/bash
# the rows that the last two fixes (759c541 approx's stage search past the limit, e0870fc checkmate's MILP build) touch, again
cd /work/wt/any14
D=/work/wt/moccasin-src/data
B=/work/wt/any14-base/.venv/bin/python
O=results/any14/overrun2.jsonl
run() { env -u PYTHONDONTWRITEBYTECODE nice -n 10 .venv/bin/python tools/bench_overrun.py --base-python $B --out $O "$@"; }
run --graphs $D/random_layered_n1000_*.json --ratios 0.8 --strategies approx --limits 10
run --graphs $D/random_layered_n500_*.json --ratios 0.8 --strategies checkmate --limits 120
