# checkmate end to end in one process (results/pub19/scratch/phases.py: CPU seconds of each phase), cpsat constants
# set per run (PUB19_SET), alternating: e2e.sh GRAPH RATIO REPS SET...   ('-' = none)
P=/work/wt/pub21/.venv/bin/python; G=$1; R=$2; N=$3; shift 3
for k in $(seq $N); do for s in "$@"; do
  echo "== $s"; [ "$s" = "-" ] && s=""
  PUB19_SET="$s" env -u PYTHONDONTWRITEBYTECODE setsid nice -n 10 $P /work/wt/pub21/results/pub21/scratch/phases.py $G $R ${TL:-300} 2>&1 | grep -E "cpu (checkmate|.*_stage_hint|.*solve_cpsat|.*cpsat_phase)"
done; done
