"""The typed report a strategy leaves on its schedule (status, cost, peak, bound, gap, seconds, extras)."""
from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

GAP_MEASURES = ("overhead", "total")
"""How a gap is measured: ``overhead``: (cost - bound) / (cost - sum of all costs), the share of the
recomputation overhead not yet proven necessary; ``total``: (cost - bound) / cost."""


@dataclass
class SolveReport:
    """What a strategy says about its schedule. Fields are None where a strategy has nothing to say;
    ``extras`` holds strategy-specific details (eps tried, rounding rule, model sizes, ...).

    It also reads as a mapping (``rep["cost"]``, ``rep.get(...)``, ``items()``) over the fields that are set
    followed by the extras, which is what plans record and JSON prints."""

    status: str = "heuristic"
    """"optimal" (gap within the requested gap), "time_limit", "feasible", "heuristic", ..."""
    cost: float | None = None
    """The schedule's exact cost (eq. 1a)."""
    peak: int | None = None
    """The schedule's exact peak in bytes."""
    bound: float | None = None
    """A proven lower bound on the least cost of any schedule within the budget (None: none proven)."""
    gap: float | None = None
    """(cost - bound) measured as ``gap_measure`` says; inf when there is no bound."""
    gap_measure: str | None = None
    """One of GAP_MEASURES."""
    seconds: float | None = None
    """Wall-clock seconds of the whole strategy, every phase included."""
    solver: str | None = None
    bound_source: str | None = None
    """Where ``bound`` comes from ("solver", "lp", "sum of costs", ...)."""
    extras: dict[str, Any] = field(default_factory=dict)

    _FIELDS = ("status", "cost", "peak", "bound", "gap", "gap_measure", "seconds", "solver", "bound_source")

    @classmethod
    def from_dict(cls, d: dict[str, Any] | None) -> SolveReport:
        """A report from a plain dict: known keys fill fields, the rest go to ``extras``."""
        d = dict(d or {})
        known = {k: d.pop(k) for k in cls._FIELDS if k in d}
        return cls(**known, extras=d)

    def set_gap(self, base: float, measure: str = "overhead") -> None:
        """Fill ``gap`` from ``cost`` and ``bound``; ``base`` is the sum of all costs (each unit once)."""
        if measure not in GAP_MEASURES:
            raise ValueError(f"gap measure must be one of {GAP_MEASURES}, got {measure!r}")
        self.gap_measure = measure
        self.gap = gap_of(self.cost, self.bound, base, measure)

    # mapping view ---------------------------------------------------------------------------------
    def _items(self) -> Iterator[tuple[str, Any]]:
        for k in self._FIELDS:
            v = getattr(self, k)
            if v is not None:
                yield k, v
        yield from self.extras.items()

    def items(self):
        return list(self._items())

    def keys(self):
        return [k for k, _ in self._items()]

    def __iter__(self) -> Iterator[str]:
        return iter(self.keys())

    def __len__(self) -> int:
        return len(self.keys())

    def __contains__(self, key: object) -> bool:
        return key in self.keys()

    def __getitem__(self, key: str) -> Any:
        if key in self._FIELDS:
            v = getattr(self, key)
            if v is None:
                raise KeyError(key)
            return v
        return self.extras[key]

    def get(self, key: str, default: Any = None) -> Any:
        try:
            return self[key]
        except KeyError:
            return default

    def __setitem__(self, key: str, value: Any) -> None:
        if key in self._FIELDS:
            setattr(self, key, value)
        else:
            self.extras[key] = value

    def update(self, other: dict[str, Any] | None = None, **kw: Any) -> None:
        for k, v in {**(other or {}), **kw}.items():
            self[k] = v

    def as_dict(self) -> dict[str, Any]:
        return dict(self._items())

    def __eq__(self, other: object) -> bool:
        if isinstance(other, SolveReport):
            return dataclasses.astuple(self) == dataclasses.astuple(other)
        if isinstance(other, dict):
            return self.as_dict() == other
        return NotImplemented


def gap_of(cost: float | None, bound: float | None, base: float, measure: str = "overhead") -> float | None:
    """The gap of ``cost`` over ``bound``: on the overhead above ``base`` (every unit computed once) or on the
    total. 0 when cost <= bound (or the overhead is 0); inf without a bound; None without a cost."""
    if cost is None:
        return None
    if bound is None or not math.isfinite(bound):
        return math.inf
    if cost - bound <= 0:
        return 0.0
    denom = (cost - base) if measure == "overhead" else cost
    return (cost - bound) / denom if denom > 0 else 0.0


SOLVER_RESOLUTION = 1e-6
"""What a solver's proof resolves, as a fraction of the costliest unit's cost: HiGHS prunes every node whose LP bound
is within its ``mip_feasibility_tolerance`` (1e-6, model units, the costliest unit being 1) of the incumbent, also at
a gap of 0, and leaves those nodes out of its dual bound (backends/highs.py ``_run_highs``)."""


def within_gap(cost: float, bound: float, base: float, gap: float, unit: float = 0.0) -> bool:
    """Whether ``bound`` proves ``cost`` within ``gap`` of the recomputation overhead (cost - ``base``), or within the
    solvers' resolution (``SOLVER_RESOLUTION`` of ``unit``, the costliest unit's cost): what "optimal" means."""
    return cost - bound <= gap * max(cost - base, 0.0) + 1e-9 * max(abs(cost), 1.0) + SOLVER_RESOLUTION * unit
