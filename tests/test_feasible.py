"""Feasibility first, exactly (passes/feasible.py): the zero-objective MILP finds a schedule exactly when one
exists (against exhaustive search), proves infeasibility, and gives approx a schedule on a graph where every
heuristic misses the budget (issue #12 item 5)."""
from __future__ import annotations

import numpy as np
import pytest
from _milp_dags import exhaustive_optimum, least_peak, random_dag
from test_evict import _layered

from remc.backends.highs import HighsBackend
from remc.backends.strategies import solve_approx
from remc.ir.errors import InfeasibleError
from remc.ir.schedule import check, checkpoint_all
from remc.passes.evict import evict_search
from remc.passes.feasible import find_feasible
from remc.passes.milp_model import simple_lower_bound
from remc.passes.stagesearch import least_memory
from remc.passes.strategies import best_baseline


def _least_peak(dag) -> int:
    """The least peak of any correct schedule (``correct_schedules``' set, as ``exhaustive_optimum`` searches it)."""
    return least_peak(dag)


def test_feasibility_milp_finds_a_schedule_exactly_when_one_exists():
    rng = np.random.default_rng(7)
    found = infeasible = 0
    for _ in range(6):
        dag = random_dag(int(rng.integers(5, 7)), rng, p=0.5)
        least = _least_peak(dag)
        for budget in range(simple_lower_bound(dag), least + 2):
            res = find_feasible(dag, budget, HighsBackend(), time_limit=None)
            if budget >= least:
                assert res.status == "found" and res.schedule is not None
                assert not check(dag, res.schedule.R, res.schedule.S)
                assert res.schedule.peak(dag) <= budget
                found += 1
            else:
                assert res.status == "infeasible" and res.schedule is None
                infeasible += 1
    assert found and infeasible


def _hard() -> tuple:
    """40 units (width 6, seed 3) at 0.8 of checkpoint-all's peak: 6694 bytes."""
    dag = _layered(40, 6, 3)
    budget = int(0.8 * checkpoint_all(dag).peak(dag))
    assert budget == 6694
    return dag, budget


def test_every_heuristic_misses_the_hard_case_but_a_schedule_exists():
    """The baselines, the eviction pass and the least-memory starts find nothing within 6694 bytes; the
    feasibility MILP does."""
    dag, budget = _hard()
    assert best_baseline(dag, budget) is None
    assert evict_search(dag, budget) is None
    assert least_memory(dag, budget)[0] is None
    res = find_feasible(dag, budget, HighsBackend(), time_limit=None, threads=1)
    assert res.status == "found"
    sched = res.schedule
    assert not check(dag, sched.R, sched.S) and sched.peak(dag) <= budget


def test_approx_returns_a_schedule_where_every_heuristic_misses():
    """approx (no time limit) ran out of heuristics and raised InfeasibleError here before the feasibility
    MILP; now it returns a checked schedule within the budget, improved by the local search."""
    dag, budget = _hard()
    sched = solve_approx(dag, budget, threads=1, refine_seconds=5)
    assert not check(dag, sched.R, sched.S) and sched.peak(dag) <= budget
    assert sched.report.extras["feasibility_milp"].startswith("found")


def test_approx_proves_infeasibility_with_the_milp():
    """A budget at the LP's least-budget bound that no schedule fits (exhaustive search): the error carries
    the proof that the least feasible budget is above it."""
    rng = np.random.default_rng(7)
    dags = [random_dag(int(rng.integers(5, 7)), rng, p=0.5) for _ in range(6)]
    dag, budget = dags[5], 14
    assert exhaustive_optimum(dag, budget) is None and exhaustive_optimum(dag, budget + 1) is not None
    with pytest.raises(InfeasibleError) as e:
        solve_approx(dag, budget, threads=1, refine_seconds=1)
    assert e.value.least_feasible == budget + 1
    assert "MILP with the budget is infeasible" in str(e.value)


def test_cpsat_first_schedule_fits_and_stops_when_asked():
    """CP-SAT's least-memory model (the race's other search) on a case where no baseline fits and it reaches
    the budget: a correct schedule within it; with ``stop`` already set it returns nothing."""
    import threading

    from remc.backends.cpsat import cpsat_first
    dag = _layered(30, 6, 1)
    budget = int(0.8 * checkpoint_all(dag).peak(dag))
    assert best_baseline(dag, budget) is None
    sched = cpsat_first(dag, budget, 300.0, threading.Event())
    assert sched is not None and not check(dag, sched.R, sched.S) and sched.peak(dag) <= budget
    stop = threading.Event()
    stop.set()
    assert cpsat_first(dag, budget, 300.0, stop) is None


def test_race_returns_a_checked_schedule_and_survives_a_failing_racer():
    dag, budget = _hard()
    known = find_feasible(dag, budget, HighsBackend(), time_limit=None, threads=1).schedule
    assert known is not None
    res = find_feasible(dag, budget, HighsBackend(), time_limit=300, threads=1, race=lambda d, b, s, stop: known)
    assert res.status == "found" and res.schedule.peak(dag) <= budget and not check(dag, res.schedule.R, res.schedule.S)

    def broken(d, b, s, stop):
        raise RuntimeError("racer failed")
    res = find_feasible(dag, budget, HighsBackend(), time_limit=300, threads=1, race=broken)
    assert res.status == "found" and res.by == "milp"


def test_checkmate_proves_infeasibility_with_the_feasibility_race():
    """checkmate runs the race itself when approx finds nothing: the MILP's infeasibility is its proof."""
    from remc.backends.strategies import make_options, solve
    rng = np.random.default_rng(7)
    dag = [random_dag(int(rng.integers(5, 7)), rng, p=0.5) for _ in range(6)][5]
    with pytest.raises(InfeasibleError) as e:
        solve("checkmate", dag, 14, make_options("checkmate", time_limit=300, threads=1))
    assert e.value.least_feasible == 15 and "needs at least 15 bytes (proven lower bound)" in str(e.value)
