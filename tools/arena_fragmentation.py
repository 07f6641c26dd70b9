"""How much a plan's arena on CUDA exceeds its bytes in use, without any kernel memory (runs on CPU).

Exports U-Net b4 416x608's training graph, lowers checkpoint-all and each strategy given as argv[1] at 0.6 of
checkpoint-all's replayed need (solver time limit 60 s, no fit loop), and prints for each: remc's live bytes,
the replayed arena's least cap with power-of-two regions, its bytes in use, the least cap with kSameAsRequested
regions, and (last lines) with one region of the cap. Kernel memory is left out (it needs the GPU).

    python tools/arena_fragmentation.py approx
"""
import time, json, sys
from remc import zoo
from remc.fit import predict
from remc.backends.strategies import make_options
from remc.pipeline import State, compile_pipeline, run, stages
from remc.passes import arena
from remc.backends import runtime
T=time.time()
cfg = dict(zoo.paper_config("unet")); cfg.pop("batch", None); cfg.update(height=416, width=608)
train = zoo.export("unet", 4, train=True, **cfg)
print("export", time.time()-T, flush=True)
full = run(compile_pipeline(strategy="checkpoint-all", device="cuda"), State(model=train, budget=1<<60))
p = predict(full.lowered, "cuda", measure_kernels=False)
print("ckall live", int(full.sim.peak), "arena", p.arena, "inuse", p.in_use_peak, "outside", p.outside, time.time()-T, flush=True)
for strat in sys.argv[1].split(","):
  for f in (0.6,):
    budget = int(f * p.total)
    opts = make_options(strat, time_limit=60) if strat in ("approx","checkmate") else None
    passes = compile_pipeline(strategy=strat, device="cuda", options=opts)
    st = run(stages(passes, last="units"), State(model=train)); st.budget = budget
    try:
        run(stages(passes, first="schedule"), st)
    except Exception as e:
        print(strat, "fail", e); continue
    q = predict(st.lowered, "cuda", measure_kernels=False)
    ev = arena.graph_events(st.lowered, "cuda", None)
    cfg2 = runtime.arena_config("cuda")
    import dataclasses
    same = dataclasses.replace(cfg2, extend="kSameAsRequested")
    print(strat, f, "budget", budget, "live", int(st.sim.peak), "arena", q.arena, "inuse", q.in_use_peak, "outside", q.outside,
          "sameAsReq least", arena.least_limit(ev, same), "peak node", q.peak_node, time.time()-T, flush=True)
    def one_region_least(ev, lo, hi):
        while hi - lo > (1 << 20):
            mid = (lo + hi) // 2 // 256 * 256
            c = dataclasses.replace(cfg2, limit=mid, initial_chunk=mid)
            if arena.replay(ev, c).fits: hi = mid
            else: lo = mid
        return hi
    print(strat, "one-region least", one_region_least(ev, q.in_use_peak - 1, 2 * q.arena), flush=True)
    evc = arena.graph_events(full.lowered, "cuda", None)
    print("ckall one-region least", one_region_least(evc, p.in_use_peak - 1, 2 * p.arena), flush=True)
