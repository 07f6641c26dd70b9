#!/bin/bash
# main e819bd9 (/work/wt/sched14-base, its venv) and the branch side by side: each case by both at once, each in its
# own process, 1 solver thread, nice -n 10, checkmate through results/gap13/scripts/where.py (this run used a copy of it, byte for byte the same) (the solve's wall; max RSS of the process or
# its HiGHS child). Stream "long": 120 s; stream "short": 10 s on every graph, then the published VGG19/segnet/
# MobileNet at 0.8 with 60 s (remc solve --strategy checkmate --time-limit 60 --json).
cd /tmp/sched14/run || exit 1
W=/work/wt/sched14
OUT=$W/results/sched14
M=/work/wt/moccasin-src/data
G=$W/results/gap13/graphs
BASE=/work/wt/sched14-base/.venv/bin/python
NEW=$W/.venv/bin/python
MOC="$M/random_layered_n250_w0.43_nlv0.75_ed0.2_scd0.14.json $M/random_layered_n500_w0.36_nlv0.75_ed0.2_scd0.14.json $M/random_layered_n1000_w0.31_nlv0.75_ed0.2_scd0.14.json"
OWN1="$G/layered_n250_s11.json $G/layered_n500_s21.json $G/layered_n1000_s21.json"
OWN2="$G/layered_n250_s12.json $G/layered_n500_s22.json $G/layered_n1000_s22.json"
pair() {  # graph ratio seconds tag
  env -u PYTHONDONTWRITEBYTECODE nice -n 10 $BASE $W/results/gap13/scripts/where.py $1 $2 checkmate $3 --out $OUT/ab_$4_base.jsonl &
  env -u PYTHONDONTWRITEBYTECODE nice -n 10 $NEW $W/results/gap13/scripts/where.py $1 $2 checkmate $3 --out $OUT/ab_$4_branch.jsonl &
  wait
}
if [ "$1" = long ]; then
  for g in $MOC $OWN1; do for r in 0.8 0.9; do pair $g $r 120 120; done; done
elif [ "$1" = short ]; then
  for g in $MOC $OWN1 $OWN2; do for r in 0.8 0.9; do pair $g $r 10 10; done; done
  for g in "$M/VGG19 (MLSys)_256_(224, 224, 3)_train_nx.json" "$M/segnet (MLSys)_32_(416, 608, 3)_train_nx.json" "$M/MobileNet (MLSys)_512_(224, 224, 3)_train_nx.json"; do
    env -u PYTHONDONTWRITEBYTECODE nice -n 10 $BASE -m remc.cli solve "$g" --budget 0.8x --strategy checkmate --time-limit 60 --threads 1 --json > /tmp/sched14/pub_base.json 2>&1 &
    env -u PYTHONDONTWRITEBYTECODE nice -n 10 $NEW -m remc.cli solve "$g" --budget 0.8x --strategy checkmate --time-limit 60 --threads 1 --json > /tmp/sched14/pub_branch.json 2>&1 &
    wait
    for s in base branch; do python3 -c "import json,sys; d=json.load(open('/tmp/sched14/pub_$s.json')); print(json.dumps(dict(graph=sys.argv[1], side=sys.argv[2], **{k: d.get(k) for k in ('status','cost','bound','gap','seconds','solve_seconds')})))" "$(basename "$g")" $s >> $OUT/pub60.jsonl 2>>$OUT/pub60.err || head -c 600 /tmp/sched14/pub_$s.json >> $OUT/pub60.err; done
  done
fi
