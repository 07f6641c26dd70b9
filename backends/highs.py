"""HiGHS behind the solver interface of the passes (passes/solver_api.py): LP sessions in this process,
and time-limited MILP solves in a child process that is killed at the limit and dies with remc.

The child (``python -m remc.backends._highs_worker``) runs in its own session (a terminal's Ctrl-C reaches
remc, which stops it) and asks the kernel for SIGKILL when its parent dies (``prctl(PR_SET_PDEATHSIG)``),
so SIGTERM, SIGHUP or SIGKILL of remc never leaves it running; it also exits when its parent is gone
before that request took effect.
"""
from __future__ import annotations

import ctypes
import math
import os
import signal
import sys
import time

import numpy as np

from ..passes.milp_model import CheckmateModel, safe_dual_bound
from ..passes.solver_api import SolveResult

LP_PRESOLVE = "off"
"""HiGHS' presolve for LP relaxations (not the MILP). Off: HiGHS then holds duals of the original LP when a
time limit stops the dual simplex, which give a proven bound (``safe_dual_bound``); with presolve on it
has none. Also faster on the zoo's dense LPs (1 thread, one after the other on the shared 2-core machine):
VGG19 at 0.8 2.0 -> 0.7 s, MobileNet 14.0 -> 8.3 s, U-Net 1.5 -> 0.6 s, ResNet50 at 0.6 289 -> 147 s."""
PR_SET_PDEATHSIG = 1
"""linux/prctl.h: the signal the kernel sends a process when its parent thread exits."""


class HighsBackend:
    """HiGHS (highspy) as a ``SolverBackend``."""

    name = "highs"

    def solve(self, model: CheckmateModel, *, integral: bool, time_limit: float | None = None,
              threads: int | None = None, gap: float = 1e-4, start: np.ndarray | None = None,
              progress=None) -> SolveResult:
        return solve_highs(model, integral=integral, time_limit=time_limit, threads=threads, gap=gap,
                           start=start, progress=progress)

    def lp_session(self, model: CheckmateModel, *, threads: int | None = None) -> LpSession:
        return LpSession(model, threads=threads)


def die_with_parent(parent: int) -> None:
    """In a child process: ask for SIGKILL when the parent dies, and exit now if it already has."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)
    except (OSError, AttributeError):  # not Linux: the parent's hard stop and os.getppid() checks remain
        pass
    if os.getppid() != parent:
        os._exit(1)


_scheduler_threads: int | None = None
"""Threads the HiGHS global scheduler was started with in this process (None: not started)."""

_HIGHS_STATUS = {"kOptimal": "optimal", "kTimeLimit": "time_limit", "kInfeasible": "infeasible",
                 "kInterrupt": "interrupted", "kUnboundedOrInfeasible": "infeasible",
                 "kSolutionLimit": "solution_limit", "kIterationLimit": "iteration_limit",
                 "kObjectiveBound": "objective_bound", "kObjectiveTarget": "objective_target"}


def solve_highs(model: CheckmateModel, *, integral: bool, time_limit: float | None = None,
                threads: int | None = None, gap: float = 1e-4, start: np.ndarray | None = None,
                progress=None, progress_every: float = 1.0, isolated: bool | None = None,
                presolve: bool = True) -> SolveResult:
    """Solve ``model`` (the MILP, or its LP relaxation when ``integral`` is False) with HiGHS.

    ``progress(dict)`` is called on every improving solution and at most every ``progress_every``
    seconds from HiGHS' MIP interrupt callback, with the incumbent and dual bound in model units.
    ``isolated``: the MILP in a child process (``_solve_isolated``); None: where it has a time limit. False
    saves the child's start (a Python process importing numpy and highspy: 0.3-0.4 s of CPU) where the model is
    small enough that HiGHS stops at its limit by itself. ``presolve`` False: a MILP solved without HiGHS'
    presolve (as every LP relaxation is: LP_PRESOLVE), here or in the child process.
    """
    if integral and time_limit is not None and isolated is not False:
        return _solve_isolated(model, time_limit=time_limit, threads=threads, gap=gap, start=start,
                               progress=progress, progress_every=progress_every, presolve=presolve)
    return _solve_here(model, integral=integral, time_limit=time_limit, threads=threads, gap=gap, start=start,
                       progress=progress, progress_every=progress_every, presolve=presolve)


def _solve_here(model: CheckmateModel, *, integral: bool, time_limit: float | None, threads: int | None,
                gap: float, start: np.ndarray | None, progress, progress_every: float,
                on_incumbent=None, presolve: bool = True) -> SolveResult:
    """``solve_highs`` in this process (``on_incumbent(x, objective)`` on every improving MIP solution)."""
    h, clock = _load_highs(model, integral, threads, gap)
    if integral and not presolve:
        h.setOptionValue("presolve", "off")
    if start is not None and integral:
        h.setSolution(model.num_col, np.arange(model.num_col, dtype=np.int32), np.asarray(start, dtype=float))
    failed: list[BaseException] = []
    off = float(model.offset)
    if progress is not None and integral:
        _subscribe_progress(h, progress, progress_every, failed, off)
    if on_incumbent is not None and integral:
        h.cbMipImprovingSolution.subscribe(
            lambda e: on_incumbent(np.array(e.data_out.mip_solution, dtype=float),
                                   e.data_out.objective_function_value - off))
    return _run_highs(h, clock, integral, time_limit, failed, model)


HARD_STOP_GRACE = 0.5
"""Seconds past the time limit after which a MILP solve's process is killed. The limit is the user's wall clock
(issue #12 item 5): with 5 s (plus 5% of the limit) here, approx's feasibility MILP on a torchvision
MobileNetV3-small's 171 units, given 4.7 s, was killed 10 s after it started, and `approx` and `checkmate` under
a 25 s limit returned after 30.4 s (``results/lead17/scripts/overrun.py``). Every improving solution and the
bound reach the parent as HiGHS finds them, so a kill loses only the final status of a solve that would have
ended within this grace anyway."""


def hard_stop(start: float, time_limit: float) -> float:
    """The ``time.perf_counter()`` value at which ``_solve_isolated`` kills a solve started at ``start``."""
    return start + time_limit + HARD_STOP_GRACE


def _solve_isolated(model: CheckmateModel, *, time_limit: float, threads: int | None, gap: float,
                    start: np.ndarray | None, progress, progress_every: float, presolve: bool = True) -> SolveResult:
    """The MILP in a child process (``python -m remc.backends._highs_worker``), stopped for certain at the
    time limit.

    HiGHS checks its time limit and interrupt callbacks in the MIP search, but not inside every step:
    its MIP presolve on dense budget rows, and the dual simplex of the root LP (a separate LP solver
    inside the MIP that the user callbacks do not reach), ran minutes past a 20 s limit on small zoo
    graphs. The child sends every improving solution and progress report as it goes; if it has not
    returned HARD_STOP_GRACE seconds after the limit, it is killed and the best solution it
    sent is the result, with status "time_limit".
    """
    import pickle
    import queue
    import subprocess
    import threading

    t0 = time.perf_counter()
    rfd, wfd = os.pipe()
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    try:
        proc = subprocess.Popen([sys.executable, "-m", "remc.backends._highs_worker", str(wfd), str(os.getpid())],
                                stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                pass_fds=(wfd,), env=env, start_new_session=True)
    finally:
        os.close(wfd)
    inbox: queue.Queue = queue.Queue()

    def read() -> None:
        with os.fdopen(rfd, "rb") as f:
            while True:
                try:
                    inbox.put(pickle.load(f))
                except Exception:  # EOF: the child ended or was killed
                    inbox.put(("eof", None))
                    return

    reader = threading.Thread(target=read, daemon=True, name="remc-highs-reader")
    reader.start()
    opts = dict(threads=threads, gap=gap, start=start, progress_every=progress_every,
                deadline=time.time() + time_limit, want_progress=progress is not None, presolve=presolve)
    try:
        pickle.dump((model, opts), proc.stdin, protocol=pickle.HIGHEST_PROTOCOL)
        proc.stdin.close()
    except OSError:  # the child died at start; its end of the pipe says why (an "error" message) or EOF
        pass
    hard = hard_stop(t0, time_limit)
    best_x, best_obj, bound, result, error = None, math.inf, -math.inf, None, None
    try:
        while result is None and error is None:
            left = hard - time.perf_counter()
            if left <= 0:
                break
            try:
                kind, payload = inbox.get(timeout=min(left, 0.5))
            except queue.Empty:
                # a heartbeat: HiGHS reports nothing while it presolves or solves its root LP, and a caller
                # stops the solve by raising in ``progress`` (e.g. passes/feasible.py's race)
                if progress is not None:
                    progress(best_obj, bound, time.perf_counter() - t0)
                continue
            if kind == "incumbent":
                x, obj = payload
                if obj < best_obj:
                    best_x, best_obj = x, obj
            elif kind == "progress":
                if math.isfinite(payload[1]):
                    bound = max(bound, payload[1])
                progress(*payload)
            elif kind == "result":
                result = payload
            elif kind == "error":
                error = payload
            else:  # eof
                error = f"the solver process ended without a result (exit code {proc.wait(5)})"
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait(5)
    if result is not None:
        return result
    if error is not None:
        from ..ir.errors import SolverError
        raise SolverError(f"HiGHS failed in its solver process: {error}")
    return SolveResult("time_limit", best_x, best_obj if best_x is not None else math.inf, bound,
                       time.perf_counter() - t0, 0)


def isolated_main(fd: int, parent: int) -> None:
    """Body of the child process of ``_solve_isolated``: read (model, options) from stdin, solve, and write
    pickled (kind, payload) messages to file descriptor ``fd``. Dies with process ``parent``."""
    import pickle

    die_with_parent(parent)

    out = os.fdopen(fd, "wb")

    def send(msg) -> None:
        pickle.dump(msg, out, protocol=pickle.HIGHEST_PROTOCOL)
        out.flush()

    try:
        model, opts = pickle.load(sys.stdin.buffer)
        progress = (lambda *a: send(("progress", a))) if opts["want_progress"] else None
        res = _solve_here(model, integral=True, time_limit=max(opts["deadline"] - time.time(), 1e-3),
                          threads=opts["threads"], gap=opts["gap"], start=opts["start"], progress=progress,
                          progress_every=opts["progress_every"], on_incumbent=lambda x, obj: send(("incumbent", (x, obj))),
                          presolve=opts.get("presolve", True))
        send(("result", res))
    except BaseException as e:  # reported to the parent, which raises
        try:
            send(("error", f"{type(e).__name__}: {e}"))
        except Exception:
            pass
    finally:
        try:
            out.close()
        except Exception:
            pass


class LpSession:
    """The LP relaxation of one model in one HiGHS instance, re-solved at other budgets from its last
    basis (dual simplex after a bound change): an eps search costs little more than one LP."""

    def __init__(self, model: CheckmateModel, *, threads: int | None = None) -> None:
        self.model = model
        self._h, self._clock = _load_highs(model, False, threads, 1e-4)
        self._rows = model.budget_rows if model.budget_rows is not None else np.zeros(0, np.int64)
        self._cols = model.budget_cols()

    def solve(self, budget: int, *, time_limit: float | None = None) -> SolveResult:
        """The LP at ``budget`` bytes."""
        room = self.model.scale.room(budget)
        h = self._h
        if len(self._rows):
            k = len(self._rows)
            h.changeRowsBounds(k, self._rows.astype(np.int32), np.full(k, -np.inf), np.full(k, room))
        if len(self._cols):
            k = len(self._cols)
            h.changeColsBounds(k, self._cols.astype(np.int32), np.zeros(k), np.full(k, room))
        return _run_highs(h, self._clock, False, time_limit, [], self.model)


def _load_highs(model: CheckmateModel, integral: bool, threads: int | None, gap: float):
    """A silent Highs instance holding ``model``, and its deadline clock (see ``_Deadline``)."""
    import highspy

    global _scheduler_threads
    want = int(threads or 0)
    if _scheduler_threads is not None and _scheduler_threads != want:
        highspy.Highs.resetGlobalScheduler(True)  # HiGHS refuses a new thread count otherwise
    _scheduler_threads = want
    h = _new_highs()
    h.silent()
    h.setOptionValue("threads", want)
    h.setOptionValue("mip_rel_gap", float(gap))
    if not integral:
        h.setOptionValue("presolve", LP_PRESOLVE)
    A = model.A
    kind = model.integral.astype(np.int32) if integral else np.zeros(model.num_col, np.int32)
    status = h.passModel(model.num_col, model.num_row, int(A.nnz), 1, 1, float(model.offset), model.col_cost,
                         model.col_lower,
                         model.col_upper, model.row_lower, model.row_upper, A.indptr.astype(np.int32),
                         A.indices.astype(np.int32), A.data.astype(float), kind)
    if status == highspy.HighsStatus.kError:
        raise RuntimeError("HiGHS rejected the model (passModel returned an error)")
    clock = _Deadline()
    h.cbMipInterrupt.subscribe(clock.check)
    h.cbSimplexInterrupt.subscribe(clock.check)
    return h, clock


def _run_highs(h, clock: _Deadline, integral: bool, time_limit: float | None,
               failed: list[BaseException], model: CheckmateModel | None = None) -> SolveResult:
    """Run ``h`` (within ``time_limit`` seconds of this call) and read its result.

    For an LP the bound is ``safe_dual_bound`` of HiGHS' row duals whenever it has a dual vector for the
    original LP (at the optimum, and at a time limit when presolve is off), else -inf (``model`` needed).
    """
    h.setOptionValue("time_limit", math.inf if time_limit is None else h.getRunTime() + float(time_limit))
    clock.start(time_limit)
    before = h.getRunTime()
    h.run()
    if failed:
        raise failed[0]
    info = h.getInfo()
    name = h.getModelStatus().name
    st = _HIGHS_STATUS.get(name, name.removeprefix("k").lower())
    if clock.late and st == "interrupted":
        st = "time_limit"
    has_x = info.primal_solution_status == 2  # kSolutionStatusFeasible
    x = np.asarray(h.getSolution().col_value) if has_x else None
    off = float(model.offset) if model is not None else 0.0
    obj = info.objective_function_value - off if has_x else math.inf
    if integral:
        bound = info.mip_dual_bound - off
        if has_x and math.isfinite(obj):
            # HiGHS prunes a node whose LP bound is within max(feasibility tolerance, absolute gap, relative gap x
            # incumbent) of the incumbent (HighsMipSolverData::computeNewUpperLimit, for an objective it does not
            # find integral) and leaves it out of its dual bound, which then reaches the incumbent: at most the
            # incumbent less that tolerance is proven (ir/report.py SOLVER_RESOLUTION)
            tol = max(*(float(h.getOptionValue(k)[1]) for k in ("mip_feasibility_tolerance", "mip_abs_gap")),
                      float(h.getOptionValue("mip_rel_gap")[1]) * abs(info.objective_function_value))
            bound = min(bound, obj - tol)
    else:
        bound = _lp_bound(h, model) if model is not None else (obj if st == "optimal" else -math.inf)
    return SolveResult(st, x, obj, bound, h.getRunTime() - before, int(info.mip_node_count) if integral else 0)


def _lp_bound(h, model: CheckmateModel) -> float:
    """``safe_dual_bound`` of the row duals HiGHS holds for ``model``'s LP, or -inf when it holds none."""
    sol = h.getSolution()
    if not sol.dual_valid:
        return -math.inf
    y = np.asarray(sol.row_dual, dtype=float)
    if len(y) != model.num_row or not np.isfinite(y).all():
        return -math.inf
    return safe_dual_bound(model, y)


class _Deadline:
    """Interrupts HiGHS once the deadline has passed: its own time limit is not checked inside long root
    cut loops (a 285 s limit ran 378 s on a 197-unit VGG16)."""

    def __init__(self) -> None:
        self.deadline = math.inf
        self.late = False

    def start(self, time_limit: float | None) -> None:
        self.deadline = math.inf if time_limit is None else time.perf_counter() + time_limit
        self.late = False

    def check(self, e) -> None:
        if time.perf_counter() > self.deadline:
            self.late = True
            e.interrupt()


_banner_done = False


def _new_highs():
    """A Highs instance; the first one in the process is made with fd 1 muted (HiGHS prints a banner)."""
    import highspy

    global _banner_done
    if _banner_done:
        return highspy.Highs()
    _banner_done = True
    try:
        sys.stdout.flush()
        saved, null = os.dup(1), os.open(os.devnull, os.O_WRONLY)
    except (OSError, ValueError):
        return highspy.Highs()
    try:
        os.dup2(null, 1)
        h = highspy.Highs()
        ctypes.CDLL(None).fflush(None)
    finally:
        os.dup2(saved, 1)
        os.close(saved)
        os.close(null)
    return h


def _subscribe_progress(h, progress, every: float, failed: list[BaseException], offset: float) -> None:
    """Forward HiGHS MIP callbacks to ``progress``; an exception in it stops the solve and is kept."""
    last = [-math.inf]

    def report(e, force: bool) -> None:
        d = e.data_out
        if failed:
            e.interrupt()
        elif force or d.running_time - last[0] >= every:
            last[0] = d.running_time
            try:
                progress(d.mip_primal_bound - offset, d.mip_dual_bound - offset, d.running_time)
            except BaseException as exc:  # re-raised by solve_highs once HiGHS has stopped
                failed.append(exc)
                e.interrupt()

    h.cbMipImprovingSolution.subscribe(lambda e: report(e, True))
    h.cbMipInterrupt.subscribe(lambda e: report(e, False))
