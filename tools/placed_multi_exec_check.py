"""CPU check of the probe's ``--auto-runs`` (tools/gpu_cudagraph_env_probe.py): a ``PlacedAllocator`` that sees
three executions of a graph inside one run (what the first ``Run`` call with ``enable_cuda_graph`` does on CUDA)
follows its layout only if it begins a new run when the last one's planned requests are used up.

A ResNet50 test-size training graph runs twice on remc's CPU placement (C API) with every allocation and free
recorded; the second run's events are then replayed three times in one run through a fresh allocator over a
host buffer of the layout's height, once as is and once with the automatic run boundary.

    python tools/placed_multi_exec_check.py
"""
from __future__ import annotations

from remc import zoo
from remc.backends import capi, placement, runtime


def main() -> None:
    cfg = dict(zoo.small_config("resnet50"))
    cfg.pop("batch", None)
    model = zoo.export("resnet50", 2, train=True, **cfg)
    lay = placement.model_layout(model, "cpu")
    buf = capi.HostBuffer(lay.height)
    rec = placement.from_layout(buf.ptr, lay.height, lay)
    rec.buffer, rec.record = buf, []
    runner = runtime.Runner(capi.Session(model, rec, layout=lay), runtime.random_inputs(model, 0), "cpu",
                            allocator=rec)
    runner()
    runner()
    trace = [x for x in rec.record if x[0] == 2]
    for auto in (False, True):
        host = capi.HostBuffer(lay.height)
        a = placement.from_layout(host.ptr, lay.height, lay)
        a.buffer = host
        for run, kind, _off, nbytes in rec.record:  # session creation's allocations stay
            if run == 0 and kind == "a":
                a.alloc(nbytes)
        a.begin_run()
        a.begin_run()  # a later run's plan, as the recorded second run had
        before, n = a.stats.planned, 0
        for _ in range(3):
            ptrs: dict[int, int] = {}
            for _run, kind, off, nbytes in trace:
                if kind == "a":
                    if auto and a.phase == "run" and a.k >= len(a._plan()) > 0:
                        a.begin_run()
                    ptrs[off] = a.alloc(nbytes)
                    n += 1
                else:
                    a.free(ptrs.pop(off))
            for p in ptrs.values():
                a.free(p)
        print(f"{'auto runs' if auto else 'one run  '}: {a.stats.planned - before} of {n} requests at their planned "
              f"address, {a.stats.fallback} by best fit; high-water {a.stats.high_water}, layout height {lay.height}")


if __name__ == "__main__":
    main()
