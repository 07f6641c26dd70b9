"""`remc compile --time-limit` covers the whole compile (remc/timebudget.py): every phase gets its deadline
from one clock, the solves share what is left, profiling and kernel-memory measurement keep to their share
(the rest priced by FLOPs / left unmeasured, and said), a later fit round starts warm. No wall-clock
assertions: a fake clock or the report's own accounting."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import onnx.parser
import pytest

from remc.timebudget import (
    FIRST_ROUND_SHARE,
    KERNEL_FIRST_LEAST,
    KERNEL_FIRST_SHARE,
    KERNEL_SHARE,
    LATER_ROUND_SHARE,
    PROFILE_SHARE,
    CompileClock,
)

GRAPHS = Path(__file__).parent / "graphs"


class FakeTime:
    """A clock that moves one second per reading: deterministic accounting."""

    def __init__(self) -> None:
        self.t = 100.0

    def __call__(self) -> float:
        self.t += 1.0
        return self.t


def test_every_deadline_comes_from_one_clock() -> None:
    c = CompileClock(100.0, now=FakeTime())
    assert c.until(PROFILE_SHARE) == PROFILE_SHARE * 100 and c.until(KERNEL_SHARE) == KERNEL_SHARE * 100
    secs, at = c.solve_limit(FIRST_ROUND_SHARE)  # the clock reads 1 s elapsed
    assert secs == pytest.approx(FIRST_ROUND_SHARE * 99) and at == pytest.approx(1 + secs)
    secs2, at2 = c.solve_limit(LATER_ROUND_SHARE)
    assert secs2 == pytest.approx(LATER_ROUND_SHARE * (100 - 2)) and at2 <= 100
    p = c.record("schedule", 1.0, at)
    assert p.seconds == p.end - 1.0 and c.summary()["phases"][0]["deadline"] == at
    assert "of the 100 s limit" in c.text() and "schedule" in c.text()
    assert CompileClock(None).solve_limit(0.5) == (None, None) and CompileClock(None).until(0.3) is None


def test_the_clock_counts_the_process_start_up() -> None:
    """Python's start and the imports before the compile (``process_age``) are inside the limit."""
    from remc.timebudget import process_age
    c = CompileClock(30.0, now=FakeTime(), started_ago=4.0)
    assert c.phases[0].name == "start-up" and c.phases[0].start == 0.0 and c.phases[0].seconds >= 4.0
    assert c.elapsed() >= 4.0 and c.left() <= 26.0 and c.summary()["phases"][0]["phase"] == "start-up"
    assert process_age() >= 0.0


def _chain(tmp_path: Path) -> Path:
    src = tmp_path / "chain.onnx"
    onnx.save(onnx.parser.parse_model((GRAPHS / "chain_train.onnxtxt").read_text()), src)
    return src


def test_compile_report_accounts_for_every_phase_within_the_limit(tmp_path: Path) -> None:
    """The report's seconds are the whole compile's; the phases (start-up, import ... write) are in order on one clock,
    none starts before the previous ended, their seconds add up to at most the total, and every deadline
    (profile share, kernel share, each solve's) lies within the limit."""
    res = subprocess.run([sys.executable, "-m", "remc.cli", "compile", str(_chain(tmp_path)), "--budget", "1900",
                          "-o", str(tmp_path / "o.onnx"), "--strategy", "approx", "--granularity", "fine",
                          "--time-limit", "40", "--json", "--placement", "arena"], capture_output=True, text=True,
                         timeout=300)
    assert res.returncode == 0, res.stderr
    rep = json.loads(res.stdout)
    t = rep["time"]
    names = [p["phase"] for p in t["phases"]]
    assert names[:5] == ["start-up", "import", "kernel memory", "costs", "units"] and names[-1] == "write"
    assert {"kernel memory", "schedule", "plan", "lower", "arena check"} <= set(names)
    assert t["time_limit"] == 40.0 and rep["seconds"] == t["seconds"]
    ends = [p["start"] + p["seconds"] for p in t["phases"]]
    assert all(b["start"] >= e - 1e-9 for b, e in zip(t["phases"][1:], ends))
    assert sum(p["seconds"] for p in t["phases"]) <= rep["seconds"] + 1e-9
    deadlines = {p["phase"]: p["deadline"] for p in t["phases"] if p["deadline"] is not None}
    assert deadlines["costs"] == PROFILE_SHARE * 40 and deadlines["kernel memory"] == KERNEL_SHARE * 40
    # kernel memory first, before the costs: an unmeasured kernel makes a plan need more than predicted
    # (its share of the limit, or KERNEL_FIRST_LEAST of it from its own start where start-up and import took
    # longer: 6.9 s under load)
    first_kernels = next(p for p in t["phases"] if p["phase"] == "kernel memory")
    assert first_kernels["deadline"] == pytest.approx(max(KERNEL_FIRST_SHARE * 40,
                                                          first_kernels["start"] + KERNEL_FIRST_LEAST * 40), abs=0.05)
    solves = [p for p in t["phases"] if p["phase"] == "schedule"]
    assert solves and all(p["start"] < p["deadline"] <= 40 for p in solves)
    assert rep["solve_seconds"] == pytest.approx(sum(p["seconds"] for p in solves))
    assert rep["time_text"].startswith("time: ")


def test_fit_rounds_share_the_time_left_and_start_warm(monkeypatch) -> None:
    """On a fake clock, compile_fit gives the first solve FIRST_ROUND_SHARE of the time left and each re-solve
    LATER_ROUND_SHARE of what is left then, warm from the previous schedule; every solve's limit ends by
    the compile's limit."""
    from remc import fit as fit_mod
    from remc.backends.strategies import make_options
    from remc.fit import ArenaPrediction, compile_fit
    from remc.pipeline import SchedulePass, State, compile_pipeline, run, stages

    model = onnx.parser.parse_model((GRAPHS / "chain_train.onnxtxt").read_text())
    passes = compile_pipeline(cost="flops", granularity="fine", strategy="approx",
                              options=make_options("approx", time_limit=1000.0))
    clock = CompileClock(60.0, now=FakeTime())
    st = run(stages(passes, last="units"), State(model=model, budget=2000, clock=clock))
    # the input graph (an excess too big to anticipate: round 1 at the budget, with FIRST_ROUND_SHARE), too big,
    # then fits (within SLACK_MIN of the budget: no re-solve to use the slack)
    preds = iter([10**6, 2010, 1995])

    def fake_predict(lowered, device, **kw):
        return ArenaPrediction(next(preds), 0, 0)

    seen: list[SchedulePass] = []
    monkeypatch.setattr(fit_mod, "predict", fake_predict)
    report = compile_fit(stages(passes, first="schedule"), st, device="cuda:9",
                         on_pass=lambda p, s: seen.append(p) if isinstance(p, SchedulePass) else None)
    assert report.rounds == 2 and len(seen) == 2
    at = [k for k, p in enumerate(clock.phases) if p.name == "schedule"]
    for k, (sp, i) in enumerate(zip(seen, at)):
        ph = clock.phases[i]
        share = FIRST_ROUND_SHARE if k == 0 else LATER_ROUND_SHARE
        # a later round keeps back what plan, lower and the arena check took after the previous solve
        est = sum(p.seconds for p in clock.phases if p.name == "arena estimate")
        reserve = 2 * est + fit_mod._plan_lower_estimate(st, clock) if k == 0 else \
            sum(p.seconds for p in clock.phases[at[k - 1] + 1:i])
        reserve += sum(p.seconds for p in clock.phases if p.name == "import")  # the output's write (as the import)
        left = 60.0 - (ph.deadline - sp.options.time_limit)  # the time left when the limit was set
        assert sp.options.time_limit == pytest.approx(share * (left - reserve))
        assert ph.deadline <= 60.0 and ph.start < ph.deadline
        assert (sp.start is None) == (k == 0)  # later rounds start from the previous round's schedule


def test_no_fit_round_starts_without_time_for_the_steps_after_it(monkeypatch) -> None:
    """On a fake clock, a plan that never fits: compile_fit stops starting rounds once the time left is less than
    what the steps after a solve took, says so, and ends by the limit (ShuffleNetV2 b4 at 6 MiB, 30 s, ended at
    38 s: each round's plan, lower and arena check ran past it)."""
    from remc import fit as fit_mod
    from remc.backends.strategies import make_options
    from remc.fit import ArenaPrediction, compile_fit
    from remc.ir.errors import PlanError
    from remc.pipeline import State, compile_pipeline, run, stages

    model = onnx.parser.parse_model((GRAPHS / "chain_train.onnxtxt").read_text())
    passes = compile_pipeline(cost="flops", granularity="fine", strategy="approx",
                              options=make_options("approx", time_limit=1000.0))
    clock = CompileClock(23.0, now=FakeTime())  # (the first round ends at about 19 s: 4 s to go, 4 s after a solve)
    st = run(stages(passes, last="units"), State(model=model, budget=2000, clock=clock))
    monkeypatch.setattr(fit_mod, "predict", lambda lowered, device, **kw: ArenaPrediction(10**6, 0, 0))
    with pytest.raises(PlanError, match="the time limit left no time for another") as err:
        compile_fit(stages(passes, first="schedule"), st, device="cuda:9", max_rounds=50)
    rounds = err.value.fit_report.rounds  # type: ignore[attr-defined]
    assert 1 <= rounds < 50
    assert clock.phases[-1].end <= 23.0


def test_profile_deadline_prices_the_rest_by_flops_and_says_so(tmp_path: Path) -> None:
    from remc.backends.profile import ProfileCosts, _estimate
    from remc.backends.runtime import import_model
    from remc.passes.costs import flop_costs
    from remc.pipeline import shaped_model

    model = shaped_model(import_model(_chain(tmp_path)))
    none = ProfileCosts("cpu", cache_dir=tmp_path / "c0", deadline=0.0)  # past: nothing is timed
    costs = none.apply(model)
    assert none.summary.timed == 0 and none.summary.estimated == none.summary.signatures > 0
    assert costs == flop_costs(model) and "priced by FLOPs" in none.summary.note()
    full = ProfileCosts("cpu", cache_dir=tmp_path / "c1", repeats=1, time_cap=0.01)
    full.apply(model)
    assert full.summary.estimated == 0 and full.summary.note() == ""
    fl = flop_costs(model)
    names = list(fl)
    measured = {n: 2e-9 * fl[n] for n in names[: len(names) // 2]}
    est = _estimate(model, fl, measured, set(names[len(names) // 2:]))
    assert all(est[n] == pytest.approx(max(2e-9 * fl[n], 1e-9)) for n in est)  # seconds per FLOP carried over


def test_kernel_memory_deadline_leaves_signatures_unmeasured(tmp_path: Path) -> None:
    from remc.backends.runtime import import_model
    from remc.backends.scratch import KernelMemory, unmeasured_kernels
    from remc.pipeline import shaped_model

    model = shaped_model(import_model(_chain(tmp_path)))
    km, left, total = unmeasured_kernels(model, "cpu", cache_dir=tmp_path, deadline=0.0)
    assert left == total > 0 and all(v == KernelMemory() for v in km.values())
    _, left2, total2 = unmeasured_kernels(model, "cpu", cache_dir=tmp_path)
    assert left2 == 0 and total2 == total


def test_warm_start_repairs_a_schedule_over_the_budget() -> None:
    from _milp_dags import training_graph

    from remc.backends.strategies import make_options, solve
    from remc.ir.schedule import check, checkpoint_all, stage_peaks
    from remc.passes.stagesearch import repair_start

    dag = training_graph(12, np.random.default_rng(3))
    full = checkpoint_all(dag)
    budget = int(0.8 * full.peak(dag))
    warm = repair_start(dag, budget, full.S)
    assert warm is not None and not check(dag, warm.R, warm.S) and stage_peaks(dag, warm.R, warm.S).max() <= budget
    s = solve("approx", dag, budget, make_options("approx", time_limit=30.0), start=full)
    assert not check(dag, s.R, s.S) and s.peak(dag) <= budget
    assert np.isfinite(s.cost(dag))


def test_first_round_solves_at_the_budget_less_the_input_graphs_arena_excess(monkeypatch) -> None:
    """A time-limited compile solves its first round at the budget less what the arena needs beyond the live
    bytes on the input graph, so that one round usually fits; the report keeps the user's budget."""
    from remc import fit as fit_mod
    from remc.backends.strategies import make_options
    from remc.fit import ArenaPrediction, compile_fit
    from remc.ir.schedule import checkpoint_all
    from remc.pipeline import State, compile_pipeline, run, stages

    model = onnx.parser.parse_model((GRAPHS / "chain_train.onnxtxt").read_text())
    passes = compile_pipeline(cost="flops", granularity="fine", strategy="approx",
                              options=make_options("approx", time_limit=1000.0))
    st = run(stages(passes, last="units"), State(model=model, budget=2000, clock=CompileClock(60.0, now=FakeTime())))
    live = int(checkpoint_all(st.dag).peak(st.dag))
    preds = iter([live + 40, 1990])  # the plan fits within SLACK_MIN of the budget: no re-solve above it
    monkeypatch.setattr(fit_mod, "predict", lambda lowered, device, **kw: ArenaPrediction(next(preds), 0, 0))
    report = compile_fit(stages(passes, first="schedule"), st, device="cuda:9")
    assert report.history[0] == {"round": 0, "input_graph_excess": 40, "solver_budget": 1960}
    assert report.rounds == 1 and report.solver_budget == 1960 and st.plan.budget == 2000



def test_solves_above_an_infeasible_budget_share_the_time_left(monkeypatch) -> None:
    """When the first solve finds the budget infeasible in remc's live-bytes model, ``_solve_raising`` solves
    above it (RAISE_ATTEMPTS times at most), each attempt with LATER_ROUND_SHARE of what is left on the
    compile's clock then, and none once the clock has run out: the first error stands. (Before, every attempt
    reused the first solve's limit, and a 60 s compile ran 200 s.)"""
    from remc import fit as fit_mod
    from remc.backends.strategies import make_options
    from remc.fit import FitReport, _solve_raising, timed_passes
    from remc.ir.errors import InfeasibleError
    from remc.pipeline import SchedulePass, State, compile_pipeline, run, stages

    model = onnx.parser.parse_model((GRAPHS / "chain_train.onnxtxt").read_text())
    passes = compile_pipeline(cost="flops", granularity="fine", strategy="approx",
                              options=make_options("approx", time_limit=1000.0))
    fake = FakeTime()
    clock = CompileClock(60.0, now=fake)
    st = run(stages(passes, last="units"), State(model=model, budget=2000, clock=clock))
    limits: list[float] = []
    starts: list[float] = []

    def infeasible(ps, state, on_pass=None):
        sp = next(p for p in ps if isinstance(p, SchedulePass))
        limits.append(sp.options.time_limit)
        starts.append(clock.elapsed())
        fake.t += 25.0  # each solve takes 25 s of the clock
        raise InfeasibleError(f"no schedule at {state.budget}", None)

    monkeypatch.setattr(fit_mod, "run", infeasible)
    first = timed_passes(stages(passes, first="schedule"), st, clock, share=FIRST_ROUND_SHARE)
    with pytest.raises(InfeasibleError, match="no schedule at 2000"):
        _solve_raising(first, st, FitReport(2000, 2000, 1), None, None, clock)
    assert 2 <= len(limits) <= 1 + fit_mod.RAISE_ATTEMPTS and clock.left() == 0  # stopped by the clock
    for k in range(1, len(limits)):  # each attempt: half of what was left when it started (a tick or two)
        assert 0 < limits[k] <= LATER_ROUND_SHARE * (60.0 - starts[k] + 3)
    assert all(a > b for a, b in zip(limits, limits[1:]))


@pytest.mark.parametrize("second_need, kept", [(127, True), (200, False)])
def test_a_plan_that_leaves_slack_is_re_solved_above_it(monkeypatch, second_need: int, kept: bool) -> None:
    """When the fitting plan needs at least SLACK_MIN of the budget less on the device than the budget, the fit
    re-solves at its solver budget plus that slack, warm, and keeps the new plan only when it fits and costs
    less; otherwise the fitting plan (schedule, lowered graph, prediction) is restored. The chain at 128 bytes
    recomputes one node (cost 52); at 148 it computes each once (48)."""
    from remc import fit as fit_mod
    from remc.backends.strategies import make_options
    from remc.fit import ArenaPrediction, compile_fit
    from remc.pipeline import State, compile_pipeline, run, stages

    model = onnx.parser.parse_model((GRAPHS / "chain_train.onnxtxt").read_text())
    passes = compile_pipeline(cost="flops", granularity="fine", strategy="approx",
                              options=make_options("approx", time_limit=1000.0))
    clock = CompileClock(60.0, now=FakeTime())
    st = run(stages(passes, last="units"), State(model=model, budget=128, clock=clock))
    preds = iter([0, 108, second_need])  # the input graph, the plan at 128, the plan at 148

    def fake_predict(lowered, device, **kw):
        return ArenaPrediction(next(preds), 0, 0)

    monkeypatch.setattr(fit_mod, "predict", fake_predict)
    report = compile_fit(stages(passes, first="schedule"), st, device="cuda:9")
    slack = [h for h in report.history if h.get("slack")]
    assert len(slack) == 1 and slack[0]["solver_budget"] == 148
    assert report.prediction is not None and st.schedule is not None and st.dag is not None
    if kept:
        assert slack[0]["kept"] and report.prediction.total == 127 and report.solver_budget == 148
        assert st.schedule.cost(st.dag) == 48.0
    else:
        assert not slack[0]["kept"] and report.prediction.total == 108 and report.solver_budget == 128
        assert st.schedule.cost(st.dag) == 52.0
    assert st.budget == 128


def test_fit_never_solves_below_the_least_any_schedule_needs(monkeypatch) -> None:
    """When the plan's live peak is near the model's lower bound (``simple_lower_bound``) and the device needs
    more, the tightened solver budget stays at or above the bound (a solve below it is infeasible for every
    strategy: a round spent proving it) and the loop ends with a PlanError that names the bound."""
    from remc import fit as fit_mod
    from remc.backends.strategies import make_options
    from remc.fit import ArenaPrediction, compile_fit
    from remc.ir.errors import PlanError
    from remc.ir.schedule import checkpoint_all
    from remc.passes.milp_model import simple_lower_bound
    from remc.pipeline import State, compile_pipeline, run, stages

    model = onnx.parser.parse_model((GRAPHS / "chain_train.onnxtxt").read_text())
    passes = compile_pipeline(cost="flops", granularity="fine", strategy="approx",
                              options=make_options("approx", time_limit=1000.0))
    st = run(stages(passes, last="units"), State(model=model))
    floor = simple_lower_bound(st.dag)
    st.budget = budget = int(checkpoint_all(st.dag).peak(st.dag))  # 172 bytes; the bound 144, the constant 108
    monkeypatch.setattr(fit_mod, "predict", lambda lowered, device, **kw: ArenaPrediction(budget + 40, 0, 0))
    solved_at: list[int] = [budget]  # the first round's, then each re-solve's (``on_round``)
    with pytest.raises(PlanError) as err:
        compile_fit(stages(passes, first="schedule"), st, device="cuda:9",
                    on_round=lambda r: solved_at.append(r["solver_budget"]))
    assert solved_at and min(solved_at) >= floor, f"solved at {solved_at}, below the bound {floor}"
    assert f"no schedule needs less than {floor}" in str(err.value)


def test_upward_budgets_between_the_lowest_plan_and_the_budget() -> None:
    """When the first round solved at the budget itself (``remc train``'s loop) and a tighter round needed more
    on the device, the solver budgets between them are tried (the need is not monotone in the solver budget);
    a first round below the budget (an anticipated excess) keeps its range up to the budget."""
    from remc.fit import UPWARD_ROUNDS, FitReport, _upward_budgets

    budget = 1440000000
    report = FitReport(budget, budget, 2, history=[
        {"round": 1, "solver_budget": budget, "predicted": 1472660808},
        {"round": 2, "solver_budget": 1406999328, "predicted": 1590905160}])
    ups = _upward_budgets(report, budget)
    assert len(ups) == UPWARD_ROUNDS and all(1406999328 < b < budget for b in ups)
    anticipated = FitReport(budget, 1400000000, 1, history=[
        {"round": 0, "input_graph_excess": 40000000, "solver_budget": 1400000000},
        {"round": 1, "solver_budget": 1400000000, "predicted": 1450000000}])
    ups = _upward_budgets(anticipated, budget)
    assert len(ups) == UPWARD_ROUNDS and all(1400000000 < b < budget for b in ups)

def test_fit_keeps_no_frame_of_a_failed_solve():
    """The fit keeps the first solve's InfeasibleError (its message stands when no raised solve fits), but
    not its traceback: that kept the strategy's frames alive through every later round, with their locals
    (approx's LP relaxation and its HiGHS instance, 1.1 GiB on GPT-2 s512)."""
    import gc
    import weakref
    from types import SimpleNamespace

    from remc.fit import FitReport, _solve_raising
    from remc.ir.errors import InfeasibleError
    from remc.pipeline import Pass, State

    class Held:
        pass

    held: list = []

    class FailsAtTheBudget(Pass):
        name = "schedule"

        def apply(self, state):
            relaxation = Held()  # what a solver's frame holds while it fails
            held.append(weakref.ref(relaxation))
            if state.budget == 1000:
                raise InfeasibleError("no schedule fits", 1500)

    state = State(budget=1000)
    state.dag = SimpleNamespace(constant=10, kept=np.zeros(1, np.int64))
    last, first = _solve_raising([FailsAtTheBudget()], state, FitReport(1000, 1000, 0), None, None)
    gc.collect()
    assert (last, state.budget, str(first)) == (1000, 1500, "no schedule fits")
    assert len(held) == 2 and held[0]() is None


def _fails_below(tried: list[int], least: int = 125000):
    """A schedule pass that records the solver budget of each run in ``tried`` and finds no schedule below ``least``
    (the least feasible it reports: 101000)."""
    from remc.ir.errors import InfeasibleError
    from remc.pipeline import Pass

    class FailsBelow(Pass):
        name = "schedule"

        def apply(self, state):
            tried.append(int(state.budget))
            if state.budget < least:
                raise InfeasibleError("no schedule fits", 101000)

    return FailsBelow()


def test_the_first_raises_are_by_the_input_graphs_saving_on_the_device():
    """Where ONNX Runtime needed less than the live bytes on the input graph (in-place outputs), a budget with
    no schedule in remc's model is raised by half that saving first, then by all of it, not by 0.5% (RegNetY-400MF
    at 0.95x: no strategy fitted 72.7 MB in remc's model, its device needed 8.7 MB less than the live bytes, and
    three raises of 0.5% ended with no plan; Swin-T at 0.9x: the raise by the whole saving gave a plan that needed
    0.9% more than the budget on the device, RAISE_SAVING_SHARES)."""
    from types import SimpleNamespace

    from remc.fit import FitReport, _solve_raising
    from remc.ir.errors import InfeasibleError
    from remc.pipeline import State

    tried: list[int] = []

    for excess, want in ((-30000, [100000, 115000, 130000]), (-60000, [100000, 130000]),
                         (4000, [100000, 101000, 101500, 102000])):
        tried.clear()
        state = State(budget=100000)
        state.dag = SimpleNamespace(constant=10, kept=np.zeros(1, np.int64))
        report = FitReport(100000, 100000, 0,
                           history=[{"round": 0, "input_graph_excess": excess, "solver_budget": 100000}])
        try:
            _solve_raising([_fails_below(tried)], state, report, None, None)
        except InfeasibleError:
            pass
        assert tried == want


def test_no_raise_where_what_every_plan_holds_exceeds_the_budget():
    """The always-resident bytes and the graph's outputs are on the device whatever the schedule: where they
    exceed the user's budget, ``_solve_raising`` tries no higher solver budget and says why (before: three raises,
    each solving again; VGG16 test size at 0.5x took 55 s of a 60 s limit to refuse, Inception-v3 b4 at 0.9x
    56 s)."""
    from types import SimpleNamespace

    from remc.fit import FitReport, _solve_raising
    from remc.ir.errors import InfeasibleError
    from remc.pipeline import State

    tried: list[int] = []

    for kept, want in ((60000, [100000]), (49000, [100000, 101000, 101500, 102000])):
        tried.clear()
        state = State(budget=100000)
        state.dag = SimpleNamespace(constant=41000, kept=np.array([kept, 0], np.int64))
        with pytest.raises(InfeasibleError) as got:
            _solve_raising([_fails_below(tried)], state, FitReport(100000, 100000, 0), None, None)
        assert tried == want
        assert ("every plan needs at least 101000 bytes on the device" in str(got.value)) == (kept == 60000)


@pytest.mark.parametrize("status, continued", [("time_limit", True), ("optimal", False), ("heuristic", False)])
def test_time_left_after_a_cut_solve_is_spent_on_one_more(monkeypatch, status: str, continued: bool) -> None:
    """A fitting plan whose solve was cut by its time limit, with time left on the compile's clock (its first
    solve kept time back for rounds that did not run), gets one more solve at the same solver budget, warm
    from it (``_use_time_left``), kept only when it fits and costs less (here it costs the same: the fitting
    plan stays); a proven or finished solve does not. The chain at 128 bytes recomputes one node (cost 52)."""
    from remc import fit as fit_mod
    from remc.backends.strategies import make_options
    from remc.fit import ArenaPrediction, compile_fit
    from remc.pipeline import State, compile_pipeline, run, stages

    model = onnx.parser.parse_model((GRAPHS / "chain_train.onnxtxt").read_text())
    passes = compile_pipeline(cost="flops", granularity="fine", strategy="approx",
                              options=make_options("approx", time_limit=1000.0))
    clock = CompileClock(600.0, now=FakeTime())
    st = run(stages(passes, last="units"), State(model=model, budget=128, clock=clock))
    preds = iter([0])  # the input graph; every plan then needs exactly the budget (no slack to spend)
    monkeypatch.setattr(fit_mod, "predict", lambda lowered, device, **kw: ArenaPrediction(next(preds, 128), 0, 0))
    real_run, solves = fit_mod.run, []

    def run_and_mark(ps, state, **kw):  # every solve reports ``status`` (time_limit: cut by its limit)
        out = real_run(ps, state, **kw)
        if state.schedule is not None and state.schedule.report is not None:
            state.schedule.report.status = status
            solves.append(state.budget)
        return out

    monkeypatch.setattr(fit_mod, "run", run_and_mark)
    report = compile_fit(stages(passes, first="schedule"), st, device="cuda:9")
    more = [h for h in report.history if h.get("continued")]
    assert len(more) == (1 if continued else 0) and len(solves) == 1 + len(more)
    if continued:
        assert more[0]["solver_budget"] == report.solver_budget and more[0]["kept"] is False
        assert report.prediction is not None and report.prediction.total == 128
    assert st.schedule is not None and st.dag is not None and st.schedule.cost(st.dag) == 52.0
    assert st.budget == 128


def test_a_kernel_measurement_cut_by_the_deadline_is_remembered_and_skipped(tmp_path: Path,
                                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """A measurement the deadline cut short is cached as at least that long; a later compile with no more time
    skips it, and every signature at least as large, instead of starting it again and losing it again (ResNet50
    b256 at 30 s: 9 s of every compile measured nothing)."""
    import json
    import math
    import types

    from remc.backends import scratch
    from remc.backends.runtime import import_model
    from remc.pipeline import shaped_model

    model = shaped_model(import_model(_chain(tmp_path)))

    class Cut(Exception):
        pass

    def cut_at_first_start(work, on_item, deadline):  # the child killed while its first measurement runs
        def emit(item):
            on_item(item)
            if item[0] == "start" and item[2] >= 0:  # (-1: the feeds, before the measurements)
                raise Cut
        with pytest.raises(Cut):
            work(emit)
        return False

    monkeypatch.setattr(scratch, "run_bounded", cut_at_first_start)
    _, left, total = scratch.unmeasured_kernels(model, "cpu", cache_dir=tmp_path, deadline=math.inf)
    assert left == total > 0
    entries = json.loads((tmp_path / "scratch.json").read_text())["entries"]
    cut = {k: e for k, e in entries.items() if k.startswith(scratch.SLOW_PREFIX)}
    measured = {k: e for k, e in cut.items() if e["bytes"] >= 0}  # (and the feeds' seconds, bytes -1)
    assert len(measured) == 1 and len(entries) == len(cut) == 2  # the one in progress, nothing measured
    (key, entry), = measured.items()

    started: list[int] = []

    started_ops: list[tuple[int, str]] = []  # (bytes, op) of each measured signature

    def record(work, on_item, deadline):
        def emit(item):
            if item[0] == "start" and item[2] >= 0:
                started.append(item[2])
            elif item[0] not in ("start", "ready"):
                started_ops.append((item[4], item[2]))
            on_item(item)
        work(emit)
        return True

    monkeypatch.setattr(scratch, "run_bounded", record)
    scratch.unmeasured_kernels(model, "cpu", cache_dir=tmp_path / "sizes", deadline=math.inf)  # every size
    started_ops.clear()
    sizes = sorted(set(started))
    assert len(sizes) >= 2 and entry["bytes"] == started[0]  # the first in ``measure_order`` was the one cut
    # as if an earlier compile had been cut after a very long time on a signature of the middle size
    entry.update(seconds=1e9, bytes=sizes[len(sizes) // 2])
    monkeypatch.setattr(scratch, "time", types.SimpleNamespace(perf_counter=lambda: 0.0))  # a deadline of 3600 s
    (tmp_path / "scratch.json").write_text(json.dumps({"version": 1, "entries": {key: entry}}))
    started.clear()
    _, left2, _ = scratch.unmeasured_kernels(model, "cpu", cache_dir=tmp_path, deadline=3600.0)
    ops = json.loads((tmp_path / "sizes" / "scratch.json").read_text())["entries"]
    cut_op = ops[key[len(scratch.SLOW_PREFIX):]]["op"]
    same = [b for b, op in started_ops if op == cut_op]
    assert started and all(b < entry["bytes"] for b in same)  # nothing of its op as large as the cut one was started
    assert left2 == total - len(started)


def test_a_slow_kernel_measurement_predicts_its_own_op_only_and_its_seconds_are_cached(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A measurement's time is predicted from those of its own op type, this compile's and the cached ones of
    earlier compiles: one slow op (ResNet50 b256's weight-gradient convolution, 46 s) no longer predicts every other
    op past the deadline (its 1 GB ReLUs take 1 s: a 300 s compile's kernel phases ended 11 and 14 s before their
    deadlines with signatures left), and a signature whose op's cached measurements take longer than the time left is
    not started (it would be lost at the deadline, in every compile)."""
    import json
    import types

    from remc.backends import scratch
    from remc.backends.runtime import import_model
    from remc.pipeline import shaped_model

    model = shaped_model(import_model(_chain(tmp_path)))
    now = [0.0]
    monkeypatch.setattr(scratch, "time", types.SimpleNamespace(perf_counter=lambda: now[0]))
    started: list[str] = []

    def measure(prof, model, p, *a, **k):  # a Where takes 60 s, every other op 0.01 s (on a fake clock)
        started.append(p.node.op_type)
        now[0] += 60.0 if p.node.op_type == "Where" else 0.01
        return scratch.KernelMemory()

    monkeypatch.setattr(scratch, "_measure", measure)
    monkeypatch.setattr(scratch, "run_bounded", lambda work, on_item, deadline: (work(on_item), True)[1])
    _, left, total = scratch.unmeasured_kernels(model, "cpu", cache_dir=tmp_path, deadline=100.0)
    assert started[0] == "Where"  # (it may need scratch: measured first on CPU)
    assert left == 0 and len(started) == total  # the Where's 60 s predicted no other op past the deadline
    entries = json.loads((tmp_path / "scratch.json").read_text())["entries"]
    entries = {k: e for k, e in entries.items() if not k.startswith(scratch.SLOW_PREFIX)}  # (the feeds' seconds)
    assert len(entries) == total and all(e["seconds"] > 0 and e["bytes"] > 0 for e in entries.values())
    # a later compile with 30 s, one Mul signature not in the cache, the cached Muls measured at 60 s each: not started
    muls = [k for k, e in entries.items() if e["op"] == "Mul"]
    assert len(muls) >= 2
    kept = {k: dict(e, seconds=60.0) if e["op"] == "Mul" else e for k, e in entries.items() if k != muls[0]}
    (tmp_path / "scratch.json").write_text(json.dumps({"version": 1, "entries": kept}))
    started.clear()
    now[0] = 0.0
    _, left2, _ = scratch.unmeasured_kernels(model, "cpu", cache_dir=tmp_path, deadline=30.0)
    assert started == [] and left2 == 1


def test_the_input_kernels_with_signatures_left_are_kept_for_phases_that_could_measure_no_more(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``fit.input_kernels`` with signatures left unmeasured is built again only by a call with a later deadline than
    the one that built it: the solver scratch, the arena estimate and the device floor read it from the state (each
    rebuild took 0.45-0.7 s of a ResNet50 b256 fine compile at 30 s, load 5)."""
    import math
    import time as time_mod

    from remc.backends import scratch
    from remc.backends.runtime import import_model
    from remc.fit import input_kernels
    from remc.pipeline import State

    calls: list = []
    monkeypatch.setattr(scratch, "unmeasured_kernels", lambda model, device, **k: calls.append(k["deadline"]) or
                        ({}, 1, 2))
    state = State(model=str(_chain(tmp_path)))
    state.graph = import_model(state.model)
    soon = time_mod.perf_counter() + 3600.0
    assert input_kernels(state, "cpu", None, soon)[1:3] == (1, 2)
    input_kernels(state, "cpu", None, soon)  # the same deadline: kept
    input_kernels(state, "cpu", None, -math.inf)  # no time at all: kept
    assert calls == [soon]
    input_kernels(state, "cpu", None, soon + 1.0)  # more time: built again
    input_kernels(state, "cpu", None, None)  # no deadline: built again
    assert calls == [soon, soon + 1.0, None]


def test_under_a_deadline_ops_that_may_need_scratch_are_measured_first_on_cpu(tmp_path: Path,
                                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """A limit that cuts the kernel measurement short leaves out the elementwise ops (``OUTPUT_ONLY_ON_CPU``,
    whose rule is what they measure), not the convolutions: an EfficientNet-B0 compiled at 60 s measured its
    smallest signatures first and its plan needed 21% more than predicted under ``remc run``."""
    import json
    import math

    from remc.backends import scratch
    from remc.backends.runtime import import_model
    from remc.pipeline import shaped_model

    model = shaped_model(import_model(_chain(tmp_path)))
    started: list[str] = []

    def record(work, on_item, deadline):
        work(lambda item: (started.append(item[1]) if item[0] == "start" and item[2] >= 0 else None, on_item(item)))
        return True

    monkeypatch.setattr(scratch, "run_bounded", record)
    scratch.unmeasured_kernels(model, "cpu", cache_dir=tmp_path, deadline=math.inf)
    entries = json.loads((tmp_path / "scratch.json").read_text())["entries"]
    late = [entries[k]["op"] in scratch.OUTPUT_ONLY_ON_CPU for k in started]
    assert any(late) and not all(late)
    assert late == sorted(late)  # every op that may need scratch before every output-only one
    assert scratch.measure_order("Mul", 1, "cuda") < scratch.measure_order("Conv", 2, "cuda")  # (CPU only)


def test_kernel_measurement_feeds_cut_by_the_deadline_are_skipped_next_time(tmp_path: Path,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """The feeds of a group (random inputs, or a run of the graph to its integer inputs: ResNet50 b256's forward
    to its MaxPool takes 20 s loaded) cut short are remembered too; with no more time the group is skipped."""
    import json
    import math
    import types

    from remc.backends import scratch
    from remc.backends.runtime import import_model
    from remc.pipeline import shaped_model

    model = shaped_model(import_model(_chain(tmp_path)))

    class Cut(Exception):
        pass

    def cut_in_the_feeds(work, on_item, deadline):
        def emit(item):
            on_item(item)
            if item[0] == "start":
                raise Cut
        with pytest.raises(Cut):
            work(emit)
        return False

    monkeypatch.setattr(scratch, "run_bounded", cut_in_the_feeds)
    scratch.unmeasured_kernels(model, "cpu", cache_dir=tmp_path, deadline=math.inf)
    entries = json.loads((tmp_path / "scratch.json").read_text())["entries"]
    (key, entry), = entries.items()
    assert key.startswith(scratch.SLOW_PREFIX + scratch.VALUES_PREFIX) and entry["bytes"] == -1
    started: list = []

    def record(work, on_item, deadline):
        work(lambda item: (started.append(item) if item[0] == "start" else None, on_item(item)))
        return True

    monkeypatch.setattr(scratch, "run_bounded", record)
    entry["seconds"] = 1e9
    monkeypatch.setattr(scratch, "time", types.SimpleNamespace(perf_counter=lambda: 0.0))  # a deadline of 3600 s
    (tmp_path / "scratch.json").write_text(json.dumps({"version": 1, "entries": {key: entry}}))
    _, left, total = scratch.unmeasured_kernels(model, "cpu", cache_dir=tmp_path, deadline=3600.0)
    assert not started and left == total > 0  # the group was skipped: its feeds take longer than the time left
    _, left, total = scratch.unmeasured_kernels(model, "cpu", cache_dir=tmp_path)  # no deadline: all measured
    assert started and left == 0


@pytest.mark.parametrize("started_ago, expected", [(3.0, KERNEL_FIRST_SHARE * 60),
                                                   (13.0, 13.0 + KERNEL_FIRST_LEAST * 60),
                                                   (58.0, 60.0)])
def test_the_first_kernel_measurement_runs_its_least_share_after_a_slow_start(monkeypatch, started_ago: float,
                                                                              expected: float) -> None:
    """The first kernel measurement runs until KERNEL_FIRST_SHARE of the limit, or KERNEL_FIRST_LEAST of it from its
    start where the start-up (and the import) passed that share already, never past the limit: a swin_t compiled
    cold at a load of 11 reached the share in start-up and import and measured no kernel."""
    from remc import fit as fit_mod
    from remc.backends import scratch
    from remc.pipeline import State

    now = [100.0]
    clock = CompileClock(60.0, now=lambda: now[0], started_ago=started_ago)
    seen = []
    monkeypatch.setattr(scratch, "unmeasured_kernels", lambda model, device, deadline, settings, keys=None: (
        seen.append(deadline) or ({}, 0, 0)))
    monkeypatch.setattr("remc.pipeline.shaped_model", lambda graph: None)
    state = State(model=None)
    state.graph, state.clock = object(), clock
    fit_mod.measure_kernels_first(state, "cpu")
    assert seen == [pytest.approx(clock.start + expected)]
    assert next(p.deadline for p in clock.phases if p.name == "kernel memory") == pytest.approx(expected)


def test_the_fits_first_round_reuses_the_ratio_budgets_measure_of_the_input_graph(monkeypatch) -> None:
    """``--budget 0.9x`` predicts the input graph on the device (``unmodified_need``); the first round's
    anticipation of the device's excess reuses that prediction when every kernel was measured for it, and predicts
    again otherwise (a swin_t from torchvision, loaded: 10.7 s for the ratio's measure, then 9.0 s for the same
    prediction again)."""
    from remc import fit as fit_mod
    from remc.fit import ArenaPrediction, FitReport
    from remc.pipeline import State, compile_pipeline, run, stages

    model = onnx.parser.parse_model((GRAPHS / "chain_train.onnxtxt").read_text())
    passes = compile_pipeline(cost="flops", granularity="fine", strategy="approx")
    for unmeasured, predicted in ((0, False), (3, True)):
        clock = CompileClock(60.0, now=FakeTime())
        st = run(stages(passes, last="units"), State(model=model, budget=2000, clock=clock))
        peak = checkpoint_all_peak(st)
        st.budget = budget = peak + 50
        st.input_need = ArenaPrediction(peak + 10, 0, 0, kernels_unmeasured=unmeasured)
        calls = []
        monkeypatch.setattr(fit_mod, "predict", lambda lowered, device, _p=peak, **kw: calls.append(1) or
                            ArenaPrediction(_p + 10, 0, 0))
        first = fit_mod._anticipate(st, "cpu", clock, None, FitReport(budget, budget, 1))
        assert bool(calls) == predicted
        assert first == budget - 10  # the device's excess over the live bytes, 10, anticipated
        assert ("arena estimate" in [p.name for p in clock.phases]) == predicted


def checkpoint_all_peak(st) -> int:
    from remc.ir.schedule import checkpoint_all
    return int(checkpoint_all(st.dag).peak(st.dag))


def test_a_later_round_no_round_can_follow_gets_the_time_a_round_would_keep_back() -> None:
    """A later fit round's solve gets LATER_ROUND_SHARE of the time left less what the steps after a solve took,
    where another round could still follow it, else FIRST_ROUND_SHARE (EfficientNetV2-S at 0.9x, 60 s: 7.5 s were
    left after round 1, its plan, lowering and arena check took 5.3 s, and round 2's solve got 1.1 s)."""
    from remc.fit import _later_share

    t = [0.0]
    clock = CompileClock(60.0, now=lambda: t[0])
    t[0] = 47.2
    clock.record("schedule", 27.7)
    t[0] = 52.5
    clock.record("arena check", 47.2)  # 5.3 s after the solve
    assert _later_share(clock) == FIRST_ROUND_SHARE  # 7.5 s left: no round after this one
    t2 = [0.0]
    early = CompileClock(60.0, now=lambda: t2[0])
    t2[0] = 10.0
    early.record("schedule", 5.0)
    t2[0] = 15.3
    early.record("arena check", 10.0)
    assert _later_share(early) == LATER_ROUND_SHARE  # 44.7 s left: room for another round after it
    assert _later_share(None) == LATER_ROUND_SHARE


def test_the_input_graphs_kernel_table_is_built_once_when_complete(monkeypatch) -> None:
    """``fit.input_kernels`` keeps the input graph's kernel-memory table on the state once every signature is
    measured, so the compile's later phases read it without building it again (shape inference and a cache look-up
    per node each time: 1-2 s of wall on Swin-T under load); where some were left unmeasured it is built again by a
    call with a later deadline."""
    from remc.backends import scratch
    from remc.fit import input_kernels
    from remc.pipeline import State, compile_pipeline, run, stages

    model = onnx.parser.parse_model((GRAPHS / "chain_train.onnxtxt").read_text())
    st = run(stages(compile_pipeline(cost="flops", granularity="fine"), last="import"), State(model=model))
    calls: list[float | None] = []
    left = [2]

    def fake(model, device="cpu", *, deadline=None, **kw):
        calls.append(deadline)
        return {"n": scratch.KernelMemory()}, left[0], 5

    monkeypatch.setattr(scratch, "unmeasured_kernels", fake)
    import time as time_mod
    t = time_mod.perf_counter() + 3600.0  # (deadlines ahead: a passed one keeps an incomplete table too)
    assert input_kernels(st, "cpu", None, t + 1.0)[1:3] == (2, 5)
    assert input_kernels(st, "cpu", None, t + 2.0)[1:3] == (2, 5) and len(calls) == 2  # incomplete, more time: again
    left[0] = 0
    km, n_left, total, _ = input_kernels(st, "cpu", None, t + 3.0)
    assert (n_left, total) == (0, 5) and len(calls) == 3
    assert input_kernels(st, "cpu", None, t + 4.0)[0] is km and len(calls) == 3  # complete: kept
    assert input_kernels(st, "cuda", None, t + 4.0) and len(calls) == 4  # another device: its own table


@pytest.mark.parametrize("limit, slack_share", [(60.0, True), (20.0, False)])
def test_the_first_solve_keeps_time_for_a_slack_round_only_where_one_can_run(monkeypatch, limit: float,
                                                                              slack_share: bool) -> None:
    """Where the input graph needs less on the device than its live bytes, the first solve gets SLACK_FIRST_SHARE
    of the time left (less the steps after it), keeping the rest for ``_use_slack``'s re-solve, but only where that
    rest could hold the re-solve's start (``_slack_room``); else FIRST_ROUND_SHARE (before: half of a short limit
    kept for a round that could not run). Fake clock: the solve is reached at 10 s, the steps after it take 2."""
    from remc import fit as fit_mod
    from remc.backends.strategies import make_options
    from remc.fit import SLACK_FIRST_SHARE, ArenaPrediction, compile_fit
    from remc.pipeline import SchedulePass, State, compile_pipeline, run, stages

    model = onnx.parser.parse_model((GRAPHS / "chain_train.onnxtxt").read_text())
    passes = compile_pipeline(cost="flops", granularity="fine", strategy="approx",
                              options=make_options("approx", time_limit=1000.0))
    clock = CompileClock(limit, now=FakeTime())
    st = run(stages(passes, last="units"), State(model=model, budget=128, clock=clock))
    preds = iter([0, 108, 127])  # the input graph (a saving: 128 bytes less), the plan at 128, the plan at 148
    monkeypatch.setattr(fit_mod, "predict", lambda lowered, device, **kw: ArenaPrediction(next(preds), 0, 0))
    seen: list[SchedulePass] = []
    compile_fit(stages(passes, first="schedule"), st, device="cuda:9",
                on_pass=lambda p, s: seen.append(p) if isinstance(p, SchedulePass) else None)
    first = clock.phases[next(k for k, p in enumerate(clock.phases) if p.name == "schedule")]
    reserve = 2 * sum(p.seconds for p in clock.phases if p.name == "arena estimate") + fit_mod._write_estimate(clock) \
        + fit_mod._plan_lower_estimate(st, clock)
    left = limit - (first.deadline - seen[0].options.time_limit)  # the time left when the limit was set
    share = SLACK_FIRST_SHARE if slack_share else FIRST_ROUND_SHARE
    assert seen[0].options.time_limit == pytest.approx(share * (left - reserve))
    assert (len(seen) > 1) == slack_share  # (the slack round ran where there was room for it)


def test_the_first_solve_keeps_back_plan_and_lower_at_the_compiles_measured_slowdown() -> None:
    """The first solve's reserve (``fit._first_reserve``) counts plan and lower: PLAN_LOWER_SECONDS_PER_UNIT a unit
    times the compile's slowdown (``CompileClock.slowdown``: wall per CPU second, fake here), besides twice the arena
    estimate and the write; an arena check's layout counts on the time left less the write (``_layout_time_left``)."""
    from types import SimpleNamespace

    from remc import fit as fit_mod

    t, used = [100.0], [0.0]
    clock = CompileClock(60.0, now=lambda: t[0], cpu=lambda: used[0])
    clock.record("import", 0.0)
    t[0] += 3.0
    clock.record("import", 0.0)  # (3 s: the write's estimate)
    t[0] += 2.0
    clock.record("arena estimate", 3.0)  # (2 s)
    used[0] = 1.25  # (5 s of wall, 1.25 of CPU: 4x slower than a free core)
    assert clock.slowdown() == 4.0
    state = SimpleNamespace(dag=SimpleNamespace(n=1000))
    plan_lower = fit_mod.PLAN_LOWER_SECONDS_PER_UNIT * 1000 * 4.0
    assert fit_mod._plan_lower_estimate(state, clock) == pytest.approx(plan_lower)
    assert fit_mod._first_reserve(state, clock) == pytest.approx(2 * 2.0 + plan_lower + 3.0)
    assert fit_mod._layout_time_left(clock) == pytest.approx(60.0 - 5.0 - 3.0)
    assert CompileClock(60.0, now=lambda: t[0]).slowdown() == 1.0  # (an injected clock without a CPU clock)


def test_a_continued_rounds_plan_is_not_checked_past_the_limit_the_checked_one_stays(monkeypatch) -> None:
    """A continued round (``_re_solve``) whose solve leaves less time than the last arena check and the write: its
    plan is not checked (no ``predict``), the plan checked before it stays, and the clock's notes say so
    (RECHECK_GIVES_WAY; before, the check ran past the limit). Fake clock: the continued solve takes what is left."""
    from remc import fit as fit_mod
    from remc.backends.strategies import make_options
    from remc.fit import ArenaPrediction, compile_fit
    from remc.pipeline import State, compile_pipeline, run, stages

    model = onnx.parser.parse_model((GRAPHS / "chain_train.onnxtxt").read_text())
    passes = compile_pipeline(cost="flops", granularity="fine", strategy="approx",
                              options=make_options("approx", time_limit=1000.0))
    fake = FakeTime()
    clock = CompileClock(600.0, now=fake)
    st = run(stages(passes, last="units"), State(model=model, budget=128, clock=clock))
    predicted = []

    def fake_predict(lowered, device, **kw):
        predicted.append(1)
        return ArenaPrediction(0 if len(predicted) == 1 else 128, 0, 0)

    monkeypatch.setattr(fit_mod, "predict", fake_predict)
    real_run, solves = fit_mod.run, []

    def run_and_mark(ps, state, **kw):  # every solve is cut by its limit; the second takes all the time left
        out = real_run(ps, state, **kw)
        if state.schedule is not None and state.schedule.report is not None:
            state.schedule.report.status = "time_limit"
            solves.append(state.budget)
            if len(solves) == 2:
                fake.t += clock.left() - 0.5
        return out

    monkeypatch.setattr(fit_mod, "run", run_and_mark)
    report = compile_fit(stages(passes, first="schedule"), st, device="cuda:9")
    more = [h for h in report.history if h.get("continued")]
    assert len(solves) == 2 and len(more) == 1 and more[0].get("unchecked") is True
    assert len(predicted) == 2  # (the input graph and the first plan: not the continued round's)
    assert report.prediction is not None and report.prediction.total == 128
    assert any("not checked against the device" in n for n in clock.notes)
    assert st.schedule is not None and st.dag is not None and st.schedule.cost(st.dag) == 52.0


def test_the_write_and_arena_check_estimates_grow_with_the_compiles_slowdown_since_their_phase() -> None:
    """The write's estimate (the import's seconds) and the first solve's arena-check reserve (twice the arena
    estimate's) scale by how much the compile's slowdown grew since those phases ended (``CompileClock.grown``):
    ConvNeXt-T at 0.9x, 60 s, load 13-17, imported in 5.3 s and wrote in 7.3 s, its arena estimate took 3.6 s and its
    check 13.9 s, and it ended at 68.8 s. Fake wall and CPU clocks."""
    from remc import fit as fit_mod
    from remc.pipeline import State
    from remc.timebudget import CompileClock

    wall, cpu = [0.0], [0.0]
    clock = CompileClock(60.0, now=lambda: wall[0], cpu=lambda: cpu[0])
    wall[0], cpu[0] = 4.0, 2.0  # the import: 4 s of wall at a slowdown of 2
    clock.record("import", 0.0)
    wall[0], cpu[0] = 7.0, 3.0
    clock.record("arena estimate", 4.0)  # 3 s, ending at a slowdown of 7/3
    assert fit_mod._write_estimate(clock) == pytest.approx(4.0 * (7 / 3) / 2)
    wall[0], cpu[0] = 28.0, 4.0  # now 7 times slower than a free core
    assert clock.grown("import") == pytest.approx(3.5) and clock.grown("arena estimate") == pytest.approx(3.0)
    assert fit_mod._write_estimate(clock) == pytest.approx(14.0)
    assert fit_mod._first_reserve(State(model="m"), clock) == pytest.approx(2 * 3.0 * 3.0 + 14.0)
    assert clock.grown("verify") == 1.0  # (no such phase)
