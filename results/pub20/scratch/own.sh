# own random layered graphs (gen.py, seeds 2001-2010) and Moccasin's n=100: proof.py variants, from /tmp/pub20/run
P=/work/wt/pub20/.venv/bin/python; S=/work/wt/pub20/results/pub20/scratch
for r in $RATIOS; do for g in $GRAPHS; do
  env -u PYTHONDONTWRITEBYTECODE nice -n 10 $P $S/proof.py $g $r $REPS "$@" 2>&1 | grep -v Warn
done; done
