"""Feasibility first, exactly: the MILP of eq. (9) with a zero objective, solved until its first solution.

The heuristics that look for a schedule within a tight budget (the baselines, the eviction pass, the stage
search's least-memory starts, LP rounding and repair) can all miss one that exists: on a 40-unit random
layered DAG at 0.8 of its checkpoint-all peak (tests/test_feasible.py) every one of them fails (the least
peak they reach is 7120 bytes for a budget of 6694) while schedules at 6224 bytes exist. With no cost in its
objective every solution of the model is optimal, so the MIP solver stops at the first one it finds; its
heuristics and branching look for nothing but feasibility. Measured on that graph, 1 thread on the loaded
2 cores: HiGHS found a schedule (cost 6552, peak 6656) in 5.1 s (dense memory rows; the recurrence form
found none in 60 s); the same MILP with the cost objective found none in 60 s; CP-SAT's retention-interval
model (backends/cpsat.py) with a hard capacity proved C=2 infeasible in 1.8 s and needed 16.5 s for its
first C=3 schedule. A proven infeasible model proves that no schedule fits the budget (for the fixed
order), which the heuristics cannot.

The schedule found is usually expensive; callers hand it to their cost phases (local search, CP-SAT, the
MILP) as a warm start.
"""
from __future__ import annotations

import dataclasses
import math
import threading
import time
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from ..ir.dag import DAG
from ..ir.errors import SolverError
from ..ir.schedule import Schedule, check, stage_peaks
from .milp_model import build_model, clean, model_columns
from .solver_api import SolverBackend, load_per_core

MAX_FEASIBLE_COLUMNS = 400_000
"""Largest model the feasibility MILP is built for (columns of eq. 9 after variable fixing)."""
MIN_SECONDS = 1.0
"""The feasibility MILP is not started with less time than this left."""
BUILD_SECONDS_PER_COLUMN = 6e-5
"""Seconds per column that building the feasibility MILP and handing it to the solver take, about, on idle cores
(approx's LP estimate with its margin: the same columns); times the load per core (``load_per_core``), the MILP
is not started with less time left (Moccasin's n=250 at 0.8, 160k columns, `remc solve --strategy approx
--time-limit 30` at a load of 9 on 2 cores: the process ran 71 s, 1 GiB, and found nothing)."""


def build_seconds(cols: int) -> float:
    """The least time left with which the feasibility MILP of ``cols`` columns is started (its build at the load
    now, and at least MIN_SECONDS)."""
    return max(MIN_SECONDS, BUILD_SECONDS_PER_COLUMN * cols * load_per_core())


MAX_RETRIES = 2
"""Re-solves with a lowered model budget when a float memory unit lets a solution exceed the budget."""


@dataclass
class Feasible:
    """What ``find_feasible`` found."""

    schedule: Schedule | None
    """A correct schedule within the budget (exact bytes), or None."""
    status: str
    """"found", "infeasible" (proven: no schedule fits the budget), "time_limit", "not built (...)",
    "not started (...)" or "error (...)"."""
    seconds: float
    by: str = "milp"
    """Which search found the schedule: "milp" or "race" (``find_feasible``'s other search)."""

    @property
    def proven_infeasible(self) -> bool:
        return self.status == "infeasible"


class ExactSearch(Protocol):
    """Another exact search for a first schedule within a budget (e.g. CP-SAT's model, backends/cpsat.py
    ``cpsat_first``), raced against the MILP: returns a schedule within ``budget`` or None, within
    ``seconds``, and stops soon after ``stop`` is set."""

    def __call__(self, dag: DAG, budget: int, seconds: float, stop: threading.Event) -> Schedule | None: ...


class _Found(Exception):
    """Raised in the MILP's progress callback to stop it once the race's other search has a schedule."""


def find_feasible(dag: DAG, budget: int, mip: SolverBackend, *, time_limit: float | None,
                  threads: int | None = None, race: ExactSearch | None = None) -> Feasible:
    """A schedule of ``dag`` within ``budget`` bytes from the zero-objective MILP (solved by backend ``mip``
    until its first solution, within ``time_limit`` seconds), or a proof that none exists.

    ``race`` (with a time limit): another exact search run in a thread at the same time (the registry
    wires CP-SAT's least-memory model, backends/cpsat.py ``cpsat_first``); the first schedule of either is
    returned and the other search is stopped. Neither dominates (results/s12b/, 2 loaded cores): on
    40-unit random layered DAGs HiGHS found schedules in 5-29 s where CP-SAT's models found none in 30 s,
    and CP-SAT in 0.3-1 s where HiGHS took 19-29 s; on a 140-unit one only CP-SAT's least-memory model
    found one (7.6 s; HiGHS none in 60 s).

    The solution is cleaned and checked in exact bytes; with a float memory unit (large byte counts) a
    solution over the budget by solver tolerance makes it solve again with the budget lowered by the excess
    (at most MAX_RETRIES times). "infeasible" is reported only when the model at the true budget is
    infeasible and its memory unit is exact (then no schedule fits)."""
    if race is None or time_limit is None:
        return _milp_first(dag, budget, mip, time_limit=time_limit, threads=threads)
    t0 = time.perf_counter()
    stop, other = threading.Event(), []

    def run_other() -> None:
        try:
            found = race(dag, budget, time_limit, stop)
        except Exception:  # noqa: BLE001 (the MILP's answer stands; the race's failure is not the user's)
            found = None
        if found is not None and not check(dag, found.R, found.S) and found.peak(dag) <= budget:
            other.append(found)
            stop.set()

    th = threading.Thread(target=run_other, daemon=True, name="remc-feasible-race")
    th.start()
    try:
        res = _milp_first(dag, budget, mip, time_limit=time_limit, threads=threads, stop=stop)
    finally:
        stop.set()
        th.join()
    if other and res.schedule is None:
        return Feasible(other[0], "found", time.perf_counter() - t0, by="race")
    res.seconds = time.perf_counter() - t0
    return res


def _milp_first(dag: DAG, budget: int, mip: SolverBackend, *, time_limit: float | None,
                threads: int | None = None, stop: threading.Event | None = None) -> Feasible:
    """``find_feasible`` with the MILP alone; it stops (status "stopped") soon after ``stop`` is set."""
    t0 = time.perf_counter()
    cols = model_columns(dag)
    if cols > MAX_FEASIBLE_COLUMNS:
        return Feasible(None, f"not built ({cols} columns > {MAX_FEASIBLE_COLUMNS})", 0.0)
    if time_limit is not None and time_limit < build_seconds(cols):
        return Feasible(None, f"not started ({time_limit:.1f} s left, too little to build its {cols} columns)", 0.0)
    model_budget = budget
    for retry in range(MAX_RETRIES + 1):
        model = feasibility_model(dag, model_budget)
        left = None if time_limit is None else time_limit - (time.perf_counter() - t0)
        if left is not None and left < 0.1:
            return Feasible(None, "time_limit", time.perf_counter() - t0)
        def watch(*_args) -> None:
            if stop is not None and stop.is_set():
                raise _Found()
        try:
            res = mip.solve(model, integral=True, time_limit=left, threads=threads, gap=0.0,
                            progress=None if stop is None else watch)
        except _Found:
            return Feasible(None, "stopped", time.perf_counter() - t0)
        except SolverError as e:
            return Feasible(None, f"error ({e})", time.perf_counter() - t0)
        if res.status == "infeasible":
            proven = retry == 0 and model.scale.exact
            return Feasible(None, "infeasible" if proven else "no schedule (lowered budget infeasible)",
                            time.perf_counter() - t0)
        if res.x is None:
            return Feasible(None, "time_limit" if res.status in ("time_limit", "interrupted") else res.status,
                            time.perf_counter() - t0)
        R, S = clean(dag, *model.decode(res.x))
        errs = check(dag, R, S)
        if errs:
            return Feasible(None, f"error (the MILP solution is not a correct schedule: {errs[0]})",
                            time.perf_counter() - t0)
        peak = int(stage_peaks(dag, R, S).max())
        if peak <= budget:
            return Feasible(Schedule(R, S, strategy="feasibility MILP"), "found", time.perf_counter() - t0)
        model_budget -= peak - budget + math.ceil(model.scale.unit)
    return Feasible(None, "no schedule (solutions over the budget by tolerance)", time.perf_counter() - t0)


def feasibility_model(dag: DAG, budget: int):
    """Eq. (9) at ``budget`` (dense memory rows where they fit: DENSE_LIMIT) with every cost 0: any solution
    is optimal."""
    model = build_model(dag, budget, memory_form="auto", usefulness=True)
    return dataclasses.replace(model, col_cost=np.zeros(model.num_col), offset=0.0, bound_correction=0.0)


__all__ = ["ExactSearch", "Feasible", "find_feasible", "feasibility_model", "MAX_FEASIBLE_COLUMNS"]
