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
    """'12.3 MiB' style, binary units."""
    n = float(nbytes)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if abs(n) < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    raise AssertionError("unreachable")
