"""`remc compile ...` with the kernel-memory measurement traced on stderr: each probe started (op, node, MB) and its
seconds, each kernel_memory call's start, end and signatures left, and the clock's phases.
python ktrace.py <remc compile args>   (scratch; results/time22)"""
import functools
import os
import sys
import time

from remc import timebudget
from remc.backends import scratch

t0 = time.perf_counter()


def say(msg):
    print(f"[{time.perf_counter() - t0:6.1f} load {os.getloadavg()[0]:5.1f} pid {os.getpid()}] {msg}", file=sys.stderr,
          flush=True)


def wrap_measure(name):
    f = getattr(scratch, name)

    @functools.wraps(f)
    def g(prof, model, p, types, *a, **k):
        nb = sum(types[x].nbytes for x in list(p.node.input) + list(p.node.output) if x and x in types)
        s = time.perf_counter()
        say(f"  probe {p.node.op_type} {p.name} {nb / 1e6:.0f} MB")
        r = f(prof, model, p, types, *a, **k)
        say(f"  probe done {p.name} {time.perf_counter() - s:.2f} s")
        return r
    setattr(scratch, name, g)


wrap_measure("_measure")
wrap_measure("_measure_requests")
_km = scratch._kernel_memory


def km(model, device, **kw):
    s = time.perf_counter()
    dl = kw.get("deadline")
    say(f"kernel_memory start, deadline in {dl - s if dl else None}")
    r = _km(model, device, **kw)
    say(f"kernel_memory end {time.perf_counter() - s:.2f} s, left {r[1]} of {r[2]}")
    return r


scratch._kernel_memory = km
_rec = timebudget.CompileClock.record


def record(self, name, start, deadline=None):
    ph = _rec(self, name, start, deadline)
    say(f"phase {name}: {ph.start:.1f}-{ph.end:.1f} ({ph.seconds:.1f} s)" + ("" if deadline is None else f" (deadline {deadline:.1f})"))
    return ph


timebudget.CompileClock.record = record
from remc.cli import main  # noqa: E402

sys.exit(main(["compile", *sys.argv[1:]]))
