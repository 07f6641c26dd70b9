"""Where a remc command's resident memory goes: run ``remc ARGS`` in this process with a thread that samples
VmRSS (``/proc/self/status``) every ``--interval`` seconds together with the main thread's stack, and print,
per phase (the chain of remc functions at ``--depth`` below the command), its peak RSS and seconds, then the
largest rises between samples with the remc frames that made them. Protobuf's and ONNX Runtime's C++
allocations count (tracemalloc sees only Python's).

    python tools/rss_phases.py --out rss.json -- train step.onnx --steps 2 --budget 1.5GB --strategy approx
"""
from __future__ import annotations

import argparse
import json
import sys
import threading
import time
from typing import Any

ROOTS = ("/remc/", "/ir/", "/passes/", "/backends/")


def status_kib(field: str) -> int:
    """A ``/proc/self/status`` field in KiB (VmRSS, VmHWM)."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return 0


def remc_frames(frame: Any) -> list[str]:
    """The remc functions on a stack, outermost first ('module.function')."""
    out = []
    while frame is not None:
        path = frame.f_code.co_filename
        if any(r in path for r in ROOTS) and "site-packages/onnx" not in path:
            mod = path.rsplit("/", 2)
            out.append(f"{mod[-2]}/{mod[-1][:-3]}.{frame.f_code.co_name}")
        frame = frame.f_back
    return out[::-1]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--interval", type=float, default=0.2)
    ap.add_argument("--depth", type=int, default=4, help="remc frames that name a phase")
    ap.add_argument("--out", help="samples and phases as JSON")
    ap.add_argument("args", nargs=argparse.REMAINDER)
    a = ap.parse_args()
    args = a.args[1:] if a.args[:1] == ["--"] else a.args
    main_id = threading.get_ident()
    samples: list[tuple[float, int, list[str]]] = []
    stop = threading.Event()

    def sample() -> None:
        t0 = time.perf_counter()
        while not stop.is_set():
            frame = sys._current_frames().get(main_id)
            samples.append((time.perf_counter() - t0, status_kib("VmRSS"), remc_frames(frame)))
            stop.wait(a.interval)

    th = threading.Thread(target=sample, daemon=True)
    th.start()
    from remc.cli import main as remc_main
    try:
        rc = remc_main(args)
    except SystemExit as e:
        rc = e.code
    stop.set()
    th.join()
    hwm = status_kib("VmHWM")
    phases: dict[str, dict[str, float]] = {}
    for k, (t, rss, frames) in enumerate(samples):
        key = " > ".join(frames[1:1 + a.depth]) or "(outside remc)"
        p = phases.setdefault(key, {"first_s": t, "peak_mib": 0, "seconds": 0.0})
        p["peak_mib"] = max(p["peak_mib"], rss // 1024)
        if k + 1 < len(samples):
            p["seconds"] += samples[k + 1][0] - t
    rises = sorted(((samples[k][1] - samples[k - 1][1]) // 1024, samples[k][0], " > ".join(samples[k - 1][2][1:]))
                   for k in range(1, len(samples)))[::-1][:12]
    print(f"rc {rc}; VmHWM {hwm // 1024} MiB; {len(samples)} samples", file=sys.stderr)
    print(f"{'first s':>8} {'seconds':>8} {'peak MiB':>9}  phase", file=sys.stderr)
    for key, p in sorted(phases.items(), key=lambda kv: kv[1]["first_s"]):
        print(f"{p['first_s']:8.1f} {p['seconds']:8.1f} {p['peak_mib']:9d}  {key}", file=sys.stderr)
    print("largest rises (MiB, at s, in):", file=sys.stderr)
    for d, t, where in rises:
        print(f"  +{d} at {t:.1f} s in {where}", file=sys.stderr)
    if a.out:
        with open(a.out, "w") as f:
            json.dump({"args": args, "rc": rc, "vmhwm_mib": hwm // 1024, "phases": phases,
                       "rises": rises, "samples": [(t, r // 1024, fr) for t, r, fr in samples]}, f)
    return 0 if rc in (0, None) else int(rc)


if __name__ == "__main__":
    sys.exit(main())
