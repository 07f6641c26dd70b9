"""remc compile ... with a trace: each solve (budget, limit, wall, CPU, result), the fit rounds and the clock's
phases, written as JSON lines to $TRACE at exit (scratch; results/any20)."""
import atexit
import json
import os
import resource
import sys
import time

OUT = os.environ.get("TRACE", "/dev/stderr")
events = []


def cpu():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def dump():
    with open(OUT, "a") as f:
        f.write(json.dumps({"argv": sys.argv[1:], "load": os.getloadavg()[0], "events": events}) + "\n")


atexit.register(dump)

import remc.timebudget as tb  # noqa: E402

_post = tb.CompileClock.__post_init__


def post(self):
    _post(self)
    events.append({"clock": True})

    def phases():
        events.append({"phases": [(p.name, round(p.start, 2), round(p.seconds, 2),
                                   None if p.deadline is None else round(p.deadline, 2)) for p in self.phases],
                       "elapsed": self.elapsed(), "notes": self.notes})
    atexit.register(phases)


tb.CompileClock.__post_init__ = post

import remc.backends.strategies as st  # noqa: E402

_solve = st.solve


def solve(name, dag, budget, options=None, *, progress=None, start=None):
    t0, c0 = time.perf_counter(), cpu()
    if os.environ.get("CAPTURE_DIR"):
        import pickle
        k = sum(1 for e in events if "solve" in e) + 1
        with open(os.path.join(os.environ["CAPTURE_DIR"], f"solve{k}.pkl"), "wb") as f:
            pickle.dump(dict(name=name, dag=dag, budget=budget, options=options, start=start), f)
    ev = {"solve": name, "budget": int(budget) if budget is not None else None,
          "limit": getattr(options, "time_limit", None), "warm": start is not None, "load": os.getloadavg()[0]}
    try:
        s = _solve(name, dag, budget, options, progress=progress, start=start)
        r = s.report
        ev.update(cost=s.cost(dag) / dag.total_cost, peak=int(s.peak(dag)),
                  status=getattr(r, "status", None), gap=getattr(r, "gap", None),
                  first_fit=(r.extras.get("first_fit_seconds") if r is not None else None),
                  note=str(getattr(r, "extras", {}).get("start", ""))[:200] if r is not None else None)
        return s
    except BaseException as e:
        ev.update(error=type(e).__name__, msg=str(e)[:300])
        raise
    finally:
        ev.update(wall=time.perf_counter() - t0, cpu=cpu() - c0)
        events.append(ev)


st.solve = solve

import remc.fit as fit  # noqa: E402

_predict = fit.predict


def predict(lowered, *a, **k):
    t0 = time.perf_counter()
    p = _predict(lowered, *a, **k)
    events.append({"predict": int(p.total), "wall": time.perf_counter() - t0, "lb": int(p.in_use_peak + p.outside),
                   "ub_only": bool(p.layout_upper_bound), "order": getattr(p.layout, "order", None)})
    return p


fit.predict = predict

import remc.passes.arena as arena  # noqa: E402

_ge = arena.graph_events


def graph_events(*a, **k):
    ev = _ge(*a, **k)
    if os.environ.get("CAPTURE_DIR"):
        import pickle
        n = sum(1 for e in events if "predict" in e) + 1
        with open(os.path.join(os.environ["CAPTURE_DIR"], f"events{n}.pkl"), "wb") as f:
            pickle.dump(ev, f)
    return ev


arena.graph_events = graph_events

from remc.entry import main  # noqa: E402

sys.exit(main())
