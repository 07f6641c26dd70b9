"""A live solver display (phase, incumbent, bound, gap, elapsed) on stderr while a solver strategy runs."""
from __future__ import annotations

import contextlib
import math
import sys
from collections.abc import Callable, Iterator

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

    live = Live(Text("solving ..."), console=Console(stderr=True), refresh_per_second=4, transient=True)

    def show(ev: ProgressEvent) -> None:
        parts = [f"{strategy}: {ev.elapsed:7.1f} s"]
        if ev.phase:
            parts.append(ev.phase)
        if ev.incumbent is not None and math.isfinite(ev.incumbent):
            parts.append(f"incumbent {ev.incumbent:.6g}")
        if ev.bound is not None and math.isfinite(ev.bound):
            parts.append(f"bound {ev.bound:.6g}")
        if ev.gap is not None and math.isfinite(ev.gap):
            parts.append(f"gap {100 * ev.gap:.2f}%")
        live.update(Text("  ".join(parts)))

    with live:
        yield show
