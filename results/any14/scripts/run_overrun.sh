#!/bin/bash
# the overrun table of issue #12 item 5: main e819bd9 (--base-python) and this branch at the same moment on each case
cd /work/wt/any14
D=/work/wt/moccasin-src/data
B=/work/wt/any14-base/.venv/bin/python
O=results/any14/overrun.jsonl
run() { env -u PYTHONDONTWRITEBYTECODE nice -n 10 .venv/bin/python tools/bench_overrun.py --base-python $B --out $O "$@"; }
run --graphs $D/random_layered_n1000_*.json --ratios 0.8 --strategies approx,cpsat --limits 10
run --graphs $D/random_layered_n250_*.json --ratios 0.8,0.9 --strategies approx,checkmate,cpsat --limits 30
run --graphs $D/random_layered_n250_*.json --ratios 0.9 --strategies approx,checkmate,cpsat --limits 60
run --graphs $D/random_layered_n500_*.json --ratios 0.8 --strategies checkmate --limits 120
