"""The ancestry bound (passes/ancestry.py): never above the exact optimum (exhaustive on small random DAGs, the MILP's
on a layered one), above the retention-gap bound where a drop's dead ancestry is what it pays, and reported by
checkmate's last bound phase where it is the higher."""
from __future__ import annotations

import numpy as np
import pytest
from _milp_dags import exhaustive_optimum, layered_dag, random_dag, training_graph

from remc.ir.dag import DAG
from remc.ir.schedule import checkpoint_all
from remc.passes.ancestry import AncestryModel, ancestry_bound
from remc.passes.bounds import gap_bound


def _small_dags() -> list[DAG]:
    rng = np.random.default_rng(226)
    dags = [random_dag(int(rng.integers(5, 8)), rng, p=0.35, workspace=k % 2 == 0, no_recompute=k % 5 == 0)
            for k in range(10)]
    dags += [training_graph(3, rng, skips=((0, 2),), workspace=k % 2 == 0) for k in range(3)]
    dags += [layered_dag(int(rng.integers(6, 8)), 2, k, skip=0.6) for k in range(4)]
    return dags + [_dead_chain()[0]]


def test_ancestry_bound_never_exceeds_the_exhaustive_optimum() -> None:
    """Every budget from checkpoint-all's peak down to the first that nothing fits, started from the retention-gap
    bound's multipliers and from none, with the optimum as Polyak's target (the highest the ascent can aim)."""
    checked = above_cover = 0
    for dag in _small_dags():
        peak = checkpoint_all(dag).peak(dag)
        for budget in range(peak, 0, -max(1, peak // 10)):
            best = exhaustive_optimum(dag, budget)
            if best is None:
                assert ancestry_bound(dag, budget).bound >= float(dag.cost.sum())
                break
            gb = gap_bound(dag, budget)
            cover = gap_bound(dag, budget, strong=False, nested=False, chains=False)
            for lam in (gb.lam, None):
                ab = ancestry_bound(dag, budget, lam=lam, upper=best, iterations=60)
                assert ab.bound <= best + 1e-9 * max(best, 1.0)
            checked += 1
            above_cover += ab.bound > cover.bound + 1e-9
    assert checked >= 25 and above_cover >= 1  # (the dead chain: on the random ones it is rarely above)


def test_ancestry_bound_never_exceeds_the_milps_optimum_on_a_layered_dag() -> None:
    from remc.backends.strategies import solve_milp
    dag = layered_dag(24, 4, 1)
    budget = int(0.8 * checkpoint_all(dag).peak(dag))
    opt = solve_milp(dag, budget, time_limit=120, gap=0.0).report
    assert opt.status == "optimal"
    gb = gap_bound(dag, budget)
    ab = ancestry_bound(dag, budget, lam=gb.lam, upper=opt.cost, iterations=100)
    assert ab.bound <= opt.cost + 1e-9 * opt.cost


def _dead_chain() -> tuple[DAG, int]:
    """A parent read by two units that are both read again long after its last read: p (cost 40, 20 bytes) -> c1, c2
    (4 bytes each) -> x; then two 20-byte units over which the budget leaves room for only one of c1, c2; `late`
    reads c1 and c2. Dropping either needs p again (keeping p frees nothing): 41 over the sum of costs (46). The
    strong relaxation charges each drop at most half of p (two possible drops share it)."""
    names = ("p", "c1", "c2", "x", "b1", "b2", "late")
    cost = np.array([40.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0])
    mem = np.array([20, 4, 4, 1, 20, 20, 1])
    edges = np.array([(0, 1), (0, 2), (1, 3), (2, 3), (3, 4), (4, 5), (1, 6), (2, 6)])
    return DAG(names, cost, mem, edges), 46


def test_ancestry_bound_charges_a_drop_its_dead_ancestry() -> None:
    dag, budget = _dead_chain()
    best = exhaustive_optimum(dag, budget)
    gb = gap_bound(dag, budget)
    ab = ancestry_bound(dag, budget, lam=gb.lam, upper=best, iterations=100)
    assert best is not None and ab.bound <= best + 1e-9
    assert ab.bound > gb.bound + 1.0


def test_ancestry_model_leaves_out_units_that_are_never_needed_dead() -> None:
    """A dead unit is modeled only at the rows up to the last stage over the budget at which a gap of a descendant
    may need it (``AncestryModel``'s rows): nothing where no stage is over."""
    dag, _ = _dead_chain()
    m = AncestryModel(dag, checkpoint_all(dag).peak(dag))
    assert m.K == 0 and m.na == 0 and m.P == 0


def test_checkmates_last_bound_reports_the_ancestry_bound_where_it_is_higher(monkeypatch: pytest.MonkeyPatch) -> None:
    """Where checkmate is approx alone, ``_last_bound`` runs the ancestry ascent first from approx's multipliers: on
    the dead chain its bound is the report's ("ancestry"), above the retention-gap bound, at most the optimum."""
    from remc.backends import strategies
    from remc.backends.strategies import make_options, solve
    from remc.passes import milp
    dag, budget = _dead_chain()
    monkeypatch.setattr(strategies, "CP_UNITS", dag.n - 1)
    monkeypatch.setattr(milp, "MAX_MILP_COLUMNS", 1)
    monkeypatch.setattr(strategies, "_gap_cover_first", lambda dag, budget, o, clock, start: (None, start, ""))
    monkeypatch.setattr(strategies, "_cover_phase", lambda *a, **k: None)
    rep = solve("checkmate", dag, budget, make_options("checkmate", threads=1)).report
    best = exhaustive_optimum(dag, budget)
    assert "iterations" in rep.extras["ancestry"]
    assert rep.bound_source == "ancestry" and rep.bound > gap_bound(dag, budget).bound + 1.0
    assert rep.bound <= best + 1e-9


def test_last_ancestry_is_not_run_above_its_arc_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    from remc.passes import ancestry
    dag, budget = _dead_chain()
    sched = checkpoint_all(dag)
    sched.report.cost, sched.report.bound = 200.0, 46.0
    monkeypatch.setattr(ancestry, "ANCESTRY_MAX_ARCS", 0)
    note = ancestry.last_ancestry(dag, budget, sched, gap_bound(dag, budget).lam, None, 1e-4)
    assert note.startswith("not run") and sched.report.bound == 46.0
    monkeypatch.undo()
    assert "iterations" in ancestry.last_ancestry(dag, budget, sched, gap_bound(dag, budget).lam, None, 1e-4)
    assert sched.report.bound > 56.5
