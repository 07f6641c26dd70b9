"""`remc compile ...` with a timeline of approx's phases (stderr). python trace_compile.py <remc compile args>"""
import functools
import sys
import time

from remc.backends import strategies as st
from remc.passes import approx, evict

t0 = time.perf_counter()


def wrap(mod, name):
    f = getattr(mod, name)

    @functools.wraps(f)
    def g(*a, **k):
        s = time.perf_counter()
        print(f"[{s - t0:6.1f}] > {name}" + (f" (scipy.sparse.linalg imported: {'scipy.sparse.linalg' in sys.modules})"
                                             if name == "_incumbent" else ""), file=sys.stderr, flush=True)
        r = f(*a, **k)
        extra = ""
        if name == "_stage_search" and r is not None:
            extra = f" cost {r.cost:.6g} rule {r.rule}"
        if name == "_incumbent" and r is not None:
            extra = f" {r.strategy}"
        if name == "evict_search":
            extra = f" deadline in {k.get('deadline', 0) - s:.1f} s" if k.get("deadline") else ""
        print(f"[{time.perf_counter() - t0:6.1f}] < {name} ({time.perf_counter() - s:.1f} s){extra}", file=sys.stderr,
              flush=True)
        return r
    setattr(mod, name, g)


for mod, n in [(st, "_incumbent"), (approx, "gap_bound"), (approx, "_stage_search"), (approx, "window_search"),
               (approx, "_finish"), (approx, "evict_search"), (st, "_approx_fn")]:
    wrap(mod, n)
from remc import timebudget  # noqa: E402

_rec = timebudget.CompileClock.record


def record(self, name, start, deadline=None):
    ph = _rec(self, name, start, deadline)
    print(f"[{time.perf_counter() - t0:6.1f}] phase {name}: {ph.start:.1f}-{ph.end:.1f} on the clock"
          + ("" if deadline is None else f" (deadline {deadline:.1f})"), file=sys.stderr, flush=True)
    return ph


timebudget.CompileClock.record = record
_sl = timebudget.CompileClock.solve_limit


def solve_limit(self, share, reserve=0.0):
    r = _sl(self, share, reserve)
    print(f"[{time.perf_counter() - t0:6.1f}] solve_limit(share {share}, reserve {reserve:.1f}) -> {r[0]:.2f} s",
          file=sys.stderr, flush=True)
    return r


timebudget.CompileClock.solve_limit = solve_limit
from remc.cli import main  # noqa: E402

sys.exit(main(["compile", *sys.argv[1:]]))
