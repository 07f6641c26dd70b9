"""``remc train --device cuda`` under cap = budget with remc's placement, as a user runs it (issue 13 item 3).

For a zoo model: export its training graph (``remc zoo export --train``), predict what its unmodified step
graph (AdamW appended) needs on CUDA with remc's placement (layout height plus the bytes outside it; the
state, data and output buffers of the trainer are in it as initializers, outputs and inputs), then for
each fraction f run

    remc train MODEL --device cuda --budget <f x need> --steps N --reference --strategy S --time-limit T

and keep what it printed (losses of both graphs step for step, measured peak under the cap, whether the
unmodified graph fits the same cap on remc's allocator and on ONNX Runtime's arena).

    tools/gpu_session.sh python3 $REPO/tools/gpu_train_placement.py --out $OUT/train.json --model resnet50 \\
        --batch 8 --size small --fractions 0.8,0.6
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--model", default="resnet50")
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--size", default="small")
    ap.add_argument("--fractions", default="0.8,0.6")
    ap.add_argument("--strategy", default="checkmate")
    ap.add_argument("--time-limit", default="30")
    ap.add_argument("--steps", default="5")
    ap.add_argument("--device", default="cuda")
    a = ap.parse_args()
    import onnx

    from remc.backends.runtime import DeviceSettings
    from remc.fit import predict
    from remc.passes.optimizer import OptimizerOptions, append_optimizer
    tmp = Path(tempfile.mkdtemp(prefix="remc-train-"))
    train = tmp / f"{a.model}_train.onnx"
    subprocess.run(["remc", "zoo", "export", a.model, "--train", "--size", a.size, "--batch", str(a.batch),
                    "-o", str(train)], check=True)
    step = append_optimizer(onnx.load(str(train)), OptimizerOptions(kind="adamw"))
    need = predict(step, a.device, settings=DeviceSettings()).total
    data: dict = {"model": a.model, "batch": a.batch, "size": a.size, "unmodified_step_need": need, "runs": []}
    for f in map(float, a.fractions.split(",")):
        budget = int(f * need)
        cmd = ["remc", "train", str(train), "--device", a.device, "--budget", str(budget), "--steps", a.steps,
               "--reference", "--strategy", a.strategy, "--time-limit", a.time_limit]
        t0 = time.perf_counter()
        p = subprocess.run(cmd, capture_output=True, text=True)
        run = {"fraction": f, "budget": budget, "command": " ".join(["remc"] + cmd[1:]), "rc": p.returncode,
               "stdout": p.stdout[-6000:], "stderr": p.stderr[-1500:], "seconds": time.perf_counter() - t0}
        data["runs"].append(run)
        print(json.dumps(run), flush=True)
        Path(a.out).write_text(json.dumps(data, indent=1))
    sys.exit(0)


if __name__ == "__main__":
    main()
