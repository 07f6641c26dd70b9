"""Device names: 'cpu', 'cuda', 'cuda:<id>'."""
from __future__ import annotations


def parse_device(device: str) -> tuple[str, int]:
    """'cpu' -> ('cpu', 0); 'cuda' / 'cuda:1' -> ('cuda', id). ValueError otherwise (the CLI turns it into one line)."""
    kind, _, idx = device.lower().partition(":")
    if kind not in ("cpu", "cuda") or (idx and not idx.isdigit()):
        raise ValueError(f"unknown device {device!r}: expected 'cpu', 'cuda' or 'cuda:<id>'")
    return kind, int(idx or 0)
