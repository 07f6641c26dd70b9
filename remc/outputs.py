"""Output files of one command: checked before the work, written together at its end, or not at all.

``Outputs`` takes the input and output paths of a command when it starts. It refuses (RemcError, one
line) an output that is an input, that equals another output, that is a directory, or whose folder does
not exist, and it creates a hidden staging folder beside each output (so an unwritable folder fails
before any solving). Writers write to ``staged(path)``; ``commit()`` renames every staged file into
place with SIGINT/SIGTERM/SIGHUP blocked, the files beside a staged file first (e.g. external data),
then the staged files in the order they were staged (the model before its plan). Leaving the ``with``
block without a commit, by an error or a signal (``signals.py`` turns SIGTERM and SIGHUP into an
exception), removes the staging folders, so no temporary file survives. (SIGKILL cannot be caught: it
leaves the hidden ``.remc-<pid>-*`` folder beside the output, and no output.)
"""
from __future__ import annotations

import os
import signal
from collections.abc import Iterable, Sequence
from pathlib import Path
from types import TracebackType

from .ir.errors import RemcError

_BLOCKED = {signal.SIGINT, signal.SIGTERM, signal.SIGHUP}


def same_file(a: Path, b: Path) -> bool:
    """True when ``a`` and ``b`` name one file (the same inode, or the same resolved path)."""
    try:
        return os.path.samefile(a, b)
    except OSError:
        return a.resolve() == b.resolve()


def check_readable(path: Path) -> None:
    """Refuse an input that is a directory or cannot be read (a missing one is left to its reader)."""
    if path.is_dir():
        raise RemcError(f"{path}: is a directory, not a file")
    if not path.exists():
        return
    try:
        with open(path, "rb") as f:
            f.read(1)
    except OSError as e:
        raise RemcError(f"{path}: cannot read ({e.strerror or e})") from None


def check_paths(inputs: Iterable[str | os.PathLike | None], outputs: Sequence[tuple[str, str | os.PathLike | None]]
                ) -> None:
    """Refuse unreadable inputs, and outputs that would overwrite an input or each other, are
    directories, or lack a folder.

    ``outputs`` pairs an option name (for the message, e.g. '-o') with its path (None: not given)."""
    ins = [Path(p) for p in inputs if p is not None and str(p) != "-"]
    for src in ins:
        check_readable(src)
    given = [(opt, Path(p), str(p)) for opt, p in outputs if p is not None]
    for k, (opt, out, text) in enumerate(given):
        if out.is_dir() or text.endswith(("/", os.sep)) or out.name in ("", ".", ".."):
            raise RemcError(f"{opt} {out}: is a directory; give a file name")
        folder = out.parent
        if not folder.is_dir():
            raise RemcError(f"{opt} {out}: folder {folder} does not exist")
        for src in ins:
            if same_file(out, src):
                raise RemcError(f"{opt} {out} is the input {src}; refusing to overwrite it")
        for opt2, other, _ in given[:k]:
            if same_file(out, other):
                raise RemcError(f"{opt} {out} is also given as {opt2}; give two different files")


class Outputs:
    """A set of output files written together (see the module docstring)."""

    def __init__(self, outputs: Sequence[tuple[str, str | os.PathLike | None]],
                 inputs: Iterable[str | os.PathLike | None] = ()) -> None:
        check_paths(inputs, outputs)
        self._order: list[tuple[Path, Path]] = []  # (staged, final)
        self._dirs: dict[Path, Path] = {}  # final folder (resolved) -> staging folder
        self._committed = False
        try:
            for opt, p in outputs:
                if p is not None:
                    self._staging_dir(Path(p), opt)
        except BaseException:
            self.discard()
            raise

    def _staging_dir(self, final: Path, opt: str = "output") -> Path:
        folder = final.parent.resolve()
        if folder not in self._dirs:
            import tempfile  # (imported where a file is staged: `remc solve` without --plan writes none)
            # signals held back until the folder is registered: a SIGINT between mkdtemp and the registration
            # left the folder behind (``discard`` did not know it; tests/test_cli_user.py, once in CI)
            old = signal.pthread_sigmask(signal.SIG_BLOCK, _BLOCKED)
            try:
                self._dirs[folder] = Path(tempfile.mkdtemp(prefix=f".remc-{os.getpid()}-", dir=folder))
            except OSError as e:
                raise RemcError(f"{opt} {final}: cannot write in {final.parent} ({e.strerror})") from None
            finally:
                signal.pthread_sigmask(signal.SIG_SETMASK, old)
        return self._dirs[folder]

    def staged(self, final: str | os.PathLike) -> Path:
        """Where to write ``final`` now; it is renamed into place by ``commit``."""
        final = Path(final)
        path = self._staging_dir(final) / final.name
        self._order.append((path, final))
        return path

    def commit(self) -> None:
        """Rename every staged file into place, with the interrupting signals held back meanwhile."""
        old = signal.pthread_sigmask(signal.SIG_BLOCK, _BLOCKED)
        try:
            staged = {s for s, _ in self._order}
            for folder, stage in self._dirs.items():  # files beside the staged ones (external data)
                for extra in sorted(stage.iterdir()):
                    if extra not in staged and not extra.name.startswith("."):
                        os.replace(extra, folder / extra.name)
            for s, final in self._order:
                os.replace(s, final)
            self._committed = True
        finally:
            self.discard()
            signal.pthread_sigmask(signal.SIG_SETMASK, old)

    def discard(self) -> None:
        """Remove the staging folders and whatever is in them (signals held back meanwhile)."""
        old = signal.pthread_sigmask(signal.SIG_BLOCK, _BLOCKED)
        try:
            for stage in self._dirs.values():
                import shutil
                shutil.rmtree(stage, ignore_errors=True)
            self._dirs.clear()
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, old)

    def __enter__(self) -> Outputs:
        return self

    def __exit__(self, typ: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.discard()
