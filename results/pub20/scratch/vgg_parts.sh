# CPU seconds (user+sys) of the parts of `remc solve` on VGG16 (Moccasin's budgets at 0.8 and 0.9), from /tmp/pub20/run
P=/work/wt/pub20/.venv/bin/python; G="/work/wt/moccasin-src/data/VGG16 (MLSys)_256_(224, 224, 3)_train_nx.json"
for i in 1 2 3; do
  for c in "pass" "import numpy" "import remc.cli" "import remc.cli, remc.backends.strategies, highspy"; do
    /usr/bin/time -f "%U+%S cpu %e wall  python -c '$c'" env -u PYTHONDONTWRITEBYTECODE nice -n 10 $P -c "$c"; done
  for b in 12660087194 14242598093; do
    /usr/bin/time -o /tmp/pub20/t1 -f "%U+%S cpu %e wall  remc solve VGG16 --budget $b" env -u PYTHONDONTWRITEBYTECODE nice -n 10 $P -m remc.cli solve "$G" --budget $b --strategy checkmate --time-limit 300 --json 2>/dev/null | $P -c "import json,sys; t=sys.stdin.read(); print(json.loads(t)['status'] if t else 'error (infeasible)', end='  ')"; cat /tmp/pub20/t1
  done
done
