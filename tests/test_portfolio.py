"""checkmate's portfolio is never worse than approx alone (issue #12 item 3), on a fixed set of small graphs at
generous limits (no wall-clock assertion: speed is measured by tools/bench_portfolio.py)."""
from __future__ import annotations

import numpy as np
import pytest
from _milp_dags import random_dag, training_graph

from remc.backends.strategies import make_options, solve
from remc.ir.errors import InfeasibleError, SolverError
from remc.ir.schedule import check, checkpoint_all
from remc.passes.milp_model import simple_lower_bound


def cases():
    rng = np.random.default_rng(12)
    dags = [random_dag(int(rng.integers(8, 14)), rng, p=0.25, workspace=k % 2 == 0) for k in range(4)]
    dags += [training_graph(5, rng, skips=((0, 3),)), training_graph(6, rng, skips=((1, 4), (0, 5)), workspace=True)]
    return dags


@pytest.mark.parametrize("k", range(6))
def test_checkmate_is_never_worse_than_approx_alone(k: int) -> None:
    dag = cases()[k]
    top, least = checkpoint_all(dag).peak(dag), simple_lower_bound(dag)
    compared = 0
    for frac in (0.8, 0.5, 0.2):  # between the least any schedule needs and checkpoint-all's peak
        budget = least + int(frac * (top - least))
        try:
            a = solve("approx", dag, budget, make_options("approx", time_limit=120, threads=1))
        except (InfeasibleError, SolverError):
            continue
        c = solve("checkmate", dag, budget, make_options("checkmate", time_limit=120, threads=1))
        assert not check(dag, c.R, c.S) and c.peak(dag) <= budget
        assert c.cost(dag) <= a.cost(dag) * (1 + 1e-9)
        assert c.report.seconds <= 120 + 5  # the report counts every phase, within the limit (and slack)
        compared += 1
    assert compared > 0


def test_checkmate_reports_every_phase_with_the_overhead_gap(monkeypatch) -> None:
    """The live display hears from each portfolio phase, not only the MILP at the end (a 600 s compile showed
    "measuring kernel memory" while the baselines, approx, CP-SAT and the local search ran), and each report's
    gap is on the overhead, as the final report's."""
    import remc.backends.strategies as strategies
    from remc.ir.report import gap_of
    from remc.passes.solver_api import ProgressEvent

    # (else the covering MILP's decoded schedule proves itself first here and no other phase runs: COVER_BEFORE_STAGE)
    monkeypatch.setattr(strategies, "COVER_BEFORE_STAGE", False)
    dag = cases()[4]
    top, least = checkpoint_all(dag).peak(dag), simple_lower_bound(dag)
    seen: list[ProgressEvent] = []
    solve("checkmate", dag, least + (top - least) // 2, make_options("checkmate", time_limit=60, threads=1),
          progress=seen.append)
    phases = [e.phase for e in seen]
    # (where CP-SAT runs, the stage search from nothing comes first: backends/strategies.py STAGE_FIRST)
    assert phases[0] in ("baselines", "stage search") and "milp" in phases and len(set(phases)) >= 3, phases
    base = float(dag.total_cost)
    shown = [e for e in seen if e.incumbent is not None and e.bound is not None]
    assert shown
    for e in shown:
        assert e.gap == pytest.approx(gap_of(e.incumbent, e.bound, base))

def test_checkmate_below_the_simple_bound_is_infeasible_at_once() -> None:
    """A budget below the simple bound (each unit once with its inputs resident) is refused before any search,
    with that bound as the least feasible budget."""
    dag = cases()[0]
    least = simple_lower_bound(dag)
    with pytest.raises(InfeasibleError) as e:
        solve("checkmate", dag, least - 1, make_options("checkmate", time_limit=60, threads=1))
    assert e.value.least_feasible == least
    assert "no schedule of this graph can need less than" in str(e.value)


@pytest.mark.parametrize("k", [0, 4])
def test_checkmate_is_approx_alone_where_no_exact_phase_is_built(k: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """Above CP-SAT's unit limit and the MILP's column limit (here lowered to this small graph) checkmate is
    approx alone on its whole clock, labelled checkmate with a note: the same schedule as approx's (before, the
    portfolio spent its bound and baselines first and returned a costlier schedule on a 2503-unit ShuffleNetV2)."""
    from remc.backends import strategies
    from remc.passes import milp
    dag = cases()[k]
    top, least = checkpoint_all(dag).peak(dag), simple_lower_bound(dag)
    budget = least + (top - least) // 2
    monkeypatch.setattr(strategies, "CP_UNITS", dag.n - 1)
    monkeypatch.setattr(milp, "MAX_MILP_COLUMNS", 1)
    a = solve("approx", dag, budget, make_options("approx", threads=1))
    c = solve("checkmate", dag, budget, make_options("checkmate", threads=1))
    assert c.strategy == "checkmate" and "approx alone" in c.report.extras["portfolio"]
    # (_deep_improve, without a limit, unless approx's schedule is proven within the gap already: STOP_AT_GAP)
    assert "improve with whole repairs" in c.report.extras["portfolio"] \
        or "no more: the schedule is within the gap" in c.report.extras.get("cover_bound", "")
    assert not check(dag, c.R, c.S) and c.peak(dag) <= budget
    assert c.cost(dag) <= a.cost(dag)  # approx's schedule, or its local search's from it where time is left
    monkeypatch.undo()  # with the limits as they are, the portfolio runs its phases
    full = solve("checkmate", dag, budget, make_options("checkmate", threads=1))
    assert "portfolio" not in full.report.extras


def test_checkmate_where_approx_runs_alone_goes_on_with_the_bounds_ascent(monkeypatch: pytest.MonkeyPatch) -> None:
    """Where checkmate is approx alone (no exact phase built), the time approx leaves goes to the retention-gap
    bound's ascent from approx's multipliers with the schedule's cost as its target (``_last_bound``): the report
    says so, and its bound is at least approx's (184.5, the nested relaxation's) and at most the optimum (the
    attention chain at 22 bytes: 210, the MILP's optimum in tests/test_bounds.py)."""
    from test_bounds import _attention_chain

    from remc.backends import strategies
    from remc.passes import bounds, milp
    dag = _attention_chain()
    # without the chain charge (passes/bounds.py ``_chains``), which proves the optimum (210) at once on this graph,
    # leaving the last phase nothing to do
    monkeypatch.setattr(bounds, "_chains", lambda dag, *a, **k: (np.zeros(dag.n), {}))
    monkeypatch.setattr(strategies, "CP_UNITS", dag.n - 1)
    monkeypatch.setattr(milp, "MAX_MILP_COLUMNS", 1)
    c = solve("checkmate", dag, 22, make_options("checkmate", threads=1)).report
    assert c.extras["last_bound"].startswith("nested relaxation, ") and "more iterations" in c.extras["last_bound"]
    assert 184.5 - 1e-6 <= c.bound <= 210.0 + 1e-9


def test_checkmates_last_bound_phase_needs_a_relaxation_to_resume() -> None:
    """``_last_bound`` runs nothing where approx's bound has no relaxation to go on with (no stage over budget: no
    kind, no multipliers); else ``gap_bound`` would start cold and run its loose ascent to the limit."""
    from remc.backends.strategies import _last_bound
    from remc.passes.bounds import GapBound
    from remc.passes.solver_api import Clock
    dag = cases()[0]
    budget = simple_lower_bound(dag) + (checkpoint_all(dag).peak(dag) - simple_lower_bound(dag)) // 2
    sched = checkpoint_all(dag)
    sched.report.cost, sched.report.gap = sched.cost(dag), 1.0  # (as if far from proven)
    _last_bound(dag, budget, sched, GapBound(float(dag.cost.sum()), 0, 0, 0), Clock(None), 1e-4)
    assert "last_bound" not in sched.report.extras


def test_checkmates_own_approx_with_no_time_left_is_not_started() -> None:
    """checkmate's approx-alone phase reached with the clock at 0 s left is a note, not "the time limit must be a
    finite number of seconds > 0, got 0.0" (ShuffleNetV2 from torchvision at 0.97x, 60 s, under load)."""
    from remc.backends import strategies
    from remc.passes.options import CheckmateOptions

    class Spent:
        def left(self) -> float:
            return 0.0

    rng = np.random.default_rng(3)
    dag = training_graph(6, rng)
    notes: dict[str, str] = {}
    got = strategies._approx_own(dag, int(checkpoint_all(dag).peak(dag)), CheckmateOptions(time_limit=10.0), Spent(),
                                 None, None, {}, notes)
    assert got is None and "not started" in notes["approx"]


def test_checkmates_deep_improve_takes_the_best_of_all_repairs(monkeypatch: pytest.MonkeyPatch) -> None:
    """``_deep_improve`` (checkmate where approx runs alone, after approx's local search) runs the stage search's
    ``improve`` with whole repairs (``exhaustive``: the best of all moves, not the quick repairs' capped, chunked and
    free-keep-first choices) and cleans: from the quick repairs' local optimum it finds a cheaper schedule. The quick
    repairs are narrowed here (no candidates past TOP_K, chunks of one, no swaps) so that they differ on 16 units;
    on ResNet50 fine at 0.8 they differ as they are (results/bound18)."""
    from remc.backends import strategies
    from remc.ir.schedule import Schedule
    from remc.passes import stagesearch as ss
    from remc.passes.solver_api import Clock
    monkeypatch.setattr(ss, "IMPROVE_CANDIDATES", 0)
    monkeypatch.setattr(ss, "REPAIR_CHUNK", 1)
    monkeypatch.setattr(ss, "SWAP_CANDIDATES", 0)
    dag, budget = random_dag(16, np.random.default_rng(22), p=0.2), 31
    st = ss.StageState(dag, budget, checkpoint_all(dag).S)
    assert ss.repair(st, None, exhaustive=True)
    quick = ss.StageState(dag, budget, st.S.copy())
    ss.improve(quick, None)
    start = Schedule(quick.R.copy(), quick.S.copy(), strategy="quick")
    assert start.cost(dag) == pytest.approx(66.0)
    deep, note = strategies._deep_improve(dag, budget, start, Clock(None))
    assert not check(dag, deep.R, deep.S) and deep.peak(dag) <= budget
    assert deep.cost(dag) == pytest.approx(63.0) and "round" in note
    assert strategies._deep_improve(dag, budget, deep, Clock(None))[0].cost(dag) == pytest.approx(63.0)
    # from a given start (approx's stage search's schedule before its own improve) rather than the schedule
    from_start, note = strategies._deep_improve(dag, budget, start, Clock(None), start=st.S)
    assert from_start.cost(dag) == pytest.approx(63.0) and "start" in note


def test_checkmates_last_improve_lowers_the_best_schedule_with_the_time_left() -> None:
    """``_last_improve`` (checkmate where approx runs alone, with the time the other phases left) goes on with the
    stage search's improve from the best schedule: a schedule with a needless recomputation (a unit computed again
    while it is resident anyway) comes back without it, checked and within the budget, its report's cost lowered by
    that unit's cost and its bound kept."""
    from remc.backends.strategies import _last_improve
    from remc.ir.schedule import Schedule

    class Ample:  # (a clock with time to spare, and none of the wall clock's)
        def left(self) -> float:
            return 1e9

        def elapsed(self) -> float:
            return 0.0

    dag = cases()[4]
    base = checkpoint_all(dag)
    budget = int(base.peak(dag))
    R, S = base.R.copy(), base.S.copy()
    t, i = next((t, i) for t in range(1, dag.n) for i in range(t) if S[t, i] and not len(dag.preds[i]))
    R[t, i] = True  # (i has no parents: its recomputation needs nothing resident)
    assert not check(dag, R, S)
    sched = Schedule(R, S)
    sched.report.cost, sched.report.bound = sched.cost(dag), float(dag.cost.sum())
    sched.report.gap = 1.0
    out, how = _last_improve(dag, budget, sched, Ample(), 1e-4)  # type: ignore[arg-type]
    assert not check(dag, out.R, out.S) and out.peak(dag) <= budget
    assert out.cost(dag) == pytest.approx(sched.cost(dag) - dag.cost[i]) and out.report.cost == out.cost(dag)
    assert out.report.bound == float(dag.cost.sum()) and how.startswith("cost ")


def test_checkmate_where_approx_runs_alone_keeps_a_share_for_the_last_improve(monkeypatch: pytest.MonkeyPatch) -> None:
    """Up to LAST_IMPROVE_UNITS units, checkmate's approx-alone phase gives approx its time left less
    LAST_IMPROVE_SHARE (kept for ``_last_improve``); above it, all of it."""
    from remc.backends import strategies
    from remc.passes import milp
    dag = cases()[4]
    seen: list[float] = []

    def fake_approx(dag, budget, o, progress, start=None, state=None, enough=-np.inf, search=None):  # noqa: ANN001
        seen.append(o.time_limit)
        return checkpoint_all(dag)

    monkeypatch.setattr(strategies, "CP_UNITS", dag.n - 1)
    monkeypatch.setattr(milp, "MAX_MILP_COLUMNS", 1)
    monkeypatch.setattr(strategies, "_approx_fn", fake_approx)
    monkeypatch.setattr(strategies, "_gap_cover_first", lambda dag, budget, o, clock, start: (None, start, ""))
    monkeypatch.setattr(strategies, "_within", lambda dag, sched, gap: True)  # (nothing after approx)
    budget = int(checkpoint_all(dag).peak(dag))
    limit = 1e6  # (seconds: the shares below do not depend on how long the set-up took)
    solve("checkmate", dag, budget, make_options("checkmate", threads=1, time_limit=limit))
    monkeypatch.setattr(strategies, "LAST_IMPROVE_UNITS", dag.n - 1)
    solve("checkmate", dag, budget, make_options("checkmate", threads=1, time_limit=limit))
    share = 1.0 - strategies.LAST_IMPROVE_SHARE
    assert 0.99 * share * limit <= seen[0] <= share * limit and 0.99 * limit <= seen[1] <= limit


def test_checkmate_where_approx_finds_nothing_in_its_share_gets_the_kept_share_too(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Where approx ends its share (LAST_IMPROVE_SHARE kept from it) with no schedule, checkmate's approx-alone phase
    runs it again with the time left, its stage search resumed (the same EvictSearch), rather than failing with
    that share unused."""
    from remc.backends import strategies
    from remc.ir.errors import NoScheduleInTime
    from remc.passes import milp
    dag = cases()[4]
    seen: list[tuple[float, object]] = []

    def fake_approx(dag, budget, o, progress, start=None, state=None, enough=-np.inf, search=None):  # noqa: ANN001
        seen.append((o.time_limit, search))
        if len(seen) == 1:
            raise NoScheduleInTime("nothing within the budget yet")
        return checkpoint_all(dag)

    monkeypatch.setattr(strategies, "CP_UNITS", dag.n - 1)
    monkeypatch.setattr(milp, "MAX_MILP_COLUMNS", 1)
    monkeypatch.setattr(strategies, "_approx_fn", fake_approx)
    monkeypatch.setattr(strategies, "_gap_cover_first", lambda dag, budget, o, clock, start: (None, start, ""))
    monkeypatch.setattr(strategies, "_within", lambda dag, sched, gap: True)  # (nothing after approx)
    budget = int(checkpoint_all(dag).peak(dag))
    s = solve("checkmate", dag, budget, make_options("checkmate", threads=1, time_limit=1e6))
    assert not check(dag, s.R, s.S) and len(seen) == 2
    assert seen[1][0] > seen[0][0] and seen[1][1] is seen[0][1] is not None
