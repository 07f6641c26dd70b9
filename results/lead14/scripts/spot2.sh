#!/bin/bash
# the lead alone on segnet and MobileNet at 0.8 (checkmate 60 s), after the grace wait
D=/work/wt/moccasin-src/data
for g in "segnet (MLSys)_32_(416, 608, 3)_train_nx.json" "MobileNet (MLSys)_512_(224, 224, 3)_train_nx.json" "ResNet50 (MLSys)_256_(224, 224, 3)_train_nx.json"; do
  for r in 0.8 0.9; do
    /usr/bin/time -f "%e" -o t.txt env -u PYTHONDONTWRITEBYTECODE /work/wt/lead/.venv/bin/python -m remc.cli solve "$D/$g" --budget ${r}x --strategy checkmate --time-limit 60 --json > out.json 2> err.txt
    python3 -c "
import json,sys
d=json.load(open('out.json')); w=open('t.txt').read().split()[-1]
print(json.dumps({'graph': sys.argv[1][:30], 'ratio': sys.argv[2], 'status': d['status'], 'overhead_pct': round(100*(d['overhead']-1),4), 'gap': d.get('gap'), 'wall': float(w), 'load': __import__('os').getloadavg()[0]}))" "$g" $r | tee -a spot2.jsonl
  done
done
