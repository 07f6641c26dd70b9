"""Byte sizes: parse '6GiB', '512MiB', '1.5e9' or plain bytes; print them for humans."""
from __future__ import annotations

import re

from .errors import RemcError

_UNITS = {"": 1, "b": 1, "k": 10**3, "kb": 10**3, "m": 10**6, "mb": 10**6, "g": 10**9, "gb": 10**9,
          "t": 10**12, "tb": 10**12, "kib": 2**10, "mib": 2**20, "gib": 2**30, "tib": 2**40}
_SIZE = re.compile(r"^\s*([0-9]*\.?[0-9]+(?:e[+-]?[0-9]+)?)\s*([a-z]*)\s*$", re.IGNORECASE)


def parse_size(text: str) -> int:
    """Bytes in ``text`` ('6GiB', '512MiB', '100MB', '123456'); RemcError when unreadable."""
    m = _SIZE.match(str(text))
    if not m or m.group(2).lower() not in _UNITS:
        raise RemcError(f"cannot read size {text!r}: expected bytes or a number with a unit such as 512MiB or 6GiB")
    value = float(m.group(1)) * _UNITS[m.group(2).lower()]
    if value <= 0:
        raise RemcError(f"size {text!r} must be positive")
    return int(value)


def format_size(nbytes: float) -> str:
    """'512 B', '1.0 KiB', '12.3 MiB', '2.0 TiB' (binary units, one decimal): the one byte formatter."""
    if abs(nbytes) < 1024:
        return f"{int(nbytes)} B"
    x = float(nbytes)
    for unit in ("KiB", "MiB", "GiB", "TiB", "PiB"):
        x /= 1024.0
        if abs(x) < 1024 or unit == "PiB":
            return f"{x:.1f} {unit}"
    raise AssertionError("unreachable")


def describe_size(nbytes: int) -> str:
    """'512 B', or '1.5 MiB (1572864 bytes)' where the unit rounds: for messages that must be exact."""
    return format_size(nbytes) if abs(nbytes) < 1024 else f"{format_size(nbytes)} ({nbytes} bytes)"
