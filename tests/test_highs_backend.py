"""The HiGHS backend's solver process dies with remc, whatever signal ends remc."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

_PARENT = textwrap.dedent("""
    import os, sys, threading, time
    import numpy as np
    sys.path.insert(0, {tests!r})
    from _milp_dags import training_graph
    from remc.backends.highs import HighsBackend
    from remc.ir.schedule import checkpoint_all
    from remc.passes.milp_model import build_model

    dag = training_graph(120, np.random.default_rng(3), skips=((0, 100), (5, 60), (10, 90)))
    model = build_model(dag, int(0.5 * checkpoint_all(dag).peak(dag)), memory_form="recurrence")
    threading.Thread(target=lambda: HighsBackend().solve(model, integral=True, time_limit=300, gap=0.0),
                     daemon=True).start()
    def worker(pid):  # after exec (so after its setsid), not between fork and exec, when the child's
        try:       # command line is still this one (whose text names the worker too)
            return b"remc.backends._highs_worker" in open(f"/proc/{{pid}}/cmdline", "rb").read().split(b"\\0")
        except OSError:
            return False

    while True:  # report the solver process once it runs
        kids = [int(p) for t in os.listdir("/proc/self/task")
                for p in open(f"/proc/self/task/{{t}}/children").read().split()]
        kids = [k for k in kids if worker(k)]
        if kids:
            print(kids[0], flush=True)
            break
        time.sleep(0.05)
    time.sleep(600)
""")


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state not in ("Z", "X")


def _gone_within(pid: int, seconds: float) -> bool:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if not _alive(pid):
            return True
        time.sleep(0.1)
    return not _alive(pid)


def _default_signals() -> None:
    """The parent as a terminal starts it: SIGHUP/SIGINT not ignored (they are under nohup or in a background job)."""
    for s in (signal.SIGHUP, signal.SIGINT, signal.SIGTERM):
        signal.signal(s, signal.SIG_DFL)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="uses /proc and PR_SET_PDEATHSIG")
@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM, signal.SIGHUP])
def test_solver_process_dies_with_its_parent(sig: signal.Signals) -> None:
    code = _PARENT.format(tests=str(Path(__file__).parent))
    parent = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True,
                              preexec_fn=_default_signals)
    child = 0
    try:
        line = parent.stdout.readline()
        assert line.strip(), "the solver process did not start"
        child = int(line)
        assert _alive(child)
        # the solver process is in its own session: a terminal's signals reach remc, not it
        assert os.getsid(child) != os.getsid(parent.pid)
        time.sleep(3)  # let it read the model and solve (a parent killed earlier ends it by EOF)
        assert _alive(child)
        os.kill(parent.pid, sig)
        parent.wait(30)
        assert _gone_within(child, 5), f"solver process {child} still running after {sig.name} to its parent"
    finally:
        if parent.poll() is None:
            parent.kill()
            parent.wait()
        if child and _alive(child):  # only when the test fails: do not leave it running
            os.kill(child, signal.SIGKILL)
