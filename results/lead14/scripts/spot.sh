#!/bin/bash
# merged lead vs main e819bd9 on four published cases, checkmate 60 s, one process at a time (main, then lead)
D=/work/wt/moccasin-src/data
for g in "VGG19 (MLSys)_256_(224, 224, 3)_train_nx.json" "segnet (MLSys)_32_(416, 608, 3)_train_nx.json" "MobileNet (MLSys)_512_(224, 224, 3)_train_nx.json" random_layered_n100_w0.27_nlv0.75_ed0.2_scd0.14.json; do
  for who in main lead; do
    if [ $who = main ]; then PY=/work/main/.venv/bin/python; else PY=/work/wt/lead/.venv/bin/python; fi
    /usr/bin/time -f "%e" -o t.txt env -u PYTHONDONTWRITEBYTECODE $PY -m remc.cli solve "$D/$g" --budget 0.8x --strategy checkmate --time-limit 60 --json > out.json 2> err.txt
    python3 -c "
import json,sys
d=json.load(open('out.json')); w=open('t.txt').read().split()[-1]
print(json.dumps({'graph': sys.argv[1][:40], 'who': sys.argv[2], 'status': d['status'], 'overhead_pct': round(100*(d['overhead']-1),4), 'gap': d.get('gap'), 'wall': float(w), 'load': __import__('os').getloadavg()[0]}))" "$g" $who | tee -a spot.jsonl
  done
done
