"""approx on a captured solve (trace_compile.py's CAPTURE_DIR pickle) with a timeline of its phases and the eviction
settings' progress. python replay.py PKL LIMIT [REPEATS]   (scratch; results/time21)"""
import functools
import os
import pickle
import resource
import sys
import time

from remc.backends import strategies as st
from remc.passes import approx, evict

cap = pickle.load(open(sys.argv[1], "rb"))
dag, budget, opts = cap["dag"], cap["budget"], cap["options"]
base = float(dag.cost.sum())
limit = float(sys.argv[2])


def cpu():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


T0 = [0.0]


def say(msg):
    print(f"[{time.perf_counter() - T0[0]:6.2f} cpu {cpu():6.1f} load {os.getloadavg()[0]:5.1f}] {msg}", flush=True)


def wrap(mod, name):
    f = getattr(mod, name)

    @functools.wraps(f)
    def g(*a, **k):
        s, c = time.perf_counter(), cpu()
        say(f"> {name}")
        r = f(*a, **k)
        extra = ""
        if name == "_stage_search" and r is not None:
            extra = f" +{100 * (r.cost / base - 1):.4f}% {r.rule}"
        if name == "_incumbent" and r is not None:
            extra = f" {r.strategy} +{100 * (r.cost(dag) / base - 1):.4f}%"
        if name == "advance":
            extra = f" {a[0].name} rows {a[0].rows} done {a[0].done} result {a[0].result is not None}"
        if name == "improve":
            extra = f" -> +{100 * (a[0].total_cost() / base - 1):.4f}%"
        say(f"< {name} ({time.perf_counter() - s:.2f} s, cpu {cpu() - c:.2f}){extra}")
        return r
    setattr(mod, name, g)


for mod, n in [(st, "_incumbent"), (approx, "gap_bound"), (approx, "_stage_search"), (approx, "window_search")]:
    wrap(mod, n)
import remc.passes.stagesearch as ss  # noqa: E402

_imp = ss.improve


def improve_traced(st_, deadline, **k):
    s, c = time.perf_counter(), cpu()
    r = _imp(st_, deadline, **k)
    say(f"  improve(repairs={k.get('repairs', True)}) {time.perf_counter() - s:.2f} s cpu {cpu() - c:.2f} -> "
        f"+{100 * (st_.total_cost() / base - 1):.4f}%")
    return r


ss.improve = improve_traced
for cls in (evict.EvictRun, evict._RepairRun):
    _adv = cls.advance

    def adv(self, until=None, rows=None, _adv=_adv):
        s, c, r0 = time.perf_counter(), cpu(), self.rows
        out = _adv(self, until, rows)
        res = "" if self.result is None else f" result +{100 * (self.result.total_cost() / base - 1):.4f}%"
        say(f"  advance {getattr(self, 'name', type(self).__name__)} rows {r0}->{self.rows} done {self.done}"
            f" ({time.perf_counter() - s:.2f} s, cpu {cpu() - c:.2f}){res}")
        return out
    cls.advance = adv
import dataclasses  # noqa: E402

for rep in range(int(sys.argv[3]) if len(sys.argv) > 3 else 1):
    T0[0] = time.perf_counter()
    o = dataclasses.replace(opts, time_limit=limit)
    s = st.solve(cap["name"], dag, budget, o, start=cap["start"])
    r = s.report
    print(f"END limit {limit} wall {time.perf_counter() - T0[0]:.2f} status {r.status} +{100 * (r.cost / base - 1):.4f}% "
          f"rule {r.extras.get('rule')} skipped {r.extras.get('stage_search_skipped')}", flush=True)
