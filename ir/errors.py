"""Errors remc reports to users: one clear message, no traceback."""
from __future__ import annotations


class RemcError(Exception):
    """Base of every error the CLI prints as a one-line message and exits non-zero on."""


class ModelError(RemcError):
    """The input model is unreadable, malformed or unsupported (bad file, cycle, dtype, dynamic dim)."""


class UnsupportedOpError(ModelError):
    """An operator has no rule (gradient, cost or lowering) in remc."""

    def __init__(self, op_type: str, node_name: str, what: str = "gradient rule") -> None:
        super().__init__(f"no {what} for op {op_type!r} (node {node_name!r})")
        self.op_type = op_type
        self.node_name = node_name


class InfeasibleError(RemcError):
    """No schedule fits the memory budget; carries the least feasible budget or a lower bound on it."""

    def __init__(self, message: str, least_feasible: int | None = None) -> None:
        super().__init__(message)
        self.least_feasible = least_feasible


class SolverError(RemcError):
    """A solver is missing, unlicensed, or stopped without a usable schedule."""


class NoScheduleInTime(SolverError):
    """A solver's time limit passed before it found any schedule within the budget (none is proven to exist
    or not)."""


class PlanError(RemcError):
    """A plan is malformed or invalid against its graph (parse error, validator rejection)."""


class RuntimeFailure(RemcError):
    """Running a graph on ONNX Runtime failed (out of memory, missing provider, mismatched outputs)."""
