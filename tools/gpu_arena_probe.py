"""Which CUDA arena setting lets a plan run under a ``gpu_mem_limit`` its predicted peak fits.

ONNX Runtime's CUDA provider enforces ``gpu_mem_limit`` in a BFC arena that grows by regions (exactly
the request with ``kSameAsRequested``) that never coalesce, and hands out a free chunk unsplit when the
slack is under ``max_dead_bytes_per_chunk`` (128 MiB by default) and under the request. This probe runs
the plans of ``tools/gpu_evidence.py --stage plan`` under each setting, each in its own process (a crash
in one must not hide the others), and records what ran and the measured peak:

- ``provider``: the provider's ``gpu_mem_limit`` with remc's default growth (``DeviceSettings.arena_extend``,
  ``kNextPowerOfTwo`` now; results/gpu_h100_c_arena_probe.json and the first part of
  results/gpu_h100_e_arena_probe.json were made when it was ``kSameAsRequested``);
- ``provider-same`` / ``provider-pow2``: the same with ``kSameAsRequested`` / ``kNextPowerOfTwo``;
- ``unlimited``: no limit at all: the measured peak is then the bytes in use, without the arena's
  growth failing (the plan's need, to set against what the limited arena could not hand out);
- ``env``/``env-nochunk`` (results/gpu_h100_c_arena_probe.json only, code removed since): a process-wide
  arena registered with ``create_and_register_allocator_v2`` and ``session.use_env_allocators=1`` (one
  reserved region, chunks always split; without the reserved region): both crashed the process with a
  segmentation fault in onnxruntime-gpu 1.31.1, so remc does not use environment allocators on CUDA.

    python tools/gpu_arena_probe.py --plans .gpuplans --out results/gpu_arena_probe.json
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

SETTINGS = ("provider", "provider-same", "provider-pow2", "unlimited")


def probe(setting: str, plans: Path, model: str, strategies: list[str]) -> list[dict]:
    """In this process: run the model's plans under its limit with ``setting``; one row per step."""
    sys.path.insert(0, str(Path(__file__).parent))
    import gpu_evidence as ge

    from remc.backends import runtime
    runtime.require_cuda()
    planned = json.loads(sorted(plans.glob(f"{model}@*.json"))[-1].read_text())
    limit = planned["gpu_mem_limit"]
    settings = runtime.DeviceSettings(placement="arena")  # this probe is about ONNX Runtime's arena
    if setting in ("provider-same", "provider-pow2"):
        settings = runtime.DeviceSettings(placement="arena", arena_extend="kSameAsRequested"
                                          if setting == "provider-same" else "kNextPowerOfTwo")
    train = ge.build(model)
    feeds = runtime.random_inputs(train, 0)
    rows = []
    for row in planned["strategies"]:
        if "plan" not in row or row["strategy"] not in strategies:
            continue
        out = {"setting": setting, "model": model, "strategy": row["strategy"], "predicted_peak": row["predicted_peak"],
               "gpu_mem_limit": limit}
        try:
            lowered, _ = ge.lower_plan(train, row["plan"])
            res = runtime.measure(lowered, "cuda", feeds=feeds, iters=2, settings=settings,
                                  mem_limit=None if setting == "unlimited" else limit)
            out.update(ran=True, measured_peak=res.peak_with_constants, arena_peak=res.measured_peak,
                       ratio=res.peak_with_constants / row["predicted_peak"])
        except Exception as e:  # noqa: BLE001 - recorded
            out.update(ran=False, error=f"{type(e).__name__}: {str(e)[:300]}")
        print(json.dumps(out), flush=True)
        rows.append(out)
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--plans", default=".gpuplans")
    ap.add_argument("--models", default="unet,resnet50")
    ap.add_argument("--strategies", default="checkmate,approx,ap-greedy,lin-greedy")
    ap.add_argument("--settings", default=",".join(SETTINGS))
    ap.add_argument("--out", default="results/gpu_arena_probe.json")
    ap.add_argument("--one", nargs=2, metavar=("SETTING", "MODEL"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    strategies = args.strategies.split(",")
    if args.one:
        print("ROWS " + json.dumps(probe(args.one[0], Path(args.plans), args.one[1], strategies)))
        return
    rows = []
    for setting in args.settings.split(","):
        for model in args.models.split(","):
            p = subprocess.run([sys.executable, __file__, "--plans", args.plans, "--strategies", args.strategies,
                                "--one", setting, model], capture_output=True, text=True)
            got = [ln for ln in p.stdout.splitlines() if ln.startswith("ROWS ")]
            if got:
                rows += json.loads(got[-1][5:])
            else:
                done = [json.loads(ln) for ln in p.stdout.splitlines() if ln.startswith("{")]
                rows += done + [{"setting": setting, "model": model, "ran": False,
                                 "error": f"process ended with code {p.returncode}: {p.stderr.strip()[-400:]}"}]
            print(json.dumps(rows[-1])[:300], flush=True)
            Path(args.out).write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
