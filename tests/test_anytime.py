"""The time limit as the user's wall clock, deterministic searches, the portfolio's starts, the solve's memory
(issue #12 items 2, 3, 5). Time is simulated with a fake clock where a test needs it (no wall-clock
assertions: the overruns are measured by tools/bench_overrun.py)."""
from __future__ import annotations

import math
import time
import types

import numpy as np
import pytest
from _milp_dags import training_graph
from test_evict import _layered

from remc.ir.dag import DAG
from remc.ir.errors import RemcError
from remc.ir.schedule import checkpoint_all


class FakeClock:
    """A ``time`` stand-in whose ``perf_counter`` advances by ``step`` at every call (a machine ``1 / step``
    times as fast), so that slices and deadlines fall where a test puts them, not where the load does."""

    def __init__(self, step: float) -> None:
        self.now, self.step = 0.0, step

    def perf_counter(self) -> float:
        self.now += self.step
        return self.now

    def __getattr__(self, name: str):
        return getattr(time, name)


def _fake_time(monkeypatch: pytest.MonkeyPatch, *modules: types.ModuleType, step: float) -> FakeClock:
    clock = FakeClock(step)
    for m in modules:
        monkeypatch.setattr(m, "time", clock)
    return clock


def _over_budget(n: int = 60, seed: int = 1, ratio: float = 0.8) -> tuple[DAG, int]:
    dag = _layered(n, 10, seed)
    return dag, int(ratio * checkpoint_all(dag).peak(dag))


def test_greedy_baselines_stop_at_the_deadline() -> None:
    """The greedy baselines' walk over their knob and their evaluations stop at ``deadline`` (the first set is
    always walked and one schedule evaluated); ``best_baseline`` with the caller's limit (``hard``) on a graph
    above LARGE_GRAPH units does not run the whole search after the late pass (at 1000 units it took 13 s)."""
    from remc.passes.baselines.chen import forward_units, greedy_sets, lin_greedy
    from remc.passes.strategies import LARGE_GRAPH, best_baseline

    dag = _layered(150, 10, 3)
    assert dag.n > LARGE_GRAPH
    sets = greedy_sets(dag, forward_units(dag))
    assert len(sets) > 2
    assert len(greedy_sets(dag, forward_units(dag), deadline=-math.inf)) == 1  # (a deadline already passed)
    peak = checkpoint_all(dag).peak(dag)
    s = lin_greedy(dag, peak, deadline=-math.inf)
    assert s.report["candidates_evaluated"] == 1
    import remc.passes.strategies as ps
    calls: list = []
    real = ps.best_baseline
    budget = int(0.5 * peak)  # nothing fits
    past = -math.inf  # (deadlines already passed)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(ps, "best_baseline", lambda *a, **k: calls.append(k) or real(*a, **k))
        assert real(dag, budget, deadline=past, hard=past) is None
    assert calls == []  # no whole search after the late pass
    assert best_baseline(dag, budget) is None


def test_cpsat_does_not_build_a_model_it_has_no_time_for() -> None:
    """The cpsat strategy returns its hint, said so, where the time left is below the model's build estimate
    (before: a model of 1000 units was built and solved for at least 1 s more, 7 s past a 10 s limit)."""
    pytest.importorskip("ortools")
    from remc.backends.cpsat import BUILD_SECONDS_PER_UNIT
    from remc.backends.strategies import make_options, solve

    dag = _layered(120, 10, 4)
    budget = int(checkpoint_all(dag).peak(dag))
    limit = 0.5 * BUILD_SECONDS_PER_UNIT * dag.n
    sched = solve("cpsat", dag, budget, make_options("cpsat", time_limit=limit, threads=1))
    assert sched.report.extras["cp_sat"].startswith("not built")
    assert sched.report.status == "time_limit" and sched.peak(dag) <= budget


def test_remc_solve_takes_the_start_up_and_the_plan_off_the_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    """``remc solve``'s solve gets --time-limit less the process's age and the plan's and the exit's estimate,
    the latter times the load per core (at load 8 on 2 cores: 4 times)."""
    import os

    from remc.backends.strategies import make_options
    from remc.cli import EXIT_SECONDS, PLAN_SECONDS_PER_UNIT2, _solve_clock

    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1}, raising=False)
    monkeypatch.setattr(os, "getloadavg", lambda: (1.0, 1.0, 1.0))
    o = _solve_clock(make_options("approx", time_limit=10.0), 1000, 2.0)
    assert o.time_limit == pytest.approx(10.0 - 2.0 - PLAN_SECONDS_PER_UNIT2 * 1e6 - EXIT_SECONDS)
    monkeypatch.setattr(os, "getloadavg", lambda: (8.0, 8.0, 8.0))
    o = _solve_clock(make_options("approx", time_limit=30.0), 250, 2.0)
    assert o.time_limit == pytest.approx(30.0 - 2.0 - 4 * (PLAN_SECONDS_PER_UNIT2 * 250 ** 2 + EXIT_SECONDS))
    from remc.cli import RESERVE_SHARE
    o = _solve_clock(make_options("cpsat", time_limit=20.0), 1000, 4.0)  # (1.5 s + 0.3 s) x 4 > a quarter of 20 s
    assert o.time_limit == pytest.approx(20.0 - 4.0 - RESERVE_SHARE * 20.0)
    assert _solve_clock(make_options("checkmate", time_limit=1.0), 1000, 5.0).time_limit > 0
    assert _solve_clock(None, 1000, 5.0) is None


def test_remc_solve_reports_the_process_seconds_and_memory(tmp_path, capsys) -> None:
    """The report's ``seconds`` is the process's (start-up and plan included), beside the solve's own, the limit
    and the solve's peak memory."""
    import json

    from remc.cli import main
    from remc.ir.nodelink import save_nodelink

    dag = _layered(30, 6, 5)
    path = tmp_path / "g.json"
    save_nodelink(dag, path)
    assert main(["solve", str(path), "--budget", "0.9x", "--strategy", "approx", "--time-limit", "20",
                 "--json"]) == 0
    rep = json.loads(capsys.readouterr().out)
    assert rep["time_limit"] == 20 and rep["solve_seconds"] <= rep["seconds"]
    assert rep["peak_rss_mib"] > 0


def test_refine_repair_keeps_no_evaluated_points(monkeypatch: pytest.MonkeyPatch) -> None:
    """The local search's repair keeps the moves it tried as bit-packed S matrices, not as evaluated points (each
    with an n x n int64 memory profile: 2.7 GiB on GPT-2 at 1730 units), and finds the same schedule."""
    from remc.passes import refine as refine_mod

    rng = np.random.default_rng(7)
    dag = training_graph(14, rng, skips=((1, 10), (3, 8)))
    budget = int(0.7 * checkpoint_all(dag).peak(dag))
    kept: list = []
    real = refine_mod.Refiner._evaluated

    def spy(self, moves, into=None):
        if into is not None:
            kept.append(into)
        return real(self, moves, into)
    monkeypatch.setattr(refine_mod.Refiner, "_evaluated", spy)
    r = refine_mod.Refiner(dag, budget)
    q = r.repair(r.evaluate(checkpoint_all(dag).S))
    assert q is None or q.peak <= budget
    assert kept and all(isinstance(x, np.ndarray) and x.dtype == np.uint8 for lst in kept for x in lst)


def test_checkmate_rounds_approx_lp_after_cpsat_where_the_lp_is_small(monkeypatch: pytest.MonkeyPatch) -> None:
    """After a CP-SAT phase that leaves less than ``approx_share`` of the limit, approx's LP rounding still runs
    on a graph whose LP builds in a small share of the time left (its rounded schedules start the local search;
    before: skipped, and checkmate ended 3-5% above approx alone on random small DAGs at 10 s), and the local
    search starts from the stage search's and the baseline's schedules too."""
    pytest.importorskip("ortools")
    import remc.backends.strategies as strat
    from remc.backends.strategies import make_options, solve

    rng = np.random.default_rng(12)
    dag = training_graph(12, rng, skips=((1, 9), (2, 7)))
    budget = int(0.85 * checkpoint_all(dag).peak(dag))
    clock = FakeClock(1e-7)
    monkeypatch.setattr(time, "perf_counter", clock.perf_counter)
    limit = 100.0

    def cp_stub(dag, budget, *, incumbent, gap, threads, seconds, **kw):
        clock.now += 0.75 * limit  # CP-SAT used three quarters of the limit, proving nothing
        return incumbent, -np.inf, "stub"
    monkeypatch.setattr(strat, "cpsat_phase", cp_stub)
    monkeypatch.setattr(strat, "COVER_FIRST", False)  # (the covering MILP before CP-SAT would prove it)
    monkeypatch.setattr(strat, "_cover_phase", lambda *a, **k: None)  # (its bound proves this case at once)
    monkeypatch.setattr(strat, "COVER_BESIDE", False)  # (and so does the covering MILP beside CP-SAT)
    starts: list = []
    real = strat._refine

    def refine_spy(dag, budget, s, over, clock_):
        starts.extend(x for x in s if x is not None)
        return real(dag, budget, s, over, clock_)
    monkeypatch.setattr(strat, "_refine", refine_spy)
    sched = solve("checkmate", dag, budget, make_options("checkmate", time_limit=limit, threads=1))
    assert sched.report.extras["cp_sat"] == "stub"
    assert sched.report.extras["approx"] != "not run", sched.report.extras
    assert sched.peak(dag) <= budget
    assert len(starts) >= 3  # approx's, the incumbent, the stage search's and the baseline's (some equal)


def test_first_fitting_baseline_where_approx_builds_no_lp(monkeypatch: pytest.MonkeyPatch) -> None:
    """``best_baseline(first=True)`` is the quickest baseline that fits, and approx asks for it where neither
    its LP nor the feasibility MILP is built (the stage search there needs a schedule to start from, not the
    cheapest baseline: ResNet50 fine at 12 s spent 4.6-6.4 s on all eight)."""
    from _milp_dags import training_graph

    import remc.backends.strategies as bs
    import remc.passes.approx as pa
    from remc.ir.errors import RemcError
    from remc.passes.strategies import _BY_SPEED, best_baseline, solve_baseline_strategy

    dag = training_graph(12, np.random.default_rng(2))
    peak = checkpoint_all(dag).peak(dag)
    budget = int(0.9 * peak)  # chen-sqrtn fits first (cost 102), griewank is the cheapest (81)
    first = best_baseline(dag, budget, first=True)
    fitting = []
    for name in _BY_SPEED:
        try:
            fitting.append(solve_baseline_strategy(name, dag, budget))
        except RemcError:
            pass
    assert first is not None and len(fitting) >= 2
    assert first.cost(dag) == fitting[0].cost(dag) > min(s.cost(dag) for s in fitting)
    assert best_baseline(dag, budget).cost(dag) == min(s.cost(dag) for s in fitting)
    seen: list = []
    real = bs.best_baseline
    monkeypatch.setattr(bs, "best_baseline", lambda *a, **k: seen.append(k.get("first")) or real(*a, **k))
    monkeypatch.setattr(pa, "MAX_LP_COLUMNS", 0)
    monkeypatch.setattr(pa, "MAX_FEASIBLE_COLUMNS", 0)
    bs.solve("approx", dag, budget, bs.make_options("approx", time_limit=5, threads=1))
    assert seen == [True]
    monkeypatch.undo()


def test_cpsat_without_time_to_build_gives_the_stage_search_the_time_left(monkeypatch: pytest.MonkeyPatch) -> None:
    """Where no baseline fits, the hint search's quarter of the limit found nothing and the model cannot be built
    in the time left, the cpsat strategy runs the stage search again with all the time left and returns its
    schedule, labelled (before: "no schedule in time" at once; Moccasin's n = 1000 at 0.8 with 10 s, where approx
    found +26%)."""
    pytest.importorskip("ortools")
    import remc.backends.cpsat as cpsat
    import remc.passes.strategies as pstrat
    from remc.backends.strategies import make_options, solve

    dag, budget = _over_budget(40, 2, 0.9)
    real = cpsat._stage_search_hint
    calls: list = []

    def hint(dag_, budget_, deadline):
        calls.append(deadline)
        return None if len(calls) == 1 else real(dag_, budget_, None)  # the quarter finds nothing
    monkeypatch.setattr(cpsat, "_stage_search_hint", hint)
    monkeypatch.setattr(pstrat, "best_baseline", lambda *a, **k: None)  # no baseline fits
    monkeypatch.setattr(cpsat, "BUILD_SECONDS_PER_UNIT", 1e6)  # no time to build the model
    monkeypatch.setattr(cpsat, "NO_MODEL_STAGE_SEARCH", False)  # (the path where the model may still be built)
    sched = solve("cpsat", dag, budget, make_options("cpsat", time_limit=1000.0, threads=1))
    assert len(calls) == 2 and sched.peak(dag) <= budget
    assert sched.report.status == "time_limit" and sched.report.extras["cp_sat"].startswith("not built")


def test_cpsat_build_estimate_scales_with_the_load(monkeypatch: pytest.MonkeyPatch) -> None:
    """The model's build estimate grows with the load per core, and the model is built only with MODEL_MARGIN times
    it left (before: 3 ms per unit whatever the load, and a model of 1000 units was built with 5.6 s left of 10 s at
    a load of 7 on 2 cores: 15.6 s of build, the process 35 s, no schedule)."""
    pytest.importorskip("ortools")
    import os

    import remc.backends.cpsat as cpsat
    from remc.backends.strategies import make_options, solve

    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1}, raising=False)
    monkeypatch.setattr(os, "getloadavg", lambda: (0.5, 0.5, 0.5))
    idle = cpsat.build_seconds(1000)
    monkeypatch.setattr(os, "getloadavg", lambda: (8.0, 8.0, 8.0))
    assert cpsat.build_seconds(1000) == pytest.approx(4 * idle) and idle == pytest.approx(1000 * cpsat.BUILD_SECONDS_PER_UNIT)
    dag = _layered(120, 10, 4)
    budget = int(checkpoint_all(dag).peak(dag))
    built: list = []
    monkeypatch.setattr(cpsat, "_build", lambda *a, **k: built.append(1) or (_ for _ in ()).throw(AssertionError))
    # a limit where the idle estimate leaves room for the build but not MODEL_MARGIN times the loaded one
    monkeypatch.setattr(cpsat, "BUILD_SECONDS_PER_UNIT", 1.0 / dag.n)  # 1 s idle, 4 s at load 8
    sched = solve("cpsat", dag, budget, make_options("cpsat", time_limit=6.0, threads=1))
    assert not built and sched.report.extras["cp_sat"].startswith("not built")


def test_checkmate_runs_approx_alones_own_search_after_cpsat(monkeypatch: pytest.MonkeyPatch) -> None:
    """Where CP-SAT does not prove its schedule, checkmate runs approx alone's own search (its options, from its
    incumbent, the best baseline; its local search in full), so that where that search ends by itself checkmate
    is never worse than approx alone. Before: approx's rounding from CP-SAT's schedule, repair only, and a local
    search resumed from other starts (random small DAGs at 20 s, case 7: +42-47% against approx alone's +40.1%)."""
    pytest.importorskip("ortools")
    import remc.backends.strategies as strat
    from remc.backends.strategies import make_options, solve
    from remc.passes import approx as approx_mod

    rng = np.random.default_rng(12)
    dag = training_graph(12, rng, skips=((1, 9), (2, 7)))
    budget = int(0.8 * checkpoint_all(dag).peak(dag))
    monkeypatch.setattr(strat, "cpsat_phase", lambda dag, budget, *, incumbent, **k: (incumbent, -np.inf, "stub"))
    monkeypatch.setattr(strat, "COVER_FIRST", False)  # (the covering MILP before CP-SAT would prove it)
    monkeypatch.setattr(strat, "_cover_phase", lambda *a, **k: None)
    monkeypatch.setattr(strat, "_proven", lambda *a, **k: False)  # no bound proves: every phase runs
    calls: list = []
    real = approx_mod.solve_approx

    def spy(dag_, budget_, options=None, **kw):
        calls.append((options, kw))
        return real(dag_, budget_, options, **kw)
    monkeypatch.setattr(approx_mod, "solve_approx", spy)
    a = solve("approx", dag, budget, make_options("approx", threads=1))
    alone = calls.pop()
    c = solve("checkmate", dag, budget, make_options("checkmate", threads=1))
    own = [(opts, kw) for opts, kw in calls if not kw.get("repair_only") and kw.get("exact_phase", True)]
    assert own, calls  # approx alone's search, not only its rounding
    opts, kw = own[0]
    assert opts.eps == alone[0].eps and opts.eps_list == alone[0].eps_list and opts.refine == alone[0].refine
    assert (kw["incumbent"] is None) == (alone[1]["incumbent"] is None)
    assert kw["incumbent"] is None or np.array_equal(kw["incumbent"].S, alone[1]["incumbent"].S)
    assert c.peak(dag) <= budget and c.cost(dag) <= a.cost(dag) * (1 + 1e-12)


def test_approx_does_not_start_an_lp_it_has_no_time_to_build_at_this_load(monkeypatch: pytest.MonkeyPatch) -> None:
    """approx's LP build estimate grows with the load per core (``lp_build_seconds``): at a load that makes it
    longer than the time left, the LP is not started (before: 4e-5 s a column whatever the load; Moccasin's n=250
    at 0.9 with 30 s at a load of 8.5 on 2 cores built its 110k-column LP for 27.8 s with 12 s left)."""
    import os

    from remc.backends.strategies import _highs
    from remc.passes import approx as approx_mod
    from remc.passes.milp_model import model_columns
    from remc.passes.solver_api import Clock

    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1}, raising=False)
    monkeypatch.setattr(os, "getloadavg", lambda: (8.0, 8.0, 8.0))
    rng = np.random.default_rng(3)
    dag = training_graph(10, rng, skips=((1, 8),))
    budget = int(0.8 * checkpoint_all(dag).peak(dag))
    cols = model_columns(dag)
    assert approx_mod.lp_build_seconds(cols) == pytest.approx(4 * approx_mod.LP_LOAD_MARGIN *
                                                              approx_mod.LP_BUILD_SECONDS_PER_COLUMN * cols)
    # a clock with 2x the idle estimate left and no time passing: enough on idle cores, not at load 8
    monkeypatch.setattr(approx_mod, "LP_BUILD_SECONDS_PER_COLUMN", 1.0 / cols)
    clock = Clock(2.0)
    monkeypatch.setattr(clock, "_now", lambda: clock.start)
    built: list = []
    monkeypatch.setattr(approx_mod, "_Relaxation", lambda *a, **k: built.append(1) or (_ for _ in ()).throw(AssertionError))
    try:
        approx_mod.solve_approx(dag, budget, lp=_highs(), clock=clock, exact_phase=False)
    except RemcError:  # (nothing may fit without the LP: approx says so)
        pass
    assert not built


def test_approx_gives_the_stage_search_the_time_no_lp_or_exact_phase_can_start_in(monkeypatch: pytest.MonkeyPatch) -> None:
    """Where nothing fits yet and what the stage search's share leaves is too little to start the LP or the
    feasibility MILP at this load, the search gets all the time (before: it stopped at its share, neither was
    started, and approx said "no schedule" with half the limit left: MobileNetV3-small from torchvision, 171 units,
    `remc compile --strategy approx --time-limit 60` at a load of 12 on 2 cores). With time for them, its share
    stays."""
    from remc.backends.strategies import _highs
    from remc.passes import approx as approx_mod
    from remc.passes import feasible as feas_mod
    from remc.passes.bounds import GapBound
    from remc.passes.solver_api import Clock

    dag, budget = _over_budget(40, 2, 0.8)  # (checkpoint-all does not fit: approx starts with nothing)
    monkeypatch.setattr(approx_mod, "gap_bound", lambda *a, **k: GapBound(float(dag.cost.sum()), 0, 0, 0))
    shares: list[float] = []

    class Stop(Exception):
        pass

    def stage_search(dag_, budget_, given, clock, share, *a, **k):
        shares.append(share)
        raise Stop

    monkeypatch.setattr(approx_mod, "_stage_search", stage_search)
    for build in (1e9, 0.0):  # seconds to build the LP and the feasibility MILP
        monkeypatch.setattr(approx_mod, "lp_build_seconds", lambda cols, b=build: b)
        monkeypatch.setattr(feas_mod, "BUILD_SECONDS_PER_COLUMN", build)
        clock = Clock(60.0)
        monkeypatch.setattr(clock, "_now", lambda c=clock: c.start)
        with pytest.raises(Stop):
            approx_mod.solve_approx(dag, budget, lp=_highs(), clock=clock)
    # (all of it but the retention-gap bound's reserve after it, LATE_BOUND_SHARE: approx starts with nothing, so its
    # search runs before the bound, SEARCH_BEFORE_BOUND)
    assert shares[0] == pytest.approx(1.0 - approx_mod.LATE_BOUND_SHARE) and shares[1] < 0.5


def test_feasibility_milp_and_race_not_started_without_time_to_build(monkeypatch: pytest.MonkeyPatch) -> None:
    """The exact feasibility phase's MILP and CP-SAT's least-memory model (its race) are not built where their
    build estimate at this load exceeds the time given (before: the MILP started with 1 s left whatever its size;
    Moccasin's n=250 at 0.8 with 30 s at a load of 9 ran 71 s and found nothing)."""
    pytest.importorskip("ortools")
    import os
    import threading

    import remc.backends.cpsat as cpsat
    from remc.backends.strategies import _highs
    from remc.passes import feasible as feas_mod
    from remc.passes.milp_model import model_columns

    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1}, raising=False)
    monkeypatch.setattr(os, "getloadavg", lambda: (8.0, 8.0, 8.0))
    dag, budget = _over_budget(40, 2, 0.8)
    monkeypatch.setattr(feas_mod, "BUILD_SECONDS_PER_COLUMN", 1.0 / model_columns(dag))  # 1 s idle, 4 s at load 8
    monkeypatch.setattr(feas_mod, "feasibility_model", lambda *a, **k: (_ for _ in ()).throw(AssertionError("built")))
    res = feas_mod.find_feasible(dag, budget, _highs(), time_limit=2.0)
    assert res.schedule is None and res.status.startswith("not started")
    monkeypatch.setattr(cpsat, "BUILD_SECONDS_PER_UNIT", 1.0 / dag.n)
    monkeypatch.setattr(cpsat, "_build", lambda *a, **k: (_ for _ in ()).throw(AssertionError("built")))
    assert cpsat.cpsat_first(dag, budget, 2.0, threading.Event()) is None


def test_approx_starts_no_stage_search_past_the_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    """approx does not start its stage search (nor its late bound) once its clock has run out (before: Moccasin's
    n=1000 at 0.8 with 10 s at a load of 10, the baselines used all of the solve's time and the stage search then
    ran 10 s more, the process 24 s in all)."""
    from remc.backends.strategies import _highs
    from remc.passes import approx as approx_mod
    from remc.passes.solver_api import Clock

    dag, budget = _over_budget(130, 2, 0.8)  # above STAGE_SEARCH_UNITS, nothing given
    monkeypatch.setattr(approx_mod, "_stage_search", lambda *a, **k: (_ for _ in ()).throw(AssertionError("ran")))
    with pytest.raises(RemcError):
        approx_mod.solve_approx(dag, budget, lp=_highs(), clock=Clock(-math.inf), exact_phase=False)


def test_checkmate_starts_no_milp_it_has_no_time_to_build_at_this_load(monkeypatch: pytest.MonkeyPatch) -> None:
    """The MILP is not started where its build estimate at this load exceeds the time left (before: with 1 s left
    whatever its size; Moccasin's n=500 at 0.8 with 120 s at a load of 10: it started with 4.6 s left and ran 20 s);
    the best schedule so far is returned."""
    import os

    from remc.backends.strategies import _highs
    from remc.passes import milp as milp_mod
    from remc.passes.milp_model import model_columns
    from remc.passes.options import CheckmateOptions
    from remc.passes.solver_api import Clock

    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1}, raising=False)
    monkeypatch.setattr(os, "getloadavg", lambda: (8.0, 8.0, 8.0))
    rng = np.random.default_rng(3)
    dag = training_graph(10, rng, skips=((1, 8),))
    budget = int(0.9 * checkpoint_all(dag).peak(dag))
    monkeypatch.setattr(milp_mod, "BUILD_SECONDS_PER_COLUMN", 1.0 / model_columns(dag))  # 1 s idle, 4 s at load 8
    monkeypatch.setattr(milp_mod, "_run_milp", lambda *a, **k: (_ for _ in ()).throw(AssertionError("built")))
    clock = Clock(2.0)
    monkeypatch.setattr(clock, "_now", lambda: clock.start)  # 2 s left throughout
    from remc.passes.strategies import best_baseline
    seed = best_baseline(dag, budget)
    assert seed is not None
    s = milp_mod.solve_milp(dag, budget, CheckmateOptions(warm_start=False), mip=_highs(), lp=_highs(), incumbent=seed,
                            clock=clock)
    assert s.report.extras["milp"].startswith("not started") and s.peak(dag) <= budget


def test_checkmate_takes_the_bound_beside_cpsat_before_approx_alones_search(monkeypatch: pytest.MonkeyPatch) -> None:
    """Where the covering MILP beside CP-SAT proved the schedule (and so stopped CP-SAT), checkmate takes its bound at
    once: approx alone's own search does not run (the session-14 merge ran it first, 32 s of segnet's 35 s at 0.8
    where the proof was in hand at 2.8 s); where it has not finished, checkmate waits for it at most BESIDE_GRACE of
    the time left before that search."""
    pytest.importorskip("ortools")
    import remc.backends.strategies as strat
    from remc.backends.strategies import make_options, solve

    rng = np.random.default_rng(12)
    dag = training_graph(12, rng, skips=((1, 9), (2, 7)))
    budget = int(0.8 * checkpoint_all(dag).peak(dag))
    waits: list = []

    class Beside:  # a covering MILP that has proven the incumbent (its bound is its cost)
        def __init__(self, *a, **k):
            self.note, self.started, self.value, self.finished = "fake", True, -math.inf, False

        def bound(self):
            return self.value

        def done(self):
            return self.finished

        def wait(self, timeout):
            waits.append(timeout)

        def stop(self):
            pass

    made: list = []
    monkeypatch.setattr(strat, "_CoverBeside", lambda *a, **k: made.append(Beside()) or made[-1])

    def cp_stub(dag_, budget_, *, incumbent, external=None, **k):
        made[-1].value, made[-1].finished = incumbent.cost(dag_), True  # proven beside CP-SAT, which stops
        return incumbent, -np.inf, "stopped: the bound found beside CP-SAT proves it"
    monkeypatch.setattr(strat, "cpsat_phase", cp_stub)
    monkeypatch.setattr(strat, "COVER_FIRST", False)  # (the covering MILP before CP-SAT would prove it)
    own: list = []
    monkeypatch.setattr(strat, "_approx_own", lambda *a, **k: own.append(1))
    s = solve("checkmate", dag, budget, make_options("checkmate", time_limit=100.0, threads=1))
    assert s.report.status == "optimal" and not own and not waits

    def cp_unfinished(dag_, budget_, *, incumbent, external=None, **k):
        return incumbent, -np.inf, "stub"  # the covering MILP still running
    monkeypatch.setattr(strat, "cpsat_phase", cp_unfinished)
    monkeypatch.setattr(strat, "COVER_FIRST", False)  # (the covering MILP before CP-SAT would prove it)
    monkeypatch.setattr(strat, "_proven", lambda *a, **k: False)
    solve("checkmate", dag, budget, make_options("checkmate", time_limit=100.0, threads=1))
    assert waits and 0 < waits[0] <= strat.BESIDE_GRACE * 100.0 and own


def test_checkmate_runs_approx_alones_steps_where_nothing_fits_before_cpsat(monkeypatch: pytest.MonkeyPatch) -> None:
    """Where nothing fits before CP-SAT (no baseline, the stage search from nothing found nothing), checkmate runs
    approx alone's own steps next (its options, no incumbent, its exact feasibility race, its local search in
    full) without running the stage search from nothing again, and the retention-gap bound only after them, so
    that it reaches approx alone's LP and feasibility race no later than approx alone does. Before: approx's
    rounding (repair only, its stage search again) within 0.6 of the time left, the bound before it and the race
    on 0.8 of the rest: random small DAGs at 10 s, 2 of 80 with no schedule from checkmate where approx alone had
    one (tools/bench_portfolio.py, seed 12, case 45)."""
    pytest.importorskip("ortools")
    import remc.backends.strategies as strat
    from remc.backends.strategies import make_options, solve
    from remc.passes import approx as approx_mod
    from remc.passes import bounds as bounds_mod

    rng = np.random.default_rng(12)
    dag = training_graph(8, rng, skips=((1, 6),))
    budget = int(0.8 * checkpoint_all(dag).peak(dag))
    events: list = []
    monkeypatch.setattr(strat, "_stage_hint", lambda *a, **k: events.append("stage search") or None)
    monkeypatch.setattr(strat, "_incumbent", lambda *a, **k: None)  # no baseline fits
    monkeypatch.setattr(strat, "cpsat_phase", lambda dag, budget, *, incumbent, **k: (incumbent, -np.inf, "stub"))
    monkeypatch.setattr(strat, "_cover_phase", lambda *a, **k: None)
    monkeypatch.setattr(strat, "COVER_BEFORE_STAGE", False)  # (its decoded schedule would fit: something fits)
    monkeypatch.setattr(approx_mod, "evict_search", lambda *a, **k: events.append("approx's stage search"))
    for mod in (approx_mod, bounds_mod):  # (its value is not what is tested: none, at once)
        monkeypatch.setattr(mod, "gap_bound", lambda *a, **k: events.append("bound") or types.SimpleNamespace(bound=-math.inf))
    real = approx_mod.solve_approx

    def spy(dag_, budget_, options=None, **kw):
        events.append(("approx", options, kw))
        return real(dag_, budget_, options, **kw)
    monkeypatch.setattr(approx_mod, "solve_approx", spy)
    c = solve("checkmate", dag, budget, make_options("checkmate", threads=1))
    assert c.peak(dag) <= budget
    calls = [e for e in events if isinstance(e, tuple)]
    assert calls, events
    _, opts, kw = calls[0]
    alone = make_options("approx", threads=1)
    assert (opts.eps, opts.eps_list, opts.refine, opts.rounding) == (alone.eps, alone.eps_list, alone.refine,
                                                                      alone.rounding)
    assert kw["incumbent"] is None and kw.get("searched") and not kw.get("repair_only")
    assert kw.get("exact_phase", True) and kw.get("race") is not None
    first = events.index(calls[0])
    assert events[:first] == ["stage search"], events  # no bound and no second stage search before approx's steps
    assert "approx's stage search" not in events
    # with a limit: the exact phase keeps FEASIBLE_SHARE of the whole limit (a clock standing still, 30 of 100 s used)
    from remc.passes.solver_api import Clock
    clock = Clock(100.0)
    monkeypatch.setattr(clock, "_now", lambda: clock.start + 30.0)
    events.clear()

    def record(dag_, budget_, options=None, **kw):  # (recorded, not run)
        events.append(("approx", options, kw))
        raise approx_mod.LpUnfinished("stub", -math.inf)
    monkeypatch.setattr(approx_mod, "solve_approx", record)
    strat._approx_own(dag, budget, make_options("checkmate", threads=1, time_limit=100.0), clock, None, None, {}, {},
                      searched=True, nothing_fits=True)
    _, opts, kw = [e for e in events if isinstance(e, tuple)][0]
    assert opts.time_limit == pytest.approx(70.0) and kw["exact_reserve"] == pytest.approx(approx_mod.FEASIBLE_SHARE * 100)


def test_no_baseline_but_checkpoint_all_starts_after_the_callers_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    """Past the caller's limit (``hard``) ``best_baseline`` starts no baseline after checkpoint-all: before, each
    greedy baseline still evaluated one schedule (Moccasin's n=1000 at 0.8, `remc solve --time-limit 10` at a load
    of 10 on 2 cores: 5.4 s past the solve's limit)."""
    import remc.passes.strategies as ps

    dag = _layered(150, 10, 3)
    budget = int(0.5 * checkpoint_all(dag).peak(dag))  # nothing fits
    started: list = []
    real = ps.solve_baseline_strategy
    monkeypatch.setattr(ps, "solve_baseline_strategy", lambda name, *a, **k: started.append(name) or real(name, *a, **k))
    assert ps.best_baseline(dag, budget, deadline=-math.inf, hard=-math.inf) is None
    assert started == ["checkpoint-all"]
    started.clear()
    assert ps.best_baseline(dag, budget, deadline=-math.inf) is None  # (no caller's limit: every one still runs)
    assert set(started) == set(ps.BASELINE_NAMES)


def test_evict_search_builds_no_stage_state_past_its_deadline(monkeypatch: pytest.MonkeyPatch) -> None:
    """``evict_search`` past its deadline evaluates no whole schedule (a ``StageState`` build: n rows, not
    interruptible, 1.5-4 s at 1000 units under load): the repair from checkpoint-all builds its state at its first
    turn, not at the search's start, and a schedule that fits is not rebuilt for a search that has no time."""
    from remc.passes import evict

    dag, budget = _over_budget(60)
    built: list = []
    real = evict.StageState

    def counting(dag_, budget_, S, *, evaluate: bool = True):
        if evaluate:
            built.append(1)
        return real(dag_, budget_, S, evaluate=evaluate)
    monkeypatch.setattr(evict, "StageState", counting)
    assert evict.evict_search(dag, budget, deadline=-math.inf) is None
    assert built == []
    fits = checkpoint_all(dag)
    out = evict.evict_search(dag, int(fits.peak(dag)), deadline=-math.inf, start=fits.S)
    assert out is not None and np.array_equal(out[1], fits.S)
    assert built == [1]  # (the given schedule's own evaluation only)


def test_cpsat_that_cannot_build_its_model_in_the_limit_searches_from_the_first_fitting_baseline(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Where the cpsat strategy's model cannot be built within its whole limit at this load, it takes the first
    baseline that fits and runs the stage search from it with all the time (NO_MODEL_STAGE_SEARCH). Before, all
    eight baselines ran and a fitting one was returned as it was, or, where none fitted, the stage search had what
    was left of a quarter of the limit (Moccasin's n = 1000 at 0.8 with 10 s under load: no schedule)."""
    pytest.importorskip("ortools")
    import remc.backends.cpsat as cpsat
    import remc.passes.strategies as pstrat
    from remc.backends.strategies import make_options, solve
    from remc.passes import evict

    dag = training_graph(12, np.random.default_rng(12), skips=((1, 9), (2, 7)))
    budget = int(0.9 * checkpoint_all(dag).peak(dag))
    firsts: list = []
    real_bb = pstrat.best_baseline
    monkeypatch.setattr(pstrat, "best_baseline", lambda *a, **k: firsts.append(k.get("first")) or real_bb(*a, **k))
    starts: list = []
    real_es = evict.evict_search
    monkeypatch.setattr(evict, "evict_search", lambda *a, **k: starts.append(k.get("start")) or real_es(*a, **k))
    monkeypatch.setattr(cpsat, "BUILD_SECONDS_PER_UNIT", 1e9)  # no time to build the model within the limit
    base = real_bb(dag, budget, first=True)
    assert base is not None
    sched = solve("cpsat", dag, budget, make_options("cpsat", time_limit=1e9, threads=1))
    assert firsts == [True] and len(starts) == 1 and np.array_equal(starts[0], base.S)
    assert sched.peak(dag) <= budget and sched.cost(dag) <= base.cost(dag)
    assert sched.report.extras["cp_sat"].startswith("not built")


def test_the_first_fitting_baseline_past_an_expired_limit_rather_than_none() -> None:
    """``_incumbent(first=True)`` (approx where no LP is built) whose limit passed before any baseline ran (a compile
    that reached its solve with no time left: GPT-2 b8 fine at 30 s, load 26) returns the first baseline that fits,
    past the limit (LATE_FIRST_FIT), not None (then approx raised "no schedule" and the compile ended in an error).
    Above LARGE_GRAPH units (111 here), where best_baseline stops at the caller's limit; the clock started at -inf."""
    from remc.backends.strategies import _incumbent
    from remc.passes.solver_api import Clock
    from remc.passes.strategies import LARGE_GRAPH, best_baseline

    dag = training_graph(55, np.random.default_rng(1))
    budget = int(0.8 * checkpoint_all(dag).peak(dag))
    assert dag.n > LARGE_GRAPH and checkpoint_all(dag).peak(dag) > budget
    clock = Clock(1.0)
    clock.start = -math.inf  # (expired: no wall clock read against a deadline)
    assert clock.expired() and best_baseline(dag, budget, deadline=-math.inf, hard=clock.deadline, first=True) is None
    got = _incumbent(dag, budget, clock, None, first=True)
    assert got is not None and got.peak(dag) <= budget
    assert got.cost(dag) == best_baseline(dag, budget, first=True).cost(dag)  # (chen-sqrtn, the first that fits)


@pytest.mark.parametrize("strategy", ["checkmate", "approx"])
def test_a_solve_with_no_time_left_returns_the_first_fitting_baseline_and_says_so(
        strategy: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """checkmate and approx (with its LP) whose limit has passed before anything ran (a compile that reached its solve
    with no time left) return the first baseline that fits, past the limit (LATE_ANY), and the report names it
    (``late_baseline``), where checkpoint-all does not fit: a torchvision Swin-T compiled with checkmate at 0.9x, 60 s,
    at a load of 14-17 ended in "checkmate found no schedule ... in 0.5 s (time limit 0.05 s)". The strategies' clocks
    start 1e6 s early (expired)."""
    import remc.backends.strategies as bs
    from remc.backends.strategies import make_options, solve
    from remc.passes.solver_api import Clock
    from remc.passes.strategies import LARGE_GRAPH

    class Expired(Clock):
        def __init__(self, time_limit: float | None) -> None:
            super().__init__(time_limit)
            self.start -= 1e6  # (its limit passed long ago)

    monkeypatch.setattr(bs, "Clock", Expired)
    dag = training_graph(55, np.random.default_rng(3))
    budget = int(0.8 * checkpoint_all(dag).peak(dag))
    assert dag.n > LARGE_GRAPH and checkpoint_all(dag).peak(dag) > budget  # (best_baseline stops at the limit there)
    sched = solve(strategy, dag, budget, make_options(strategy, time_limit=1.0, threads=1))
    assert sched.peak(dag) <= budget and sched.report.extras["late_baseline"], sched.report.extras


def test_approx_starts_no_stage_search_with_less_time_left_than_one_build(monkeypatch: pytest.MonkeyPatch) -> None:
    """approx with a schedule in hand does not start its stage search (nor the window search) where the time left is
    less than one build of the search's rows (``stage_build_seconds``, patched here: no clock read): the search would
    only return that schedule, past the limit (GPT-2 fine, 5 s limit, load 26: ended at 11.5 s). The schedule in hand
    comes back, "time_limit", and the report says why."""
    import remc.passes.approx as pa
    from remc.backends.strategies import make_options, solve

    dag = training_graph(65, np.random.default_rng(1))
    budget = int(0.8 * checkpoint_all(dag).peak(dag))
    assert dag.n > pa.STAGE_SEARCH_UNITS
    monkeypatch.setattr(pa, "MAX_LP_COLUMNS", 0)
    monkeypatch.setattr(pa, "MAX_FEASIBLE_COLUMNS", 0)
    monkeypatch.setattr(pa, "gap_bound", lambda *a, **k: types.SimpleNamespace(bound=-math.inf))  # (its 2000 steps)
    real, calls = pa.evict_search, []
    monkeypatch.setattr(pa, "evict_search", lambda *a, **k: calls.append(1) or real(*a, **k))
    opts = make_options("approx", time_limit=1000.0, threads=1, window=False)
    monkeypatch.setattr(pa, "stage_build_seconds", lambda n, clock=None, builds=1: math.inf)
    s = solve("approx", dag, budget, opts)
    assert not calls and s.report.status == "time_limit" and s.peak(dag) <= budget
    assert "not started" in s.report.extras["stage_search_skipped"]


def test_approx_without_an_lp_runs_its_stage_search_from_a_start_before_the_bound(monkeypatch: pytest.MonkeyPatch) -> None:
    """Where no LP is built and a start fits (a baseline), approx's stage search runs before the retention-gap bound
    (SEARCH_BEFORE_BOUND_NO_LP): the search's schedule is the result, the bound only its gap (ResNet50 fine, a 30 s
    compile's 7.9 s solve at a load of 5: the bound took 1.2 s first and the baseline came back, +30.5%)."""
    import remc.passes.approx as pa
    from remc.backends.strategies import make_options, solve

    dag = training_graph(65, np.random.default_rng(1))
    budget = int(0.8 * checkpoint_all(dag).peak(dag))
    assert dag.n > pa.STAGE_SEARCH_UNITS
    monkeypatch.setattr(pa, "MAX_LP_COLUMNS", 0)
    monkeypatch.setattr(pa, "MAX_FEASIBLE_COLUMNS", 0)
    order: list[str] = []
    monkeypatch.setattr(pa, "gap_bound", lambda *a, **k: order.append("bound") or types.SimpleNamespace(bound=-math.inf))
    real = pa.evict_search
    monkeypatch.setattr(pa, "evict_search", lambda *a, **k: order.append("search") or real(*a, **k))
    monkeypatch.setattr(pa, "stage_build_seconds", lambda n, clock=None, builds=1: 0.0)  # (no load read)
    s = solve("approx", dag, budget, make_options("approx", time_limit=1000.0, threads=1, window=False))
    assert order[:2] == ["search", "bound"] and s.peak(dag) <= budget


def test_a_clocks_slowdown_is_its_wall_per_cpu_second_and_scales_the_stage_build_estimate() -> None:
    """``Clock.slowdown``: wall seconds per CPU second since the clock started (fake readings here), at least 1; the
    stage search's estimate (``stage_build_seconds``) takes it over the load average once the clock has run, and
    counts STAGE_SEARCH_BUILDS builds where asked (approx's gate before a search from a schedule in hand)."""
    import sys

    import remc.passes.approx as pa
    from remc.passes.solver_api import Clock, slowdown

    wall, cpu = [0.0], [0.0]
    clock = Clock(30.0)
    clock._now, clock._cpu, clock.start, clock.cpu_start = (lambda: wall[0]), (lambda: cpu[0]), 0.0, 0.0
    wall[0], cpu[0] = 10.0, 2.0
    assert clock.slowdown() == 5.0 and slowdown(clock) == 5.0
    cpu[0] = 20.0  # (threads: more CPU than wall)
    assert clock.slowdown() == 1.0
    cpu[0] = 2.0
    import scipy.sparse.linalg  # noqa: F401  (imported: its first import is not in the estimate)
    assert "scipy.sparse.linalg" in sys.modules
    one = pa.stage_build_seconds(1000, clock)
    assert one == pytest.approx(pa.STAGE_BUILD_SECONDS_PER_UNIT * 1000 * 5.0)
    assert pa.stage_build_seconds(1000, clock, pa.STAGE_SEARCH_BUILDS) == pytest.approx(pa.STAGE_SEARCH_BUILDS * one)
