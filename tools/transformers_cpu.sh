#!/bin/bash
# Transformers at real size trained under a cap on CPU (issue #13 item 5, branch t13): for each step graph
# and budget, remc train (compile with each strategy, 2 steps under a cap of the budget) and remc run (one
# step under the cap) of the compiled step, then the unmodified step under the same cap and without one.
# Usage: tools/transformers_cpu.sh TAG STEP.onnx BUDGET_BYTES   (writes TAG_*.json/.txt/.log in the cwd)
set -u
tag=$1; step=$2; B=$3; L=tr_$tag.log
T="/usr/bin/time -f %e_s_%M_KB"
echo "== $(date +%H:%M:%S) budget $B" >> "$L"
for s in lin-greedy approx checkmate; do
  echo "== $(date +%H:%M:%S) train $s" >> "$L"
  $T nice -n 10 remc train "$step" --steps 2 --budget "$B" --strategy $s --time-limit 60 --json -o "${tag}_$s.onnx" \
    > "train_${tag}_$s.json" 2>> "$L"; echo "rc $?" >> "$L"
  if [ -f "${tag}_$s.onnx" ]; then
    echo "== $(date +%H:%M:%S) run $s" >> "$L"
    $T nice -n 10 remc run "${tag}_$s.onnx" --mem-limit "$B" --iters 1 --json > "run_${tag}_$s.json" 2>> "$L"; echo "rc $?" >> "$L"
  fi
done
echo "== $(date +%H:%M:%S) unmodified under the cap (train)" >> "$L"
$T nice -n 10 remc train "$step" --steps 2 --mem-limit "$B" --json > "unmod_${tag}_cap.json" 2>> "$L"; echo "rc $?" >> "$L"
echo "== $(date +%H:%M:%S) unmodified under the cap (run)" >> "$L"
$T nice -n 10 remc run "$step" --mem-limit "$B" --iters 1 > "unmod_${tag}_run_cap.txt" 2>> "$L"; echo "rc $?" >> "$L"
echo "== $(date +%H:%M:%S) unmodified, no cap" >> "$L"
$T nice -n 10 remc train "$step" --steps 2 --json > "unmod_${tag}.json" 2>> "$L"; echo "rc $?" >> "$L"
echo "== $(date +%H:%M:%S) done" >> "$L"
