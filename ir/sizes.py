"""Byte sizes: parse '6GiB', '512MiB', '1.5e9' or plain bytes; print them for humans."""
from __future__ import annotations

import re
from decimal import Decimal

from .errors import RemcError

_UNITS = {"": 1, "b": 1, "k": 10**3, "kb": 10**3, "m": 10**6, "mb": 10**6, "g": 10**9, "gb": 10**9,
          "t": 10**12, "tb": 10**12, "kib": 2**10, "mib": 2**20, "gib": 2**30, "tib": 2**40}
_SIZE = re.compile(r"^\s*([0-9]*\.?[0-9]+(?:e[+-]?[0-9]+)?)\s*([a-z]*)\s*$", re.IGNORECASE)


MAX_SIZE = 2**63 - 1
"""The largest size remc accepts (solvers and ONNX Runtime count bytes in signed 64-bit integers)."""


def parse_size(text: str) -> int:
    """Bytes in ``text`` ('6GiB', '512MiB', '100MB', '123456', '1.5e9'); RemcError when unreadable.

    Sizes are whole bytes from 1 to ``MAX_SIZE``. A number with a unit is rounded down to whole bytes
    ('0.1KiB' is 102 bytes); a plain number is a count of bytes and must be whole ('0.5' is refused, as
    it is half a byte; write '0.5GiB' for half a gibibyte). The arithmetic is exact (decimal), so '1e999'
    is refused as too large rather than read as infinity.
    """
    m = _SIZE.match(str(text))
    if not m or m.group(2).lower() not in _UNITS:
        raise RemcError(f"cannot read size {text!r}: expected bytes or a number with a unit such as 512MiB or 6GiB")
    number, unit = Decimal(m.group(1)), m.group(2).lower()
    if number.adjusted() > 30:  # beyond any unit's reach of MAX_SIZE; keeps the product small
        raise RemcError(f"size {text!r} is too large (at most {MAX_SIZE} bytes)")
    value = number * _UNITS[unit]
    if _UNITS[unit] == 1 and value != value.to_integral_value():
        raise RemcError(f"size {text!r} is not a whole number of bytes; give a unit (e.g. {text}GiB) or bytes")
    nbytes = int(value)  # rounds toward zero
    if nbytes < 1:
        raise RemcError(f"size {text!r} is less than 1 byte" if value > 0 else f"size {text!r} must be positive")
    if nbytes > MAX_SIZE:
        raise RemcError(f"size {text!r} is too large (at most {MAX_SIZE} bytes)")
    return nbytes


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
