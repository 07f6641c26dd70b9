# checkmate end to end in one process (phases.py: CPU seconds of each phase), main (pub21-base) and the branch
# alternating: ab.sh TL REPS RATIO GRAPH...
S=/work/wt/pub21/results/pub21/scratch; TL=$1; N=$2; R=$3; shift 3
for g in "$@"; do echo "### $(basename $g) $R"; for k in $(seq $N); do for t in pub21-base pub21; do
  echo "== $t"; env -u PYTHONDONTWRITEBYTECODE setsid nice -n 10 /work/wt/$t/.venv/bin/python $S/phases.py $g $R $TL 2>&1 | grep -E "cpu (checkmate|.*_stage_hint|.*solve_cpsat|.*cpsat_phase)"
done; done; done
