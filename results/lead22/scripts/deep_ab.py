"""deep_ab.py PKL LIMIT DEEP: replay a captured checkmate solve with strategies.COVER_BESIDE_DEEP = DEEP; prints
status, cost, gap, wall and CPU seconds (of this process; the covering MILP's child is not counted)."""
import pickle
import sys
import time

import remc.backends.strategies as st

d = pickle.load(open(sys.argv[1], "rb"))
st.COVER_BESIDE_DEEP = int(sys.argv[3])
NICE = int(sys.argv[4]) if len(sys.argv) > 4 and sys.argv[4] != '-v' else 0
if NICE:  # every HiGHS child process of the solve at a lower priority (os.setpriority right after its start)
    import os
    import subprocess

    import remc.backends.highs as hb

    class _Popen(subprocess.Popen):
        def __init__(self, *a, **k):
            super().__init__(*a, **k)
            os.setpriority(os.PRIO_PROCESS, self.pid, NICE)

    hb.subprocess = type("S", (), {**{k: getattr(subprocess, k) for k in dir(subprocess) if not k.startswith("__")},
                                  "Popen": _Popen})
t0, c0 = time.perf_counter(), time.process_time()
opts = st.make_options("checkmate", time_limit=float(sys.argv[2]))
last = [None]


def progress(ev):
    key = (ev.phase, ev.incumbent, ev.bound)
    if key != last[0]:
        last[0] = key
        print(f"  {time.perf_counter() - t0:6.1f} s cpu {time.process_time() - c0:5.1f}  {ev.phase:18s} cost {ev.incumbent} "
              f"bound {ev.bound}", flush=True)


r = st.solve("checkmate", d["dag"], d["budget"], opts, progress=progress if "-v" in sys.argv else None)
rep = r.report
print(f"deep={sys.argv[3]} nice={NICE} {rep.status} cost {rep.cost:.0f} gap {getattr(rep, 'gap', None)} wall {time.perf_counter() - t0:.1f} "
      f"cpu {time.process_time() - c0:.1f} notes {getattr(rep, 'notes', '')}"[:600], flush=True)
