"""`remc compile ...` with a timeline on stderr: the clock's phases (with deadlines), each solve_limit, approx's
phases (baselines, stage search, bound, window search) with wall and CPU; CAPTURE_DIR: pickle each solve's input.
python trace_compile.py <remc compile args>   (scratch; results/time21)"""
import functools
import os
import pickle
import resource
import sys
import time

from remc.backends import strategies as st
from remc.passes import approx

t0 = time.perf_counter()


def cpu():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def say(msg):
    print(f"[{time.perf_counter() - t0:6.1f} cpu {cpu():6.1f} load {os.getloadavg()[0]:5.1f}] {msg}", file=sys.stderr,
          flush=True)


def wrap(mod, name):
    f = getattr(mod, name)

    @functools.wraps(f)
    def g(*a, **k):
        s, c = time.perf_counter(), cpu()
        say(f"> {name}")
        r = f(*a, **k)
        extra = ""
        if name == "_stage_search" and r is not None:
            extra = f" cost {r.cost:.8g} rule {r.rule}"
        if name == "_incumbent" and r is not None:
            extra = f" {r.strategy} cost {r.cost(a[0]):.8g}"
        if name == "solve" and r is not None and r.report is not None:
            rep = r.report
            extra = f" status {rep.status} cost {rep.cost:.8g} rule {rep.extras.get('rule')} bound {rep.bound:.8g}"
        say(f"< {name} ({time.perf_counter() - s:.2f} s, cpu {cpu() - c:.2f}){extra}")
        return r
    setattr(mod, name, g)


_solve = st.solve


def solve(name, dag, budget, options=None, *, progress=None, start=None):
    if os.environ.get("CAPTURE_DIR"):
        k = len(os.listdir(os.environ["CAPTURE_DIR"])) + 1
        with open(os.path.join(os.environ["CAPTURE_DIR"], f"solve{k}.pkl"), "wb") as f:
            pickle.dump(dict(name=name, dag=dag, budget=budget, options=options, start=start), f)
    say(f"solve {name} budget {budget} limit {getattr(options, 'time_limit', None)} warm {start is not None} n {dag.n}")
    return _solve(name, dag, budget, options, progress=progress, start=start)


st.solve = solve
wrap(st, "solve")
for mod, n in [(st, "_incumbent"), (approx, "gap_bound"), (approx, "_stage_search"), (approx, "window_search"),
               (approx, "_finish")]:
    wrap(mod, n)
from remc import timebudget  # noqa: E402

_rec = timebudget.CompileClock.record


def record(self, name, start, deadline=None):
    ph = _rec(self, name, start, deadline)
    say(f"phase {name}: {ph.start:.1f}-{ph.end:.1f} ({ph.seconds:.1f} s) on the clock"
        + ("" if deadline is None else f" (deadline {deadline:.1f})"))
    return ph


timebudget.CompileClock.record = record
_sl = timebudget.CompileClock.solve_limit


def solve_limit(self, share, reserve=0.0):
    r = _sl(self, share, reserve)
    say(f"solve_limit(share {share}, reserve {reserve:.1f}) at {self.elapsed():.1f} -> {r[0]:.2f} s")
    return r


timebudget.CompileClock.solve_limit = solve_limit
from remc.cli import main  # noqa: E402

sys.exit(main(["compile", *sys.argv[1:]]))
