"""Work that must end by a deadline even when one step of it cannot be interrupted (a batch-256 one-node
ONNX Runtime run takes 10-20 s on a loaded machine, and ``session.run`` does not return early).

``run_bounded(work, on_item, deadline)`` runs ``work(emit)`` in a forked child process; each ``emit(item)``
sends one result to the parent as soon as it is ready, where ``on_item(item)`` takes it. The parent takes
results until the child finishes or the deadline passes, and then kills the child: the results received
so far are kept, the step in progress is lost. Without a deadline the work runs in this process (nothing to bound);
callers pass none on CUDA, which does not survive ``fork()`` once initialized. The child is forked, so it sees
the caller's model and arrays without copying them; only the emitted results (small: seconds, byte counts)
cross the pipe.
"""
from __future__ import annotations

import multiprocessing as mp
import os
import shutil
import signal
import tempfile
import time
import traceback
from collections.abc import Callable
from typing import Any

from ..ir.errors import RemcError, RuntimeFailure

KILL_GRACE = 1.0
"""Seconds a child gets to exit after SIGTERM before SIGKILL."""


def run_bounded(work: Callable[[Callable[[Any], None]], None], on_item: Callable[[Any], None],
                deadline: float | None) -> bool:
    """Whether ``work(emit)`` finished before ``deadline`` (a ``time.perf_counter()`` value; None: it runs here,
    to the end); ``on_item`` gets each emitted item, in this process. An error raised by ``work`` is raised
    again here (a ``RemcError`` as it was, anything else as RuntimeFailure with its message)."""
    if deadline is None:
        work(on_item)
        return True
    if time.perf_counter() >= deadline:
        return False
    ctx = mp.get_context("fork")
    recv, send = ctx.Pipe(duplex=False)
    scratch_dir = tempfile.mkdtemp(prefix="remc-bounded-")

    def child() -> None:
        recv.close()
        tempfile.tempdir = scratch_dir  # what a killed child leaves there is removed by the parent
        try:
            work(lambda item: send.send(("item", item)))
            send.send(("done", None))
        except RemcError as exc:
            send.send(("remc", exc))
        except BaseException as exc:  # noqa: BLE001 (reported to the parent, which raises it)
            send.send(("error", f"{type(exc).__name__}: {exc}\n{traceback.format_exc(limit=3)}"))
        finally:
            send.close()
            os._exit(0)

    proc = ctx.Process(target=child, daemon=True)
    proc.start()
    send.close()
    finished = False
    try:
        while True:
            left = deadline - time.perf_counter()
            if left <= 0 or not recv.poll(left):
                break
            try:
                kind, value = recv.recv()
            except EOFError:  # the child died without a word (killed: out of memory?)
                raise RuntimeFailure(f"a measurement child process ended with exit code {proc.exitcode} "
                                     "before it finished") from None
            if kind == "item":
                on_item(value)
            elif kind == "done":
                finished = True
                break
            elif kind == "remc":
                raise value
            else:
                raise RuntimeFailure(f"a measurement child process failed: {value}")
    finally:
        recv.close()
        _stop(proc)
        shutil.rmtree(scratch_dir, ignore_errors=True)
    return finished


def _stop(proc) -> None:
    """End ``proc`` (SIGTERM, then SIGKILL after KILL_GRACE) and reap it."""
    if proc.is_alive():
        proc.terminate()
        proc.join(KILL_GRACE)
        if proc.is_alive() and proc.pid is not None:
            os.kill(proc.pid, signal.SIGKILL)
    proc.join()
