"""One wall clock for a whole ``remc compile``: ``--time-limit`` covers every phase, not each solve.

The clock starts when the compile starts. Each phase asks it for a deadline, computed from that one
start, so the phases share the limit instead of each getting all of it:

- ``kernel memory`` first (``remc compile``, right after the import): until ``KERNEL_FIRST_SHARE``;
- ``costs`` (profiling op signatures on the device, a first compile only: later ones read the cache) may
  run until ``PROFILE_SHARE`` of the limit; signatures not timed by then are priced by FLOPs scaled by
  the measured seconds per FLOP (``backends.profile``), and the report says how many;
- ``kernel memory`` again (measured per op signature for the arena fit, also cached) until ``KERNEL_SHARE``;
  signatures not measured by then are not in the arena prediction, and the report says so;
- the first solve gets ``FIRST_ROUND_SHARE`` of what is left (less an estimate of the steps after it);
  each later fit round (a re-solve at a
  tighter solver budget, warm from the previous schedule) ``LATER_ROUND_SHARE`` of what is left then; the
  rest is for plan, lower, the arena check and the write (``--no-fit``: the one solve gets
  ``ONLY_ROUND_SHARE``). A strategy without a time limit (the baselines) is not cut.

Every phase is recorded with its seconds and the deadline it was given, both on this clock, so the
report can show where the time went and a test can check the accounting without timing anything.

``remc compile`` starts the clock at the process's own start (``process_age``): Python's start-up and the
imports before ``cmd_compile`` (0.3-4 s on a loaded machine) are the ``start-up`` phase, inside the limit.
"""
from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

KERNEL_FIRST_SHARE = 0.20
"""``remc compile`` measures kernel memory before it profiles op costs, until this share of the limit
(``fit.measure_kernels_first``: a kernel left unmeasured makes a plan need more than predicted, an op left
unprofiled only makes it cost more)."""
KERNEL_FIRST_LEAST = 0.10
"""``fit.measure_kernels_first`` runs at least this share of the limit from its start, even where the start-up
and the import passed KERNEL_FIRST_SHARE already (the later phases keep to their shares and get less): a torchvision
swin_t compiled cold with a 60 s limit beside another compile at a load of 11 took 7.5 s to start and 4.2 s to
import, and measured none of its 450 kernel signatures."""
PROFILE_SHARE = 0.30
"""Profiling may run until this share of the limit (at b256 a cold ResNet50 profile takes ~390 s alone)."""
KERNEL_SHARE = 0.40
"""Kernel-memory measurement may run until this share of the limit (from the compile's start), after the units
pass (``compile_fit``: what the first measurement left)."""
FIRST_ROUND_SHARE = 0.85
"""Share of the time left, less twice what the arena estimate of the input graph took (plan, lower and the
arena check after the solve take about that), that the first solve gets; the rest is for later rounds
(rare: the first round solves at the budget less the input graph's arena excess, remc/fit.py)."""
LATER_ROUND_SHARE = 0.5
"""Share of the time left that each later fit round's solve gets."""
ONLY_ROUND_SHARE = 0.95
"""Share of the time left that the solve gets when no fit round follows (``--no-fit``)."""
MIN_SOLVE_SECONDS = 0.05
"""Least time limit a solve is given (a strategy with no time returns its incumbent at once)."""


@dataclass(frozen=True)
class PhaseTime:
    """One phase of the compile: its name, when it started and ended and its deadline, as seconds on the
    compile's clock (None: no deadline)."""

    name: str
    start: float
    end: float
    deadline: float | None = None
    slowdown: float = 1.0
    """The compile's slowdown (``CompileClock.slowdown``) when the phase ended."""

    @property
    def seconds(self) -> float:
        return self.end - self.start


@dataclass
class CompileClock:
    """The compile's clock (module docstring). ``now`` is injectable so that tests check the accounting
    without timing anything."""

    time_limit: float | None
    now: Callable[[], float] = field(default=time.perf_counter, repr=False)
    phases: list[PhaseTime] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    """What a phase did differently because of the limit (said in the report, never silent)."""

    started_ago: float = 0.0
    """Seconds the compile had run before this clock was made (``process_age``: the interpreter's start and
    the imports), recorded as the ``start-up`` phase and counted against the limit."""
    cpu: Callable[[], float] | None = field(default=None, repr=False)
    """CPU seconds this process (and the children it waited for) has used since it started (``process_cpu``,
    the default where ``now`` is the real clock); with an injected ``now`` and none given, ``slowdown`` is 1."""

    def __post_init__(self) -> None:
        self.start = self.now() - self.started_ago
        if self.cpu is None and self.now is time.perf_counter:
            self.cpu = process_cpu
        if self.started_ago > 0:
            self.record("start-up", 0.0)

    def slowdown(self) -> float:
        """Wall seconds of the compile so far per CPU second it used (``solver_api.measured_slowdown``; 1 without a
        CPU clock or before SLOWDOWN_MIN_SECONDS): how much slower than on a free core the compile runs, measured,
        whatever the load average says. The compile's estimates of CPU work scale by it (``fit._plan_lower_estimate``)."""
        if self.cpu is None:
            return 1.0
        from .passes.solver_api import measured_slowdown
        wall = self.elapsed()
        return 1.0 if wall < SLOWDOWN_MIN_SECONDS else measured_slowdown(wall, self.cpu())

    def elapsed(self) -> float:
        return self.now() - self.start

    def left(self) -> float | None:
        """Seconds left of the limit (None: no limit; never negative)."""
        return None if self.time_limit is None else max(self.time_limit - self.elapsed(), 0.0)

    def until(self, share: float) -> float | None:
        """The deadline at ``share`` of the limit, in seconds on this clock (None: no limit)."""
        return None if self.time_limit is None else share * self.time_limit

    def perf_deadline(self, at: float | None) -> float | None:
        """``at`` (seconds on this clock) as a ``time.perf_counter()`` value, what the passes take."""
        return None if at is None else self.start + at

    def solve_limit(self, share: float, reserve: float = 0.0) -> tuple[float | None, float | None]:
        """(time limit in seconds, deadline on this clock) for a solve starting now that gets ``share`` of
        the time left (FIRST_ROUND_SHARE, LATER_ROUND_SHARE or ONLY_ROUND_SHARE) less ``reserve`` seconds
        (what the steps after the solve took last round: plan, lower, arena check)."""
        if self.time_limit is None:
            return None, None
        now = self.elapsed()
        secs = max(share * max(self.time_limit - now - reserve, 0.0), MIN_SOLVE_SECONDS)
        return secs, now + secs

    def record(self, name: str, start: float, deadline: float | None = None) -> PhaseTime:
        """Record phase ``name`` as having run from ``start`` (seconds on this clock) to now."""
        ph = PhaseTime(name, start, self.elapsed(), deadline, self.slowdown())
        self.phases.append(ph)
        return ph

    def grown(self, name: str) -> float:
        """How much slower the compile runs now than when the last phase ``name`` ended: the ratio of the slowdowns
        (``slowdown``), at least 1 (1 where no such phase was recorded). An estimate made of that phase's seconds
        scales by it (``fit._write_estimate``, ``fit._first_reserve``; SCALE_BY_GROWTH)."""
        ph = next((p for p in reversed(self.phases) if p.name == name), None)
        if ph is None or not SCALE_BY_GROWTH:
            return 1.0
        return max(1.0, self.slowdown() / max(ph.slowdown, 1e-9))

    def text(self) -> str:
        """One line: the whole compile's seconds against the limit, then each phase's seconds (phases of the
        same name, e.g. the fit rounds' solves, joined by +)."""
        parts: dict[str, list[float]] = {}
        for p in self.phases:
            parts.setdefault(p.name, []).append(p.seconds)
        limit = "" if self.time_limit is None else f" of the {self.time_limit:g} s limit"
        return (f"time: {self.elapsed():.1f} s{limit}: "
                + ", ".join(f"{k} " + " + ".join(f"{x:.1f}" for x in v) for k, v in parts.items()))

    def summary(self) -> dict:
        """The report's ``time``: the limit, the seconds of the whole compile so far, and each phase."""
        return {"time_limit": self.time_limit, "seconds": self.elapsed(),
                "phases": [{"phase": p.name, "seconds": p.seconds, "start": p.start, "deadline": p.deadline}
                           for p in self.phases],
                "notes": list(self.notes)}


SCALE_BY_GROWTH = True
"""Estimates of later phases made from an earlier phase's seconds (the write from the import, the arena check from the
arena estimate) scale by how much the compile's slowdown grew since that phase (``CompileClock.grown``): a torchvision
ConvNeXt-T at 0.9x, 60 s, at a load of 13-17 imported in 5.3 s and wrote in 7.3 s, its arena estimate took 3.6 s and
its check 13.9 s, and it ended at 68.8 s (session 21)."""

SLOWDOWN_MIN_SECONDS = 0.5
"""Seconds a compile must have run before its ``CompileClock.slowdown`` is measured (1 before)."""


def process_cpu() -> float:
    """CPU seconds (user and system) of this process and of the children it waited for, since it started."""
    import os
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


def process_age() -> float:
    """Seconds since this process started (Linux: ``/proc/self/stat``'s start time against ``/proc/uptime``);
    0.0 where that cannot be read."""
    import os
    try:
        with open("/proc/self/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        with open("/proc/uptime") as f:
            uptime = float(f.read().split()[0])
        return max(uptime - int(fields[19]) / os.sysconf("SC_CLK_TCK"), 0.0)
    except (OSError, ValueError, IndexError):
        return 0.0
