source /tmp/demo19/.venv/bin/activate
cd /tmp/strat19
remc zoo export mobilenet --batch 4 --train --size small -o m.onnx
for s in checkmate approx cpsat; do
  echo "== $s"
  remc compile m.onnx --budget 2MiB --time-limit 30 -o m_$s.onnx --plan m_$s.plan --strategy $s 2>&1 | grep -a -E "^(checkmate|approx|cpsat):|^on ONNX|remc: error" | cut -c1-220
  remc run m_$s.onnx --mem-limit 2MiB --compare m.onnx 2>&1 | grep -a -E "memory: measured|outputs match|error" | cut -c1-220
done
