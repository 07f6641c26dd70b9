"""A live solver display (phase, incumbent, bound, gap, elapsed) on stderr while a solver strategy runs."""
from __future__ import annotations

import contextlib
import math
import sys
import time
from collections.abc import Callable, Iterator
from typing import Any

from .passes.solver_api import ProgressEvent
from .passes.strategies import SOLVER_NAMES


@contextlib.contextmanager
def solver_progress(strategy: str, *, enabled: bool = True) -> Iterator[Callable[[ProgressEvent], None] | None]:
    """Yields a progress callback for the strategy (pass it as its ``progress`` argument), or None when
    nothing is shown: not a solver strategy, not ``enabled``, or stderr is not a terminal."""
    if strategy not in SOLVER_NAMES or not enabled or not sys.stderr.isatty():
        yield None
        return
    from rich.console import Console
    from rich.live import Live
    from rich.text import Text

    line = _Line(Text)
    live = Live(line, console=Console(stderr=True), refresh_per_second=4, transient=True)
    with live:
        yield _Display(strategy, live, line)


class _Line:
    """What the live display shows, rendered at each refresh (``__rich__``): the text of the last report, with
    its elapsed seconds advanced by the time since that report, so the clock ticks while a phase runs for
    minutes without reporting (approx's stage search on a 1000-unit graph)."""

    def __init__(self, text: Any) -> None:
        self.text, self.head, self.tail, self.elapsed, self.at = text, "reading the model ...", "", None, 0.0

    def show(self, head: str, elapsed: float | None = None, tail: str = "") -> None:
        """Show ``head`` (then, when ``elapsed`` is given, the seconds counting from it, then ``tail``)."""
        self.head, self.elapsed, self.tail, self.at = head, elapsed, tail, time.monotonic()

    def __str__(self) -> str:
        if self.elapsed is None:
            return self.head
        return "  ".join(p for p in (f"{self.head} {self.elapsed + time.monotonic() - self.at:.1f} s", self.tail) if p)

    def __rich__(self) -> Any:
        return self.text(str(self))


class _Display:
    """The live line: a ``note`` (what the command is doing, e.g. the fit round) and the solver's progress."""

    def __init__(self, strategy: str, live: Any, line: _Line) -> None:
        self.strategy, self.live, self.line, self.prefix = strategy, live, line, ""

    def note(self, text: str) -> None:
        """Show ``text`` before the solver's progress from now on."""
        self.prefix = text
        self.line.show(text)
        self.live.refresh()  # now, not at the next tick: a short step still shows

    def status(self, text: str) -> None:
        """Show ``text`` alone until the solver reports (a step before the solve: reading the model, timing costs,
        measuring kernel memory); unlike ``note`` it does not stay before the solver's progress."""
        self.line.show(text)
        self.live.refresh()

    def __call__(self, ev: ProgressEvent) -> None:
        parts = []
        if ev.phase:
            parts.append(ev.phase)
        if ev.incumbent is not None and math.isfinite(ev.incumbent):
            parts.append(f"best {ev.incumbent:.6g}")
        if ev.bound is not None and math.isfinite(ev.bound):
            parts.append(f"bound {ev.bound:.6g}")
        if ev.gap is not None and math.isfinite(ev.gap):
            parts.append(f"gap {100 * ev.gap:.2f}% of overhead")
        head = (self.prefix + ": " if self.prefix else "") + self.strategy
        self.line.show(head, ev.elapsed, "  ".join(parts))


def fit_round_note(progress: Any) -> Callable[[dict[str, Any]], None] | None:
    """A ``compile_fit`` ``on_round`` callback that shows the fit round on the live display (None without one)."""
    note = getattr(progress, "note", None)
    if note is None:
        return None
    from .ir.sizes import format_size

    def show(r: dict[str, Any]) -> None:
        if r.get("slack"):
            note(f"using the budget's slack: the plan needs {format_size(r['predicted'])} of "
                 f"{format_size(r['budget'])} on the device, solving at {format_size(r['solver_budget'])}")
            return
        if r.get("continued"):
            note(f"using the time left: solving again at {format_size(r['solver_budget'])}, from the plan")
            return
        if r.get("raised"):
            note(f"no schedule at {format_size(r['budget'])} in remc's live-bytes model: solving at "
                 f"{format_size(r['solver_budget'])}, the replayed arena decides")
            return
        note(f"fit round {r['round']} (needed {format_size(r['predicted'])} > {format_size(r['budget'])}, "
             f"solving at {format_size(r['solver_budget'])})")
    return show


NEXT_STEP = {"import": "costs", "costs": "units", "units": "kernel memory"}
"""What ``compile_status`` shows after each pass of the compile pipeline, by the pass that ran."""
KERNELS_FIRST_STEP = {"import": "kernel memory", "kernel memory": "costs", "costs": "units", "units": "kernel memory"}
"""``NEXT_STEP`` where kernel memory is measured right after the import (``remc compile``)."""


def compile_status(progress: Any, device: str, cost: str, kernels_first: bool = False) -> Callable[[str], None]:
    """A callback (the name of the pass that just ran) that shows on the live display what the compile does
    next, before the solver reports: a user sees "timing op costs on cpu", not "solving ...". A no-op without
    a display. ``kernels_first``: kernel memory is measured after the import, before the costs."""
    steps = KERNELS_FIRST_STEP if kernels_first else NEXT_STEP
    status = getattr(progress, "status", None)
    texts = {"costs": f"timing op costs on {device} ..." if cost == "profile" else "counting FLOPs ...",
             "units": "grouping nodes into scheduling units ...",
             "kernel memory": f"measuring kernel memory on {device} (cached per op signature) ..."}

    def show(done: str) -> None:
        nxt = steps.get(done)
        if status is not None and nxt is not None:
            status(texts[nxt])
    return show
