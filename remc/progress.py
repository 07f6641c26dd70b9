"""A live solver display (incumbent, bound, gap, elapsed) on stderr while the MILP or LP runs."""
from __future__ import annotations

import contextlib
import sys
from typing import Iterator

from . import pipeline

SOLVERS = ("checkmate",)
"""Strategies that take a ``progress`` callback (approx does not, yet)."""


@contextlib.contextmanager
def solver_progress(strategy: str, *, enabled: bool = True) -> Iterator[dict]:
    """Yields the solver keyword arguments ({'progress': callback} or {}) and registers the callback for
    the compile pipeline. Shows nothing unless stderr is a terminal (and ``enabled``)."""
    if strategy not in SOLVERS or not enabled or not sys.stderr.isatty():
        yield {}
        return
    from rich.console import Console
    from rich.live import Live
    from rich.text import Text

    live = Live(Text("solving ..."), console=Console(stderr=True), refresh_per_second=4, transient=True)

    def show(info: dict) -> None:
        parts = [f"{strategy}: {info.get('elapsed', 0.0):7.1f} s"]
        for key, fmt in (("incumbent", "incumbent {:.6g}"), ("bound", "bound {:.6g}")):
            if info.get(key) is not None:
                parts.append(fmt.format(info[key]))
        if info.get("gap") is not None:
            parts.append(f"gap {100 * info['gap']:.2f}%")
        live.update(Text("  ".join(parts)))

    pipeline.PROGRESS[strategy] = show
    try:
        with live:
            yield {"progress": show}
    finally:
        pipeline.PROGRESS.pop(strategy, None)
