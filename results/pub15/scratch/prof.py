"""Where one `remc solve` process' wall goes: wraps the phases of checkmate and prints when each starts/ends
(wall since the process started, from /proc, and this process' CPU seconds).
    python prof.py GRAPH RATIO [extra remc solve args]"""
import os
import sys
import time

def _since_start() -> float:
    hz = os.sysconf("SC_CLK_TCK")
    st = int(open("/proc/self/stat").read().rsplit(")", 1)[1].split()[19])
    up = float(open("/proc/uptime").read().split()[0])
    return up - st / hz

T0 = time.perf_counter() - _since_start()
def now():
    return f"{time.perf_counter() - T0:6.3f} s wall {time.process_time():6.3f} cpu"
print(f"[{now()}] script start", file=sys.stderr)
import numpy  # noqa
print(f"[{now()}] numpy imported", file=sys.stderr)
import math
import remc.backends.cpsat as cpsat
import remc.backends.strategies as strategies
import remc.cli as cli
import remc.ir.nodelink as nodelink
import remc.passes.evict as evict
from remc.ir.schedule import checkpoint_all
print(f"[{now()}] remc imported", file=sys.stderr)

def wrap(mod, name):
    f = getattr(mod, name)
    def w(*a, **k):
        print(f"[{now()}] {name} start", file=sys.stderr)
        try:
            return f(*a, **k)
        finally:
            print(f"[{now()}] {name} end", file=sys.stderr)
    setattr(mod, name, w)

for mod, name in [(cpsat, "load_cp_model"), (strategies, "_stage_hint"), (cpsat, "cpsat_bound"),
                  (cpsat, "solve_cpsat"), (cpsat, "_build"), (cpsat, "_solve_watched"), (cpsat, "cpsat_phase"),
                  (strategies, "_cover_phase"), (cli, "cmd_solve")]:
    wrap(mod, name)
orig_run = strategies._CoverBeside._run
def run(self):
    print(f"[{now()}] cover beside thread start", file=sys.stderr)
    orig_run(self)
    print(f"[{now()}] cover beside thread end: {self.note} started={self.started}", file=sys.stderr)
strategies._CoverBeside._run = run
for kv in os.environ.get("SET", "").split():
    k, v = kv.split("=")
    mod = cpsat if hasattr(cpsat, k) else strategies
    setattr(mod, k, type(getattr(mod, k))(eval(v)))
    print(f"set {mod.__name__}.{k} = {getattr(mod, k)}", file=sys.stderr)
g, ratio = sys.argv[1], float(sys.argv[2])
dag = nodelink.load_nodelink(g)
budget = math.ceil(checkpoint_all(dag).peak(dag) * ratio)
print(f"[{now()}] graph read for the budget (not in remc's path)", file=sys.stderr)
import io, contextlib
buf = io.StringIO()
with contextlib.redirect_stdout(buf):
    cli.main(["solve", g, "--budget", str(budget), "--strategy", "checkmate", "--time-limit", "60", "--json"] + sys.argv[3:])
import json
r = json.loads(buf.getvalue())
print(f"[{now()}] done: {r['status']} cost {r['cost']} solve seconds {r['seconds']:.3f}; "
      f"load {os.getloadavg()[0]:.1f}", file=sys.stderr)
