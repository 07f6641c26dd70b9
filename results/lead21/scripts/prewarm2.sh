#!/bin/bash
cd /tmp/lead21/tv
for m in mnasnet0_5 regnet_y_400mf googlenet mobilenet_v3_large; do
  HOME=/tmp/lead21/homeA nice -n 5 /work/wt/lead/.venv/bin/remc compile ${m}_train.onnx --budget 2x --strategy checkpoint-all --time-limit 400 -o /tmp/lead21/pw.onnx 2>&1 | grep -a -E "^time|error|note: costs" | cut -c1-200
done
rm -rf /tmp/lead21/homeB; cp -r /tmp/lead21/homeA /tmp/lead21/homeB
for spec in mnasnet0_5:0.9x:checkmate regnet_y_400mf:0.93x:checkmate googlenet:0.93x:checkmate mobilenet_v3_large:0.9x:checkmate efficientnet_b0:0.8x:approx; do IFS=: read m b s <<< "$spec"; /tmp/lead21/sbs.sh $m $b $s 1; done
