"""Gurobi behind the solver interface of the passes (passes/solver_api.py); needs gurobipy and a licence
that covers the model's size (pip install 'remc[gurobi]')."""
from __future__ import annotations

import math

import numpy as np

from ..ir.errors import SolverError
from ..passes.milp_model import CheckmateModel
from ..passes.solver_api import SolveResult


class GurobiBackend:
    """Gurobi as a ``SolverBackend`` (MILP and LP; the LP session re-solves from scratch)."""

    name = "gurobi"

    def solve(self, model: CheckmateModel, *, integral: bool, time_limit: float | None = None,
              threads: int | None = None, gap: float = 1e-4, start: np.ndarray | None = None,
              progress=None) -> SolveResult:
        try:
            import gurobipy as gp
            from gurobipy import GRB
        except ImportError:
            raise SolverError("gurobipy is not installed; pip install 'remc[gurobi]'") from None
        try:
            with gp.Env(params={"OutputFlag": 0}) as env, gp.Model("checkmate", env=env) as m:
                return _run(m, model, GRB, integral, time_limit, threads, gap, start, progress)
        except gp.GurobiError as e:
            if e.errno == 10010:
                raise SolverError(f"Gurobi's licence is size-limited and this model has {model.num_col} variables "
                                  f"and {model.num_row} constraints (the pip licence allows 2000 of each): install "
                                  "a full Gurobi licence or use solver='highs'") from None
            raise SolverError(f"Gurobi failed: {e}") from None

    def lp_session(self, model: CheckmateModel, *, threads: int | None = None) -> _GurobiLp:
        return _GurobiLp(self, model, threads)


class _GurobiLp:
    """An LP session that re-solves the relaxation with the budget bounds changed (no basis reuse)."""

    def __init__(self, backend: GurobiBackend, model: CheckmateModel, threads: int | None) -> None:
        self.backend, self.model, self.threads = backend, model, threads

    def solve(self, budget: int, *, time_limit: float | None = None) -> SolveResult:
        import dataclasses
        m = self.model
        room = m.scale.room(budget)
        row_upper, col_upper = m.row_upper.copy(), m.col_upper.copy()
        if m.budget_rows is not None:
            row_upper[m.budget_rows] = room
        col_upper[m.budget_cols()] = room
        at = dataclasses.replace(m, row_upper=row_upper, col_upper=col_upper)
        return self.backend.solve(at, integral=False, time_limit=time_limit, threads=self.threads)


def _run(m, model: CheckmateModel, GRB, integral: bool, time_limit: float | None, threads: int | None,
         gap: float, start: np.ndarray | None, progress) -> SolveResult:
    """Load ``model`` into Gurobi model ``m``, optimize, and read the result back (offset excluded)."""
    vtype = np.where(model.integral & integral, GRB.BINARY, GRB.CONTINUOUS)
    x = m.addMVar(model.num_col, lb=model.col_lower, ub=model.col_upper, obj=model.col_cost, vtype=vtype)
    m.ObjCon = float(model.offset)
    lo, hi = model.row_lower, model.row_upper
    sense = np.where(lo == hi, GRB.EQUAL, np.where(np.isfinite(hi), GRB.LESS_EQUAL, GRB.GREATER_EQUAL))
    m.addMConstr(model.A.tocsr(), x, sense, np.where(np.isfinite(hi), hi, lo))
    if time_limit is not None:
        m.Params.TimeLimit = float(time_limit)
    if threads:
        m.Params.Threads = int(threads)
    m.Params.MIPGap = float(gap)
    if start is not None and integral:
        x.Start = start
    off = float(model.offset)
    m.optimize(None if progress is None or not integral else _callback(progress, GRB, off))
    status = {GRB.OPTIMAL: "optimal", GRB.TIME_LIMIT: "time_limit", GRB.INFEASIBLE: "infeasible",
              GRB.INTERRUPTED: "interrupted", GRB.INF_OR_UNBD: "infeasible"}.get(m.Status, f"gurobi_{m.Status}")
    has = m.SolCount > 0
    if integral:
        bound = m.ObjBound - off if status != "infeasible" else math.inf
    else:
        bound = m.ObjVal - off if status == "optimal" else -math.inf
    return SolveResult(status, np.asarray(x.X) if has else None, m.ObjVal - off if has else math.inf, bound,
                       m.Runtime, int(m.NodeCount) if integral else 0)


def _callback(progress, GRB, off: float):
    def cb(m, where) -> None:
        if where == GRB.Callback.MIP:
            inc, bnd = m.cbGet(GRB.Callback.MIP_OBJBST), m.cbGet(GRB.Callback.MIP_OBJBND)
            progress(inc - off, bnd - off, m.cbGet(GRB.Callback.RUNTIME))
    return cb
