#!/bin/bash
# torchvision models as a user compiles them: export (results/lead16/scripts/tv_export.py NAME 8 96 with a torch
# venv), `remc grad NAME.onnx --loss cross-entropy -o NAME_train.onnx`, then for each strategy a compile under a
# pseudo-terminal at --time-limit 60 and `remc run` of the plan under a cap of its budget with --compare.
#   BUDGET=0.7x bash tv_batch.sh shufflenet_v2_x0_5 squeezenet1_0 mnasnet0_5
for m in "$@"; do for s in approx checkmate; do
  script -qec "remc compile ${m}_train.onnx --budget ${BUDGET:-0.7x} -o ${m}_$s.onnx --plan ${m}_$s.plan --strategy $s --time-limit ${LIMIT:-60}" ${m}_$s.log >/dev/null 2>&1
  echo "$m $s compile rc=$?"
  tr '\r' '\n' < ${m}_$s.log | sed 's/\x1b\[[0-9;?]*[A-Za-z]//g' | grep -a -E "^($s:|remc: error|Traceback|note: kernel|time:)" | cut -c1-250
  if [ -f ${m}_$s.onnx ]; then
    remc run ${m}_$s.onnx --plan ${m}_$s.plan --compare ${m}_train.onnx > ${m}_$s.run 2>&1; echo "run rc=$?"
    grep -E 'memory: measured|error|outputs match' ${m}_$s.run | cut -c1-200
  fi
done; done
