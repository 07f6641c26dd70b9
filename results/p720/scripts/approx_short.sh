#!/bin/bash
# approx alone with a short limit (the solve a loaded 30 s compile leaves), main (/work/wt/p720-base) and this branch
# alternating, nice -n 10, on the DAGs tools/bench_scale.py builds (pickled in /tmp/p720), budget 0.82 x checkpoint-all.
# -> results/p720/approx_short.txt
OUT=/work/wt/p720/results/p720/approx_short.txt
cd /tmp/p720/tr
for m in gpt2 resnet50; do for t in 5 8.5; do for side in main branch; do
  [ $side = main ] && W=/work/wt/p720-base || W=/work/wt/p720
  echo "== $side $m limit $t s, load $(cut -d' ' -f1 /proc/loadavg)" >> $OUT
  env -u PYTHONDONTWRITEBYTECODE nice -n 10 /usr/bin/time -f "wall %e s" $W/.venv/bin/python /work/wt/p720/results/p720/scratch/trace_approx.py /tmp/p720/$m.pkl 0.82 $t >> $OUT 2>&1
done; done; done
