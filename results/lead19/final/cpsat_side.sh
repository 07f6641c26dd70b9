# cpsat on the zoo's mobilenet at 2MiB, 30 s: session 18's main (da9144a) and this main (ef03338) at the same moment,
# each with its own copy of the same warm caches
source /tmp/demo19/.venv/bin/activate
cd /tmp/strat19
( HOME=/tmp/demohome19b PYTHONPATH=/tmp/base18 python -m remc.cli compile m.onnx --budget 2MiB --time-limit 30 -o b_$1.onnx --strategy $1 --json > b_$1.json 2>b_$1.err ) &
( HOME=/tmp/demohome19 python -m remc.cli compile m.onnx --budget 2MiB --time-limit 30 -o n_$1.onnx --strategy $1 --json > n_$1.json 2>n_$1.err ) &
wait
for w in b n; do python3 -c "
import json; d=json.load(open('${w}_$1.json')); print('$w', d['strategy'], d['status'], round(d['overhead'],4), 'gap', round(d['gap'],4), 'rounds', d['fit_rounds'], d.get('rule'), d['time_text'][:200])"; done
