#!/bin/bash
# The fixed work of a compile, two checkouts alternating, warm caches (each its own HOME, warmed by one compile
# first): `remc compile --strategy checkpoint-all --budget 1.0x --time-limit 600 --json` (no solve to speak of),
# its phases from the report's time line.
#   bash overhead.sh MODEL REPEATS main=PYTHON:HOME lead=PYTHON:HOME
set -u
model=$1; reps=$2; shift 2
for r in $(seq 1 "$reps"); do
  for spec in "$@"; do
    label=${spec%%=*}; rest=${spec#*=}; py=${rest%%:*}; home=${rest#*:}
    s=$(date +%s.%N)
    HOME=$home env -u PYTHONDONTWRITEBYTECODE "$py" -m remc.cli compile "$model" --budget 1.0x \
      --strategy checkpoint-all -o /tmp/overhead_$label.onnx --time-limit 600 --json > /tmp/overhead_$label.json \
      2> /tmp/overhead_$label.err
    rc=$?; e=$(date +%s.%N)
    echo "$r $label load $(cut -d' ' -f1 /proc/loadavg) rc $rc wall $(echo "$e - $s" | bc) $(python3 -c "
import json; print(json.load(open('/tmp/overhead_$label.json'))['time_text'])" 2>/dev/null)"
  done
done
