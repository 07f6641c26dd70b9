"""The retention-gap covering MILP's bound (passes/coverbound.py): never above the exhaustive or the MILP's optimum,
above the Lagrangian bound (passes/bounds.py) where the covering's integrality matters, infinite where a stage
cannot fit."""
from __future__ import annotations

import dataclasses
import functools
import math

import numpy as np
import pytest
from _milp_dags import exhaustive_optimum, layered_dag, random_dag, training_graph

from remc.backends.highs import HighsBackend
from remc.ir.dag import DAG
from remc.ir.errors import InfeasibleError, NoScheduleInTime
from remc.ir.schedule import checkpoint_all
from remc.passes.bounds import gap_bound
from remc.passes.coverbound import build_cover, cover_bound, gap_cover_bound


def _cover(dag: DAG, budget: int, depth: int = 2, kept: bool = False) -> float:
    return cover_bound(dag, budget, HighsBackend(), time_limit=None, threads=1, depth=depth, max_columns=None,
                       kept=kept).bound


def _exhaustive_cases(count: int, steps: int):
    """(k, dag, budget, exhaustive optimum) on random DAGs of 4-5 units, budgets from the peak down in ``steps``
    steps until none fits."""
    rng = np.random.default_rng(60)
    for k in range(count):
        dag = random_dag(int(rng.integers(4, 6)), rng, p=0.5, workspace=k % 2 == 0, no_recompute=k % 5 == 0)
        peak = checkpoint_all(dag).peak(dag)
        for budget in range(peak, 0, -max(1, peak // steps)):
            best = exhaustive_optimum(dag, budget)
            if best is None:
                break
            yield k, dag, budget, best


def test_cover_bound_never_exceeds_the_exhaustive_optimum():
    checked = above = 0
    for k, dag, budget, best in _exhaustive_cases(24, 10):
        for depth in (0, 1, 2, 4):
            b = _cover(dag, budget, depth)
            assert b <= best + 1e-9, (k, budget, depth, b, best)
        checked += 1
        above += b > float(dag.cost.sum()) + 1e-9
    assert checked >= 20 and above >= 3


def _cases():
    """Random layered DAGs of 14-20 units (shuffled within levels), training graphs with skips and costs 100x apart,
    and random DAGs with workspace: (dag, ratio)."""
    rng = np.random.default_rng(5)
    for k in range(6):
        yield layered_dag(int(rng.integers(14, 21)), int(rng.integers(3, 5)), 100 + k, skip=0.3), 0.9
        yield layered_dag(int(rng.integers(14, 21)), int(rng.integers(3, 5)), 200 + k, skip=0.3), 0.8
    for k in range(4):
        dag = training_graph(int(rng.integers(5, 9)), rng, skips=((0, 3),), workspace=k % 2 == 0)
        yield dataclasses.replace(dag, cost=np.where(rng.random(dag.n) < 0.3, 100.0, 1.0) * rng.uniform(0.5, 1.5, dag.n)), 0.8
        yield random_dag(int(rng.integers(10, 14)), rng, p=0.3, workspace=True, no_recompute=k == 1), 0.8


@functools.cache
def _optima() -> tuple:
    """(dag, budget, remc's MILP optimum) of the ``_cases`` it solves to optimality in 20 s (shared by the two tests
    below: solving them twice took 3 of CI's minutes)."""
    from remc.backends.strategies import solve_milp
    out = []
    for dag, ratio in _cases():
        budget = int(ratio * checkpoint_all(dag).peak(dag))
        try:
            opt = solve_milp(dag, budget, time_limit=20, gap=0.0, threads=1).report
        except (InfeasibleError, NoScheduleInTime):
            continue
        if opt.status == "optimal":
            out.append((dag, budget, opt.cost))
    return tuple(out)


def test_cover_bound_never_exceeds_the_milp_optimum_and_beats_the_lagrangian():
    """Against remc's MILP solved to optimality: the cover bound is never above the optimum, and on some graphs it is
    above the Lagrangian bound (its integrality: the Lagrangian is only as strong as the covering's LP)."""
    checked = higher = 0
    for dag, budget, opt in _optima():
        b = max(max(_cover(dag, budget, depth) for depth in (1, 4)), _cover(dag, budget, 1, kept=True))
        assert b <= opt + 1e-9 * float(dag.cost.sum()), (dag.n, budget, b, opt)
        checked += 1
        lag = gap_bound(dag, budget).bound
        assert lag <= opt + 1e-9 * float(dag.cost.sum()), (dag.n, budget, lag, opt)  # with its chain charge too
        one = gap_cover_bound(dag, budget, HighsBackend(), time_limit=None, threads=1).bound  # one column per gap
        assert one <= opt + 1e-9 * float(dag.cost.sum()), (dag.n, budget, one, opt)
        higher += b > lag + 1e-6
    print(f"checked {checked}, above the Lagrangian {higher}")
    assert checked >= 10 and higher >= 2


def test_cover_bound_is_infinite_when_a_stage_cannot_fit_and_the_sum_of_costs_when_nothing_is_over():
    dag = DAG(("a", "b", "c"), np.ones(3), np.array([4, 4, 4]), np.array([(0, 2), (1, 2)]))
    assert _cover(dag, 11) == math.inf
    rng = np.random.default_rng(61)
    dag = training_graph(6, rng, skips=((0, 5),))
    assert _cover(dag, checkpoint_all(dag).peak(dag)) == float(dag.cost.sum())


def test_cover_model_is_not_built_above_its_column_limit():
    dag = layered_dag(24, 4, 1, skip=0.3)
    budget = int(0.7 * checkpoint_all(dag).peak(dag))
    cm = build_cover(dag, budget, max_columns=None)
    assert cm is not None and cm.model.num_col > 10
    assert build_cover(dag, budget, max_columns=10) is None
    assert cover_bound(dag, budget, HighsBackend(), time_limit=5, max_columns=10).bound == -math.inf
    from remc.passes.coverbound import window_bound
    assert window_bound(dag, budget, HighsBackend(), time_limit=5, max_columns=10).bound == -math.inf


def _windows(dag: DAG, budget: int, depth: int, columns: int, rounds: int = 1, lam=None) -> float:
    from remc.passes.coverbound import window_bound
    return window_bound(dag, budget, HighsBackend(), time_limit=None, threads=1, depth=depth, window_columns=columns,
                        rounds=rounds, lam=None if isinstance(lam, str) else lam,
                        split_by_multipliers=lam is not None).bound


def test_window_bound_never_exceeds_the_exhaustive_or_the_milp_optimum():
    """The covering MILP cut into windows of a few columns (so that most gaps and parent chains cross a cut): the
    sum of the windows' optima is never above the exhaustive optimum (random DAGs of 4-5 units, every budget) nor
    remc's MILP optimum (layered DAGs of 14-20 units and the other ``_cases``), with the gap costs split by over
    stages, by the Lagrangian's multipliers (``GapBound.lam``, or the covering's own), and re-split over rounds; and it is above the sum of costs somewhere.
    (It fails where each window pays a gap's whole cost: checked by hand.)"""
    checked = above = 0
    for k, dag, budget, best in _exhaustive_cases(12, 6):
        for depth, columns in ((1, 3), (2, 8)):
            b = _windows(dag, budget, depth, columns, rounds=2)
            assert b <= best + 1e-9, (k, budget, depth, b, best)
            above += b > float(dag.cost.sum()) + 1e-9
        checked += 1
    assert checked >= 12 and above >= 1
    checked = windowed = above = 0
    for dag, budget, opt in _optima():
        lam = gap_bound(dag, budget).lam
        cm = build_cover(dag, budget, depth=1, max_columns=None)
        for depth, columns, rounds, split in ((1, 8, 3, None), (4, 20, 1, lam), (1, 5, 2, "covering")):
            b = _windows(dag, budget, depth, columns, rounds, split)
            assert b <= opt + 1e-9 * float(dag.cost.sum()), (dag.n, budget, depth, columns, b, opt)
            above += b > float(dag.cost.sum()) + 1e-9
        checked += 1
        windowed += cm is not None and cm.model.num_col > 8
    print(f"checked {checked}, cut into windows {windowed}, above the sum of costs {above}")
    assert checked >= 10 and windowed >= 5 and above >= 10


def test_windows_cut_the_model_and_keep_only_the_rows_inside_one():
    from remc.passes.coverbound import cut_windows, window_costs
    dag = layered_dag(40, 4, 7, skip=0.3)
    budget = int(0.75 * checkpoint_all(dag).peak(dag))
    cm = build_cover(dag, budget, depth=2, max_columns=None)
    assert cm is not None and cm.model.num_col > 60
    win = cut_windows(cm, 30)
    assert len(win.bounds) - 1 >= 2 and win.bounds[0] == 0 and win.bounds[-1] == cm.over
    per = np.bincount(win.col_win)
    assert ((per <= 30) | (np.diff(win.bounds) == 1)).all()  # (a window of one stage may have more)
    A = cm.model.A.tocoo()
    kept = win.row_win[A.row] >= 0
    assert (win.col_win[A.col[kept]] == win.row_win[A.row[kept]]).all()
    # each gap's cost split over its windows adds up to the gap's cost
    cost = window_costs(win)
    pair = cm.col_gap >= 0
    total = np.bincount(cm.col_gap[pair], weights=cost[pair], minlength=len(cm.gap_cost))
    assert np.allclose(total, cm.gap_cost)
    assert np.allclose(cost[~pair], cm.model.col_cost[~pair])


def test_checkmate_cover_phase_cuts_a_model_above_its_limit_into_windows(monkeypatch):
    """Above the covering MILP's column limit, checkmate's cover phase proves a bound with the model cut into
    windows (here the limit is lowered to 10 columns so that a 40-unit graph is above it)."""
    import functools

    import remc.passes.coverbound as cb
    from remc.backends.strategies import COVER_SOURCE, _cover_phase
    from remc.passes.solver_api import Clock
    dag = layered_dag(40, 4, 7, skip=0.3)
    budget = int(0.8 * checkpoint_all(dag).peak(dag))
    assert build_cover(dag, budget, depth=1, max_columns=None).model.num_col > 10
    monkeypatch.setattr(cb, "cover_bound", functools.partial(cb.cover_bound, max_columns=10))
    monkeypatch.setattr(cb, "window_bound", functools.partial(cb.window_bound, window_columns=30))
    bounds: dict[str, float] = {}
    notes: dict[str, str] = {}
    _cover_phase(dag, budget, Clock(None), 1, bounds, notes)
    assert "windows" in notes["cover_bound"], notes
    whole = _cover(dag, budget, 1)
    assert float(dag.cost.sum()) < bounds[COVER_SOURCE] <= whole + 1e-9, (bounds, whole)


def test_checkmate_cover_phase_runs_no_deeper_model():
    """The deep covering MILP (depth 2-4) is off in checkmate: its bound was above a checked schedule's cost on a
    741-unit ResNet50 at ONNX-node granularity (passes/coverbound.py COVER_DEPTH)."""
    from remc.backends.strategies import COVER_SOURCE, _cover_phase
    from remc.passes.solver_api import Clock
    dag = layered_dag(24, 4, 1, skip=0.3)
    budget = int(0.8 * checkpoint_all(dag).peak(dag))
    bounds: dict[str, float] = {}
    notes: dict[str, str] = {}
    _cover_phase(dag, budget, Clock(None), 1, bounds, notes)
    assert notes["cover_bound"].startswith("depth 1: optimal") and "depth 4" not in notes["cover_bound"], notes
    assert bounds[COVER_SOURCE] == _cover(dag, budget, 1)


def test_cover_matrix_is_scipys_csc_without_importing_scipy():
    """``Csc.from_coo`` builds what scipy's ``csc_matrix((v, (i, j)))`` builds (duplicates summed, rows sorted), and
    the covering MILP's model is built without importing scipy.sparse (0.3 s of CPU beside CP-SAT)."""
    import subprocess
    import sys

    import scipy.sparse as sp

    from remc.passes.coverbound import Csc

    rng = np.random.default_rng(3)
    for _ in range(40):
        nr, nc = (int(x) for x in rng.integers(1, 25, 2))
        k = int(rng.integers(0, 120))
        i, j, v = rng.integers(0, nr, k), rng.integers(0, nc, k), rng.normal(size=k)
        a, s = Csc.from_coo(v, i, j, (nr, nc)), sp.csc_matrix((v, (i, j)), shape=(nr, nc))
        s.sum_duplicates()
        assert a.shape == s.shape and a.nnz == s.nnz
        assert np.array_equal(a.indptr, s.indptr) and np.array_equal(a.indices, s.indices)
        assert np.allclose(a.data, s.data)
        assert np.allclose(a.toarray(), s.toarray())  # (any other attribute: scipy's matrix)
    code = ("import sys, math; sys.path.insert(0, 'tests'); from _milp_dags import layered_dag; "
            "from remc.ir.schedule import checkpoint_all; from remc.passes.coverbound import build_cover; "
            "d = layered_dag(40, 5, 11); cm = build_cover(d, math.ceil(checkpoint_all(d).peak(d) * 0.8), depth=1); "
            "print(cm.model.A.nnz > 0, 'scipy.sparse' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         cwd=str(__import__("pathlib").Path(__file__).resolve().parents[1]))
    assert out.stdout.split() == ["True", "False"]


def test_kept_parent_rows_raise_the_cover_bound_to_the_optimum_on_training_graphs():
    """A recomputed unit's parent that is still read later is resident at the recomputation: computed once more
    inside its own gap, or kept through it (coverbound._kept_columns). Without these rows the model frees such a
    parent over its gap and pays one computation for its next read only (VGG19 of Moccasin's set at 0.8: +2.702%
    against the optimum +2.756%). On these training graphs the rows, added lazily or all at once, give remc's MILP
    optimum (written in: solve_milp with gap 0, results/pub16/scratch/findcase.txt), the model without them less."""
    from remc.backends.highs import solve_highs
    for seed, budget, plain, opt in ((6, 24, 42.0, 45.0), (9, 31, 53.0, 58.0), (24, 26, 38.0, 40.0)):
        rng = np.random.default_rng(seed)
        dag = training_graph(int(rng.integers(4, 7)), rng)
        base = float(dag.cost.sum())
        without = cover_bound(dag, budget, HighsBackend(), time_limit=None, threads=1, max_columns=None, kept=False)
        lazy = cover_bound(dag, budget, HighsBackend(), time_limit=None, threads=1, max_columns=None, kept=True)
        cm = build_cover(dag, budget, max_columns=None, kept=True)
        assert cm is not None
        full = base + solve_highs(cm.model, integral=True, isolated=False, gap=1e-9).objective * cm.cost_unit
        assert without.bound == pytest.approx(plain, rel=1e-6), seed
        assert lazy.bound == pytest.approx(opt, rel=1e-6) and full == pytest.approx(opt, rel=1e-6), seed
        assert lazy.note.endswith("rounds (kept rows)"), seed


def test_merged_chains_keep_the_cover_bound_with_fewer_columns(monkeypatch):
    """COVER_MERGE (passes/coverbound.py ``merge_chains``): each gap's run of pairs between two points where z may
    drop is one column. The covering MILP's optimum is the same as unmerged (with and without the kept-parent rows,
    at depths 1 and 2) on training graphs, layered and random DAGs, and the model solved has fewer columns (ResNet50
    of Moccasin's set at 0.8: 646 against 23237, where HiGHS' presolve took 21.6 s to find the same)."""
    import remc.passes.coverbound as cb
    rng = np.random.default_rng(17)
    graphs = [training_graph(int(rng.integers(6, 12)), rng, skips=((0, 3),)) for _ in range(3)]
    graphs += [layered_dag(int(rng.integers(14, 21)), 3, 300 + k, skip=0.3) for k in range(3)]
    graphs += [random_dag(12, rng, p=0.3, workspace=True, no_recompute=True)]
    checked = fewer = 0
    for dag in graphs:
        peak = checkpoint_all(dag).peak(dag)
        for ratio in (0.9, 0.8, 0.7):
            budget = int(ratio * peak)
            for depth, kept in ((1, False), (1, True), (2, False)):
                out = {}
                for merge in (True, False):
                    monkeypatch.setattr(cb, "COVER_MERGE", merge)
                    out[merge] = cover_bound(dag, budget, HighsBackend(), time_limit=None, threads=1, depth=depth,
                                             max_columns=None, kept=kept)
                a, b = out[True], out[False]
                assert a.status == b.status, (dag.n, budget, depth, kept, a, b)
                if math.isfinite(b.bound):
                    assert a.bound == pytest.approx(b.bound, rel=1e-7, abs=1e-7), (dag.n, budget, depth, kept, a, b)
                    checked += 1
                    fewer += a.columns < b.columns
                assert a.columns <= b.columns
    assert checked >= 30 and fewer >= 10, (checked, fewer)
