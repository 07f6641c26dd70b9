"""How much a plan's arena on CUDA exceeds its bytes in use, without any kernel memory (runs on CPU).

Exports U-Net b4 416x608's training graph, lowers checkpoint-all and each strategy named in argv[1] at 0.6
of checkpoint-all's replayed need (solver time limit 60 s, no fit loop), and prints for each: remc's live
bytes, the replayed arena's least cap with power-of-two regions, its bytes in use, the least cap with
kSameAsRequested regions, and (last lines) with one region of the cap (``ArenaConfig.one_region``). Kernel
memory is left out (it needs the GPU).

    python tools/arena_fragmentation.py approx
"""
from __future__ import annotations

import dataclasses
import sys
import time

from remc import zoo
from remc.backends import runtime
from remc.backends.strategies import make_options
from remc.fit import predict
from remc.passes import arena
from remc.pipeline import State, compile_pipeline, run, stages

ARENA = runtime.DeviceSettings(placement="arena")  # this tool is about ONNX Runtime's arena


def one_region_least(ev: arena.GraphEvents, cfg: arena.ArenaConfig, lo: int, hi: int) -> int:
    """The least cap (to 1 MiB) under which the replay fits with one region of the cap."""
    while hi - lo > (1 << 20):
        mid = (lo + hi) // 2 // 256 * 256
        c = dataclasses.replace(cfg, limit=mid, initial_chunk=mid)
        if arena.replay(ev, c).fits:
            hi = mid
        else:
            lo = mid
    return hi


def main() -> None:
    t0 = time.time()
    cfg = dict(zoo.paper_config("unet"))
    cfg.pop("batch", None)
    cfg.update(height=416, width=608)
    train = zoo.export("unet", 4, train=True, **cfg)
    print("export", time.time() - t0, flush=True)
    full = run(compile_pipeline(strategy="checkpoint-all", device="cuda"), State(model=train, budget=1 << 60))
    p = predict(full.lowered, "cuda", measure_kernels=False, settings=ARENA)
    print("ckall live", int(full.sim.peak), "arena", p.arena, "inuse", p.in_use_peak, "outside", p.outside,
          time.time() - t0, flush=True)
    cuda = runtime.arena_config("cuda")
    for strat in sys.argv[1].split(","):
        budget = int(0.6 * p.total)
        opts = make_options(strat, time_limit=60) if strat in ("approx", "checkmate") else None
        passes = compile_pipeline(strategy=strat, device="cuda", options=opts)
        st = run(stages(passes, last="units"), State(model=train))
        st.budget = budget
        try:
            run(stages(passes, first="schedule"), st)
        except Exception as e:
            print(strat, "fail", e)
            continue
        q = predict(st.lowered, "cuda", measure_kernels=False, settings=ARENA)
        ev = arena.graph_events(st.lowered, "cuda", None)
        same = dataclasses.replace(cuda, extend="kSameAsRequested")
        print(strat, 0.6, "budget", budget, "live", int(st.sim.peak), "arena", q.arena, "inuse", q.in_use_peak,
              "outside", q.outside, "sameAsReq least", arena.least_limit(ev, same), "peak node", q.peak_node,
              time.time() - t0, flush=True)
        print(strat, "one-region least", one_region_least(ev, cuda, q.in_use_peak - 1, 2 * q.arena), flush=True)
        evc = arena.graph_events(full.lowered, "cuda", None)
        print("ckall one-region least", one_region_least(evc, cuda, p.in_use_peak - 1, 2 * p.arena), flush=True)


if __name__ == "__main__":
    main()
