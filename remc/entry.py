"""The ``remc`` console command: quiet on SIGINT/SIGTERM/SIGHUP from its first instant, then the CLI.

Importing the CLI and building its parser loads numpy, scipy and onnx (about half a second); a Ctrl-C
in that time used to end in a KeyboardInterrupt traceback. Until ``cli.main`` installs its own handlers
(which raise, so that temporary files are removed), a signal here ends the process with one line and
128 + the signal's number: nothing has been written yet. A signal the process was started with ignored
stays ignored. The only window left is the interpreter's own start-up, before any remc code runs.
"""
from __future__ import annotations

import os
import signal
import sys
from types import FrameType

_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


def _quit(signo: int, frame: FrameType | None) -> None:
    os.write(2, f"remc: interrupted by {signal.Signals(signo).name}\n".encode())
    os._exit(128 + signo)


def main() -> int:
    """Install the early handlers, then run ``remc.cli.main`` on ``sys.argv``."""
    for s in _SIGNALS:
        if signal.getsignal(s) != signal.SIG_IGN:
            signal.signal(s, _quit)
    from .cli import main as cli_main
    return cli_main()


if __name__ == "__main__":
    sys.exit(main())
