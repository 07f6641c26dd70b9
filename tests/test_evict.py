"""The eviction pass (passes/evict.py) and per-stage peaks (ir.schedule.stage_peaks): schedules correct, within
budget, never below the exhaustive optimum; row state equal to the full evaluation; approx on a graph whose
LP is not built still returns a checked schedule with a proven bound."""
from __future__ import annotations

import math
import time
from types import SimpleNamespace

import numpy as np
from _milp_dags import exhaustive_optimum, random_dag, training_graph

from remc.backends.strategies import solve_approx
from remc.ir.dag import DAG
from remc.ir.schedule import check, checkpoint_all, memory_profile, solve_r, stage_peaks
from remc.passes import approx as approx_mod
from remc.passes.evict import VARIANTS, evict_schedule, evict_search
from remc.passes.milp_model import clean


def _layered(n: int, width: int, seed: int) -> DAG:
    """A small random layered DAG (as tools/layered.py makes them)."""
    rng = np.random.default_rng(seed)
    levels = [list(range(s, min(s + width, n))) for s in range(0, n, width)]
    edges = set()
    for li in range(1, len(levels)):
        for v in levels[li]:
            for u in rng.choice(levels[li - 1], size=min(len(levels[li - 1]), int(rng.integers(1, 4))),
                                replace=False):
                edges.add((int(u), v))
            if li >= 2 and rng.random() < 0.2:
                edges.add((int(rng.choice(levels[int(rng.integers(0, li - 1))])), v))
    return DAG(tuple(f"v{i}" for i in range(n)), rng.integers(1, 100, n).astype(float),
               rng.integers(1, 100, n) * 16, np.array(sorted(edges), dtype=np.int64))


def test_stage_peaks_equal_the_rows_of_memory_profile():
    rng = np.random.default_rng(50)
    for k in range(60):
        dag = random_dag(int(rng.integers(2, 25)), rng, p=0.3, workspace=k % 2 == 0, constant=k % 3)
        S = checkpoint_all(dag).S & (rng.random((dag.n, dag.n)) < 0.6)
        R = solve_r(dag, S)
        if k % 4 == 0:  # extra, useless computations too
            R = R | np.tril(rng.random((dag.n, dag.n)) < 0.2)
        assert (stage_peaks(dag, R, S) == memory_profile(dag, R, S).max(axis=1)).all()


def test_eviction_schedules_are_correct_within_budget_and_never_below_the_optimum():
    rng = np.random.default_rng(51)
    found = 0
    for k in range(10):
        dag = random_dag(int(rng.integers(4, 6)), rng, p=0.5, workspace=k % 2 == 0)
        for budget in range(checkpoint_all(dag).peak(dag), 0, -1):
            best = exhaustive_optimum(dag, budget)
            if best is None:
                break
            for w, c, net in VARIANTS:
                st = evict_schedule(dag, budget, weight=w, closure=c, net=net)
                if st is None:
                    continue
                R, S = clean(dag, st.R, st.S)
                assert not check(dag, R, S) and memory_profile(dag, R, S).max() <= budget
                assert float(R.sum(axis=0) @ dag.cost) >= best - 1e-9
                found += 1
    assert found >= 30


def test_eviction_rows_equal_the_full_evaluation():
    rng = np.random.default_rng(52)
    fits = 0
    for seed in range(4):
        dag = (_layered(60, 6, seed) if seed % 2 else
               training_graph(12, rng, skips=((0, 11), (3, 8)), workspace=True, dropout=(5,)))
        peak = checkpoint_all(dag).peak(dag)
        for ratio in (0.9, 0.8, 0.7):
            for w, c, net in VARIANTS:
                st = evict_schedule(dag, int(ratio * peak), weight=w, closure=c, net=net)
                if st is None:
                    continue
                assert (st.R == solve_r(dag, st.S)).all()
                assert (st.peak == memory_profile(dag, st.R, st.S).max(axis=1)).all()
                assert st.peak.max() <= int(ratio * peak) and not check(dag, st.R, st.S)
                fits += 1
    assert fits >= 12


def test_evict_search_schedule_is_correct_and_within_budget():
    dag = _layered(200, 10, 2)
    budget = int(0.8 * checkpoint_all(dag).peak(dag))
    found = evict_search(dag, budget)
    assert found is not None
    R, S, evals, how = found
    R, S = clean(dag, R, S)
    assert not check(dag, R, S) and memory_profile(dag, R, S).max() <= budget
    assert how and evals >= 0


def test_approx_without_its_lp_returns_a_checked_schedule_and_a_proven_bound(monkeypatch):
    monkeypatch.setattr(approx_mod, "MAX_LP_COLUMNS", 0)  # as on graphs whose LP does not fit
    dag = _layered(130, 8, 3)
    budget = int(0.8 * checkpoint_all(dag).peak(dag))
    sched = solve_approx(dag, budget, time_limit=60)
    rep = sched.report
    assert not check(dag, sched.R, sched.S) and memory_profile(dag, sched.R, sched.S).max() <= budget
    assert rep.extras["lp"].startswith("not built")
    assert float(dag.cost.sum()) <= rep.bound <= rep.cost
    assert rep.bound_source in ("retention gaps", "sum of costs") and rep.gap is not None


def test_solvers_out_of_time_still_return_the_best_baseline():
    from remc.backends.strategies import make_options, solve
    from remc.passes.strategies import best_baseline

    rng = np.random.default_rng(53)
    dag = training_graph(16, rng, skips=((1, 12), (4, 9)))
    peak = checkpoint_all(dag).peak(dag)
    budget = next(b for b in range(int(0.9 * peak), 0, -1) if best_baseline(dag, b) is None) + 1
    base = best_baseline(dag, budget)
    assert base is not None
    for strategy in ("approx", "checkmate"):
        sched = solve(strategy, dag, budget, make_options(strategy, time_limit=1e-3))
        assert not check(dag, sched.R, sched.S) and memory_profile(dag, sched.R, sched.S).max() <= budget
        assert sched.report.cost <= base.cost(dag) + 1e-9
        assert sched.report.bound <= sched.report.cost


def test_least_memory_finds_a_schedule_where_repair_and_eviction_find_none(monkeypatch):
    """Feasibility first (issue #12 item 5): at this budget checkpoint-all's repair and every eviction setting
    fail; the least-memory starts find a schedule, and approx's stage search returns it (before: none)."""
    from remc.passes import evict, stagesearch
    from remc.passes.stagesearch import StageState, least_memory, repair

    dag = _layered(80, 10, 1)
    budget = int(0.8 * checkpoint_all(dag).peak(dag))
    assert not repair(StageState(dag, budget, checkpoint_all(dag).S), None)
    assert all(evict_schedule(dag, budget, weight=w, closure=c, net=net) is None for w, c, net in VARIANTS)
    st, least = least_memory(dag, budget)
    assert st is not None and least <= budget
    R, S = clean(dag, st.R, st.S)
    assert not check(dag, R, S) and memory_profile(dag, R, S).max() <= budget
    info: dict = {}
    clock = _FakeClock(0.0002)  # counted, not timed: the same search at any load (a 10 s deadline failed under load)
    monkeypatch.setattr(evict, "time", clock)
    monkeypatch.setattr(stagesearch, "time", clock)
    found = evict_search(dag, budget, deadline=1e9, info=info)
    assert found is not None and found[3] == "least-memory start, repaired" and info["least_peak"] <= budget
    R, S = clean(dag, found[0], found[1])
    assert not check(dag, R, S) and memory_profile(dag, R, S).max() <= budget


def test_eviction_run_in_slices_gives_the_schedule_of_one_run():
    """``EvictRun`` resumes where a slice stopped: one step per slice gives the schedule of one whole run."""
    from remc.passes.evict import EvictRun

    for seed, ratio in ((2, 0.8), (3, 0.7), (5, 0.85)):
        dag = _layered(120, 8, seed)
        budget = int(ratio * checkpoint_all(dag).peak(dag))
        for w, c, net in VARIANTS:
            whole = evict_schedule(dag, budget, weight=w, closure=c, net=net)
            run, steps = EvictRun(dag, budget, weight=w, closure=c, net=net), 0
            while not run.advance(0.0):  # a deadline already past: one step per call
                steps += 1
            assert steps > dag.n  # (it did stop after each step)
            assert (whole is None) == (run.result is None)
            if whole is not None:
                assert np.array_equal(whole.S, run.result.S) and np.array_equal(whole.R, run.result.R)


def test_a_setting_that_does_not_end_does_not_hold_back_one_that_fits(monkeypatch):
    """Issue #12 item 5: the settings share the time in slices while none fits. The first setting here never
    ends (as one that fails slowly: random layered n = 1000 seed 3 at 0.8, 42 s before failing); run one after
    the other it would take all the time and leave no schedule."""
    from remc.passes import evict

    dag = _layered(200, 10, 2)
    budget = int(0.8 * checkpoint_all(dag).peak(dag))
    assert any(evict_schedule(dag, budget, weight=w, closure=c, net=net) is not None for w, c, net in VARIANTS[1:])
    real = evict._passes

    def first_never_ends(dag, budget, weight, closure, net, *state):
        if (weight, closure, net) == VARIANTS[0]:
            while True:
                yield
        return (yield from real(dag, budget, weight, closure, net, *state))

    monkeypatch.setattr(evict, "_passes", first_never_ends)
    _counted_clock(monkeypatch)  # (a deadline of so many calls: before, 6 s of the wall clock)
    found = evict_search(dag, budget, deadline=time.perf_counter() + 6)
    assert found is not None
    R, S, _, how = found
    assert how.startswith("eviction") and how != evict.EvictRun(dag, budget).name
    R, S = clean(dag, R, S)
    assert not check(dag, R, S) and memory_profile(dag, R, S).max() <= budget


def _counted_clock(monkeypatch) -> None:
    """``time.perf_counter`` advancing by COUNTED_STEP at each call, for every module: a time limit is then so
    many calls, whatever the machine's load (the search below finds its first schedule after ~3.6k calls, the
    20 s limit is 13.3k). Before, these tests ran to a 20 s wall-clock limit and failed under a load of 10-20."""
    monkeypatch.setattr(time, "perf_counter", _FakeClock(COUNTED_STEP).perf_counter)


COUNTED_STEP = 1.5e-3


def test_where_nothing_fits_approx_searches_before_its_bound(monkeypatch):
    """Feasibility first (issue #12 item 5): where no schedule fits at approx's start and no LP is built, the
    stage search starts before the retention-gap bound (which then runs with the time left), and the report
    still carries that bound."""
    monkeypatch.setattr(approx_mod, "MAX_LP_COLUMNS", 0)
    _counted_clock(monkeypatch)
    dag = _layered(80, 10, 1)
    budget = int(0.8 * checkpoint_all(dag).peak(dag))
    events = []
    sched = solve_approx(dag, budget, time_limit=20, progress=events.append)
    phases = [e.phase for e in events]
    assert "stage search" in phases
    assert events[phases.index("stage search")].bound is None  # no bound yet when the search starts
    rep = sched.report
    assert not check(dag, sched.R, sched.S) and memory_profile(dag, sched.R, sched.S).max() <= budget
    assert rep.extras["gap_bound"] > float(dag.cost.sum()) and rep.bound <= rep.cost
    # the report says when the search found its first schedule within budget, on the solve's clock
    assert 0 <= rep.extras["first_fit_seconds"] <= rep.seconds
    # the live display hears of the search's schedules while it runs (a 1000-unit search: minutes without one)
    during = [e for e in events if e.phase == "stage search" and e.incumbent is not None]
    assert during and min(e.incumbent for e in during) >= rep.cost - 1e-6 * rep.cost


def test_evict_search_reports_each_cheaper_schedule():
    dag = _layered(60, 10, 2)
    budget = int(0.85 * checkpoint_all(dag).peak(dag))
    heard: list[float] = []
    found = evict_search(dag, budget, on_best=heard.append)
    assert found is not None and heard
    assert heard[-1] == float(found[0].sum(axis=0) @ dag.cost)  # the last report is the returned schedule's cost
    assert all(b <= a for a, b in zip(heard, heard[1:]))  # each report is no costlier than the one before


def test_recompute_costs_loop_equals_the_sparse_solve():
    """The parents' loop below SPARSE_FROM gives the sparse triangular solve's sums exactly, overflow included."""
    from remc.passes import evict

    rng = np.random.default_rng(5)
    for _k in range(30):
        dag = random_dag(int(rng.integers(5, 40)), rng)
        parents = evict._parent_matrix(dag)
        for _ in range(5):
            t = int(rng.integers(0, dag.n))
            kept = rng.random(dag.n) < 0.4
            units = np.arange(t + 1)
            loop = evict._recompute_costs(dag, kept, units, t, parents)
            sparse = evict._sparse_sums(dag, kept, t, parents.csr)
            cap = 1e6 * float(dag.cost.sum()) + 1.0
            sparse = np.nan_to_num(sparse[units], nan=np.inf, posinf=np.inf)
            assert np.array_equal(loop[0], np.minimum(sparse[:, 0], cap))
            assert np.array_equal(loop[1], np.minimum(sparse[:, 1], 1e9))
    # a chain of diamonds: the path sums overflow to inf; a kept unit below an overflowed one is NaN in the sparse
    # solve (0 x inf), inf after nan_to_num in both
    n = 2 + 3 * 700
    edges = []
    for b in range(700):
        a = 3 * b
        edges += [(a, a + 1), (a, a + 2), (a + 1, a + 3), (a + 2, a + 3)]
    dag = DAG(tuple(f"v{i}" for i in range(n)), np.full(n, 1e300), np.ones(n, dtype=np.int64),
              np.array(sorted(edges), dtype=np.int64))
    parents = evict._parent_matrix(dag)
    kept = np.zeros(n, dtype=bool)
    kept[400] = True  # its children read an overflowed sum
    t = evict.SPARSE_FROM - 1
    units = np.arange(t + 1)
    loop = evict._recompute_costs(dag, kept, units, t, parents)
    sparse = np.nan_to_num(evict._sparse_sums(dag, kept, t, parents.csr)[units], nan=np.inf, posinf=np.inf)
    assert np.isinf(loop[0]).any()
    assert np.array_equal(loop[0], np.minimum(sparse[:, 0], 1e6 * float(dag.cost.sum()) + 1.0))


def test_checkmate_where_only_approx_runs_gives_it_the_time_before_the_bound(monkeypatch):
    """Item 3's portfolio contract where nothing fits after the baselines and neither CP-SAT nor the MILP is
    built (random layered n = 1000 at 0.8): checkmate is approx alone with all the time, its search before the
    retention-gap bound (before: the bound first, up to a fifth of the time, and no schedule on seed 8 where
    approx alone had one), and the report still carries that bound and says approx ran alone."""
    from remc.backends import strategies
    from remc.backends.strategies import make_options, solve
    from remc.passes import milp as milp_mod
    from remc.passes.strategies import best_baseline

    monkeypatch.setattr(approx_mod, "MAX_LP_COLUMNS", 0)
    monkeypatch.setattr(milp_mod, "MAX_MILP_COLUMNS", 0)
    monkeypatch.setattr(strategies, "CP_UNITS", 0)
    dag = _layered(80, 10, 1)
    budget = int(0.8 * checkpoint_all(dag).peak(dag))
    assert best_baseline(dag, budget) is None  # nothing fits after the baselines
    _counted_clock(monkeypatch)
    events = []
    sched = solve("checkmate", dag, budget, make_options("checkmate", time_limit=20), progress=events.append)
    phases = [e.phase for e in events]
    assert phases and phases[0] == "stage search" and "lower bound" not in phases and "baselines" not in phases
    rep = sched.report
    assert sched.strategy == "checkmate" and rep.extras["portfolio"].startswith("approx alone")
    assert not check(dag, sched.R, sched.S) and memory_profile(dag, sched.R, sched.S).max() <= budget
    assert rep.bound > float(dag.cost.sum()) and rep.bound <= rep.cost


class _FakeClock:
    """``time`` for passes/evict.py and passes/stagesearch.py: each ``perf_counter()`` call advances by ``step``
    seconds (a slower machine: a larger step)."""

    def __init__(self, step: float) -> None:
        self.now, self.step = 0.0, step

    def perf_counter(self) -> float:
        self.now += self.step
        return self.now


def test_the_search_under_a_deadline_gives_the_same_schedule_at_any_speed(monkeypatch):
    """Issue #12 items 2, 5: while nothing fits, the producers share the work in counted slices (rows evaluated,
    whole repair steps), not in time slices, so the schedule found does not depend on the machine's load: the same
    at two clock speeds 100x apart, with a deadline neither reaches. Before (0.5 s slices), a slice cut a repair
    step short and the step took the best move among the candidates evaluated so far."""
    from remc.passes import evict, stagesearch

    for seed, ratio in ((1, 0.8),):  # (where checkpoint-all's repair and every eviction setting fail)
        dag = _layered(80, 10, seed)
        budget = int(ratio * checkpoint_all(dag).peak(dag))
        found = []
        for step in (0.0005, 0.05):
            clock = _FakeClock(step)
            monkeypatch.setattr(evict, "time", clock)
            monkeypatch.setattr(stagesearch, "time", clock)
            out = evict_search(dag, budget, deadline=1e9)
            assert out is not None and clock.now < 1e9
            found.append(out)
        (R1, S1, _, how1), (R2, S2, _, how2) = found
        assert how1 == how2 and np.array_equal(S1, S2) and np.array_equal(R1, R2)
        R, S = clean(dag, R1, S1)
        assert not check(dag, R, S) and memory_profile(dag, R, S).max() <= budget


def test_repair_paused_by_rows_and_resumed_gives_the_schedule_of_one_run():
    """``repair_steps`` stops between whole steps once ``StageState.rows`` reaches its count ("paused") and goes on
    from there when called again: paused every few rows it ends where one call ends."""
    from remc.passes.stagesearch import StageState, repair_steps

    for seed, ratio in ((1, 0.85), (3, 0.8)):
        dag = _layered(60, 6, seed)
        budget = int(ratio * checkpoint_all(dag).peak(dag))
        whole = StageState(dag, budget, checkpoint_all(dag).S)
        end = repair_steps(whole, None)
        st, pauses = StageState(dag, budget, checkpoint_all(dag).S), 0
        while (out := repair_steps(st, None, rows=st.rows + 5)) == "paused":
            pauses += 1
        assert pauses >= 2 and out == end and np.array_equal(st.S, whole.S) and st.rows == whole.rows


def test_improve_repairs_with_a_capped_list_of_candidates(monkeypatch):
    """Inside ``improve``, a repair step evaluates the TOP_K best-ranked moves and then at most IMPROVE_CANDIDATES
    more (before: every candidate at the highest stage, hundreds at 1000 units, so that ``improve`` gained nothing
    in 90 s on Moccasin's n = 1000 at 0.8); the schedule stays correct and within budget."""
    from remc.passes import stagesearch

    dag = _layered(120, 12, 4)
    budget = int(0.8 * checkpoint_all(dag).peak(dag))
    st = evict_schedule(dag, budget, weight=1.0, closure=2)
    assert st is not None
    st = stagesearch.StageState(dag, budget, st.S)
    sizes: list[int] = []
    real = stagesearch._best_repair

    def counted(st_, cands, *a, **k):
        sizes.append(len(cands))
        return real(st_, cands, *a, **k)

    monkeypatch.setattr(stagesearch, "_best_repair", counted)
    before = st.total_cost()
    stagesearch.improve(st, None)
    assert sizes and max(sizes) <= max(stagesearch.TOP_K, stagesearch.IMPROVE_CANDIDATES)
    assert st.total_cost() <= before
    R, S = clean(dag, st.R, st.S)
    assert not check(dag, R, S) and memory_profile(dag, R, S).max() <= budget


def test_the_search_sweeps_the_moves_that_fit_before_those_that_need_a_repair(monkeypatch):
    """``improve(..., repairs=False)`` keeps a move only where it fits as it is (never repairs: a few rows a move);
    ``evict_search`` runs that sweep first, then ``improve`` with repairs (own layered n = 1000 seed 21 at 0.8:
    +320% after 60 s of the sweep, +446% after 60 s of improve with repairs, from +502%)."""
    from remc.passes import stagesearch

    dag = _layered(120, 12, 4)
    budget = int(0.8 * checkpoint_all(dag).peak(dag))
    st = evict_schedule(dag, budget, weight=1.0, closure=2)
    assert st is not None
    st = stagesearch.StageState(dag, budget, st.S)
    before = st.total_cost()

    def no_repair(*a, **k):
        raise AssertionError("repaired")

    with monkeypatch.context() as m:
        m.setattr(stagesearch, "repair", no_repair)
        stagesearch.improve(st, None, repairs=False)
    assert st.total_cost() < before and st.peak.max() <= budget
    calls: list[bool] = []
    real = stagesearch.improve

    def recorded(st_, deadline, order=stagesearch.IMPROVE_ORDER, repairs=True, **kw):
        calls.append(repairs)
        return real(st_, deadline, order, repairs, **kw)

    monkeypatch.setattr(stagesearch, "improve", recorded)
    assert evict_search(dag, budget, deadline=None) is not None
    assert calls == [False, True]


def test_a_setting_that_fails_slowly_gets_one_pass_before_the_next_starts(monkeypatch):
    """Issue #12 item 5: in the first round each eviction setting gets one pass's rows (FIRST_ROUND_ROWS a unit)
    before any gets the rest of its FIRST_PASS_ROWS, so the second setting's schedule is found after the first has
    used at most FIRST_ROUND_ROWS a unit. Before, the first setting had a whole FIRST_PASS_ROWS (a pass and a
    retry) first: own layered n = 250 seed 12 at 0.8, checkmate at 10 s under load found no schedule where main's
    time slices found the second setting's (+20.1%). Counted rows, no clock (an infinite deadline)."""
    import math

    from remc.passes import evict, stagesearch

    dag = _layered(120, 10, 2)
    budget = int(0.8 * checkpoint_all(dag).peak(dag))
    monkeypatch.setattr(stagesearch, "improve", lambda *a, **k: None)  # (the search after the first fit: not tested)
    assert evict_schedule(dag, budget, weight=VARIANTS[1][0], closure=VARIANTS[1][1], net=VARIANTS[1][2]) is not None
    real = evict._passes
    first_state: list = []

    def first_fails_slowly(dag, budget, weight, closure, net, st=None):
        if (weight, closure, net) == VARIANTS[0]:
            first_state.append(st)
            while True:  # a row a step, never fitting
                st.rows += 1
                yield
        return (yield from real(dag, budget, weight, closure, net, st))

    monkeypatch.setattr(evict, "_passes", first_fails_slowly)
    seen: list = []
    found = evict_search(dag, budget, deadline=math.inf, on_best=lambda c: seen.append(first_state[0].rows))
    assert found is not None and seen
    assert seen[0] <= evict.FIRST_ROUND_ROWS * dag.n + 1 < evict.FIRST_PASS_ROWS * dag.n


def test_repair_swaps_a_large_value_for_its_small_parent_where_no_drop_helps(monkeypatch):
    """A value whose recomputation would reach a no-recompute ancestor cannot be dropped alone; the swap keeps its
    small parent resident instead and drops the value, so the repair fits where, without swaps, it is stuck."""
    from remc.passes import stagesearch

    nr = np.zeros(8, dtype=bool)
    nr[0] = True
    edges = [(0, 1), (1, 2), (1, 3), (0, 4), (4, 5), (5, 6), (2, 6), (6, 7), (3, 7)]
    dag = DAG(tuple(f"v{i}" for i in range(8)), np.ones(8), np.array([1, 1, 10, 10, 10, 10, 1, 1]),
              np.array(edges), no_recompute=nr)
    budget = 30  # checkpoint-all's peak: 40
    st = stagesearch.StageState(dag, budget, checkpoint_all(dag).S)
    assert stagesearch.repair_steps(st, None) == "fit"
    R, S = clean(dag, st.R, st.S)
    assert not check(dag, R, S) and stage_peaks(dag, R, S).max() <= budget
    monkeypatch.setattr(stagesearch, "SWAP_CANDIDATES", 0)  # the repair as it was: stuck
    monkeypatch.setattr(stagesearch, "KICKS", 0)
    assert stagesearch.repair_steps(stagesearch.StageState(dag, budget, checkpoint_all(dag).S), None) == "stuck"


def test_approx_searches_again_with_the_time_left_where_nothing_fits(monkeypatch):
    """Where the stage search found nothing in its share and no later phase finds one (no LP, the exact phase stubbed), approx
    runs the stage search again with the time left instead of raising before its limit (issue #12 item 5)."""
    monkeypatch.setattr(approx_mod, "MAX_LP_COLUMNS", 0)
    monkeypatch.setattr(approx_mod, "find_feasible", lambda *a, **k: SimpleNamespace(
        schedule=None, proven_infeasible=False, status="stubbed", seconds=0.0, by=None))
    real, calls = approx_mod.evict_search, []

    def first_finds_nothing(*args, **kwargs):
        calls.append(1)
        return None if len(calls) == 1 else real(*args, **kwargs)

    monkeypatch.setattr(approx_mod, "evict_search", first_finds_nothing)
    dag = _layered(24, 4, 2)
    budget = int(0.85 * checkpoint_all(dag).peak(dag))
    sched = solve_approx(dag, budget, time_limit=600)
    assert len(calls) == 2
    assert not check(dag, sched.R, sched.S) and memory_profile(dag, sched.R, sched.S).max() <= budget


def test_the_search_resumed_across_calls_finds_what_one_long_call_finds(monkeypatch):
    """Issue #12 item 5: ``evict_search`` calls that share an ``EvictSearch`` go on where the previous call stopped, so
    short calls (phases of one solve, each with its slice of the time) add up to one long search: its first schedule
    comes after as many perf_counter ticks in all, and is the same one. Before, each call started over and no call
    shorter than the first fit found anything. A counted clock (each perf_counter() call a tick), no wall clock."""
    from remc.passes import evict, stagesearch
    from remc.passes.evict import EvictSearch

    dag = _layered(50, 5, 1)  # (the repair from checkpoint-all fits first, after ~500 ticks)
    budget = int(0.8 * checkpoint_all(dag).peak(dag))
    monkeypatch.setattr(stagesearch, "improve", lambda *a, **k: None)  # (the search after the first fit: not tested)
    clock = _FakeClock(1.0)
    monkeypatch.setattr(evict, "time", clock)
    monkeypatch.setattr(stagesearch, "time", clock)
    info: dict = {}
    one = evict_search(dag, budget, deadline=1e9, info=info)
    assert one is not None
    ticks = info["first_fit_seconds"]
    assert evict_search(dag, budget, deadline=clock.now + ticks / 4) is None  # a quarter, from nothing: none
    search, calls = EvictSearch(dag, budget), 0
    while (out := evict_search(dag, budget, deadline=clock.now + ticks / 4, search=search)) is None:
        calls += 1
        assert calls < 20
    assert calls >= 3 and search.calls == calls + 1
    assert out[3] == one[3] and np.array_equal(out[1], one[1])
    # a later call from nothing with the same search starts from the schedule found
    again = evict_search(dag, budget, deadline=-math.inf, search=search)
    assert again is not None and np.array_equal(again[1], one[1])


def test_approxs_second_stage_search_resumes_its_first(monkeypatch):
    """Issue #12 item 5: approx's stage search with the time left (RESEARCH_LEFT) resumes the producers of its first run
    (the same ``EvictSearch``), and checkmate's own search is resumed likewise where it passes it (``search``);
    before, the second run started from nothing and redid the first's rows."""
    monkeypatch.setattr(approx_mod, "MAX_LP_COLUMNS", 0)
    monkeypatch.setattr(approx_mod, "find_feasible", lambda *a, **k: SimpleNamespace(
        schedule=None, proven_infeasible=False, status="stubbed", seconds=0.0, by=None))
    real, seen = approx_mod.evict_search, []

    def first_finds_nothing(*args, **kwargs):
        seen.append(kwargs.get("search"))
        return None if len(seen) == 1 else real(*args, **kwargs)

    monkeypatch.setattr(approx_mod, "evict_search", first_finds_nothing)
    dag = _layered(24, 4, 2)
    budget = int(0.85 * checkpoint_all(dag).peak(dag))
    sched = solve_approx(dag, budget, time_limit=600)
    assert len(seen) == 2 and seen[0] is not None and seen[1] is seen[0]
    assert not check(dag, sched.R, sched.S) and memory_profile(dag, sched.R, sched.S).max() <= budget
    # a caller's search, after its own run (``searched``): resumed with the time left, the caller's object
    from remc.backends.strategies import _highs
    from remc.passes.evict import EvictSearch
    from remc.passes.options import ApproxOptions
    from remc.passes.solver_api import Clock

    seen.clear()
    mine = EvictSearch(dag, budget)
    seen.append(None)  # (so that the stub lets the call through)
    approx_mod.solve_approx(dag, budget, ApproxOptions(), lp=_highs(), clock=Clock(600), searched=True, search=mine)
    assert seen[1:] == [mine]


def test_a_repair_step_takes_a_free_keep_before_evaluating_the_drops(monkeypatch):
    """Issue #12 item 2: where none of the TOP_K best-ranked moves helps, a repair step evaluates the moves that keep a
    value resident (ranked last) first, and takes the best that lowers the bytes over budget at no added cost without
    evaluating the rest (FREE_KEEPS_FIRST). Before, every candidate was evaluated in such a step (own layered n = 500
    seed 21 at 0.8: 45 steps, 202332 of the repair's 207722 rows)."""
    from remc.passes import stagesearch
    from remc.passes.stagesearch import StageState, repair_steps

    real_best, real_moves, steps = stagesearch._best_repair, stagesearch._repair_moves, []

    def moves(st, floor):
        steps.append([])
        return real_moves(st, floor)

    def best(st, cands, floor, deadline=None, allow_worse=False, free=False):
        c0 = st.total_cost()
        out = real_best(st, cands, floor, deadline, allow_worse, free)
        steps[-1].append((free, out, st.total_cost() - c0, all(c[4] for c in cands)))
        return out

    monkeypatch.setattr(stagesearch, "_repair_moves", moves)
    monkeypatch.setattr(stagesearch, "_best_repair", best)
    dag = _layered(40, 5, 0)
    budget = int(0.7 * checkpoint_all(dag).peak(dag))
    st = StageState(dag, budget, checkpoint_all(dag).S)
    assert repair_steps(st, None) == "fit"
    R, S = clean(dag, st.R, st.S)
    assert not check(dag, R, S) and memory_profile(dag, R, S).max() <= budget
    free_steps = [s for s in steps if any(f and ok for f, ok, _, _ in s)]
    assert free_steps
    for s in free_steps:  # the top moves failed, then the keeps alone, taken at no added cost; nothing after
        assert [f for f, _, _, _ in s] == [False, True] and s[1][3] and s[1][2] <= 1e-9 * dag.cost.sum()


def test_a_repair_step_takes_the_best_of_the_first_chunk_where_a_move_helps(monkeypatch):
    """Issue #12 item 2: the candidates after the TOP_K best-ranked ones are evaluated in chunks of REPAIR_CHUNK, and
    the best of the first chunk where one helps is taken, so a step evaluates far fewer than all of them (own layered
    n = 500 seed 21 at 0.8: a helping move within the first 11 in each of its 45 such steps, of 389-539). Counted rows,
    no clock: fewer rows than with the whole list at once (REPAIR_CHUNK 0), and the schedule fits."""
    from remc.passes import stagesearch
    from remc.passes.stagesearch import StageState, repair_steps

    dag = _layered(100, 10, 3)
    budget = int(0.8 * checkpoint_all(dag).peak(dag))
    rows = {}
    for chunk in (0, 8):
        monkeypatch.setattr(stagesearch, "REPAIR_CHUNK", chunk)
        st = StageState(dag, budget, checkpoint_all(dag).S)
        assert repair_steps(st, None) == "fit"
        R, S = clean(dag, st.R, st.S)
        assert not check(dag, R, S) and memory_profile(dag, R, S).max() <= budget
        rows[chunk] = st.rows
    assert rows[8] < 0.8 * rows[0]


def test_while_nothing_fits_a_setting_past_its_first_pass_rows_gets_no_more_turns():
    """Issue #12 items 2 and 5: while nothing fits, an eviction setting that has not fitted within its first round
    (FIRST_PASS_ROWS rows a unit) is given up (SETTINGS_GIVE_UP), and its turns go to the repair from checkpoint-all
    and the least-memory starts. Before, each failing setting kept a SLICE_ROWS turn every round (own layered n = 500
    seed 21 at 0.8: 14.8 of the 33.1 s of CPU to the first schedule). Counted rows, no clock: stand-in producers."""
    from remc.passes import evict
    from remc.passes.stagesearch import StageState

    dag = _layered(24, 4, 2)
    budget = int(0.85 * checkpoint_all(dag).peak(dag))
    fits = StageState(dag, budget, checkpoint_all(dag).S)

    class Slow(evict.EvictRun):  # a setting that never ends: its passes keep failing
        def __init__(self, k: int) -> None:
            self.setting, self.result, self.done, self.done_rows = (1.0, k, False), None, False, 0

        @property
        def rows(self) -> int:
            return self.done_rows

        def advance(self, until, rows=None):
            self.done_rows += max(rows or 1, 1)
            return False

    class Repair:  # the repair: fits after 40 of its slices
        name, result, done, rows = "repair", None, False, 0

        def advance(self, until, rows=None):
            self.rows += max(rows or 1, 1)
            if self.rows >= 40 * evict.SLICE_ROWS:
                self.result, self.done = fits, True
            return self.done

    class Least(Repair):  # the least-memory starts: never fit
        least = 0

        def advance(self, until, rows=None):
            self.rows += max(rows or 1, 1)
            return False

    search = evict.EvictSearch(dag, budget)
    search.runs = [Slow(k) for k in range(len(evict.VARIANTS))]
    search.rep, search._least = Repair(), Least()
    search.feasible(math.inf, lambda r: setattr(search, "found", r.result))
    assert search.found is fits
    assert all(r.rows <= evict.FIRST_PASS_ROWS * dag.n for r in search.runs)
    assert not search.exhausted()


def test_where_nothing_fits_and_an_lp_is_built_approx_searches_before_its_bound(monkeypatch):
    """SEARCH_BEFORE_BOUND (issue #12 item 5): where no schedule fits at approx's start and its LP would be built,
    the stage search runs before the retention-gap bound (which took 20% of the time first: Swin-T's first fit
    round), and the bound still runs once the search has a schedule, so the report carries it. No time limit."""
    calls: list[str] = []
    real_bound, real_search = approx_mod.gap_bound, approx_mod._stage_search

    def bound(*a, **k):
        calls.append("bound")
        return real_bound(*a, **k)

    def search(*a, **k):
        calls.append("search")
        return real_search(*a, **k)

    monkeypatch.setattr(approx_mod, "gap_bound", bound)
    monkeypatch.setattr(approx_mod, "_stage_search", search)
    dag = _layered(40, 8, 3)
    budget = int(0.8 * checkpoint_all(dag).peak(dag))
    assert approx_mod.model_columns(dag) <= approx_mod.MAX_LP_COLUMNS  # (an LP is built)
    sched = solve_approx(dag, budget, refine=False)
    assert calls[:2] == ["search", "bound"]
    rep = sched.report
    assert not check(dag, sched.R, sched.S) and memory_profile(dag, sched.R, sched.S).max() <= budget
    assert rep.extras["gap_bound"] > float(dag.cost.sum()) and rep.bound <= rep.cost
