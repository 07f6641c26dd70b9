# proof.py variants over graphs (GRAPHS, RATIOS, REPS in the environment), from /tmp/pub21/run
P=${P:-/work/wt/pub21/.venv/bin/python}; S=/work/wt/pub21/results/pub21/scratch
for r in $RATIOS; do for g in $GRAPHS; do
  env -u PYTHONDONTWRITEBYTECODE setsid nice -n 10 $P $S/proof.py $g $r $REPS "$@" 2>&1 | grep -v Warn
done; done
