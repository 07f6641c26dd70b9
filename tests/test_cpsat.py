"""The CP-SAT retention-interval model (backends/cpsat.py): exact when every unit may be computed once per
stage, schedules always within budget in remc's own accounting, hints never made worse."""
from __future__ import annotations

import math
import threading

import numpy as np
import pytest

pytest.importorskip("ortools")

from _milp_dags import budgets_against_exhaustive, exhaustive_optimum, random_dag, training_graph  # noqa: E402

from remc.backends.cpsat import CpSatOptions, solve_cpsat  # noqa: E402
from remc.backends.strategies import solve_approx  # noqa: E402
from remc.ir.errors import InfeasibleError  # noqa: E402
from remc.ir.schedule import check, checkpoint_all  # noqa: E402


def tiny_cases(count: int, seed: int):
    rng = np.random.default_rng(seed)
    return [random_dag(int(rng.integers(3, 6)), rng, no_recompute=k % 3 == 0, workspace=k % 2 == 0,
                       constant=int(rng.integers(0, 3))) for k in range(count)]


@pytest.mark.parametrize("seed", [1, 7])
def test_exact_model_equals_exhaustive_search(seed: int) -> None:
    def proven(s, best) -> None:  # noqa: ANN001
        assert not check(dag, s.R, s.S)
        assert s.report["status"] == "optimal" and s.report["bound_scope"] == "all schedules"
        assert s.report["bound"] == pytest.approx(best)

    for dag in tiny_cases(10, seed):
        opts = CpSatOptions(copies=dag.n, threads=1, time_limit=60)
        budgets_against_exhaustive(dag, lambda b: solve_cpsat(dag, b, opts), proven)  # noqa: B023


def test_training_graph_within_budget_and_no_worse_than_its_hint() -> None:
    rng = np.random.default_rng(3)
    dag = training_graph(6, rng, skips=((0, 3), (1, 5)), workspace=True, constant=5)
    top = checkpoint_all(dag).peak(dag)
    ran = 0
    for frac in (0.95, 0.9, 0.85, 0.8, 0.75, 0.7):
        budget = int(top * frac)
        try:
            hint = solve_approx(dag, budget)
        except InfeasibleError:
            continue
        ran += 1
        s = solve_cpsat(dag, budget, CpSatOptions(copies=2, threads=1, time_limit=60), hint=hint)
        assert not check(dag, s.R, s.S)
        assert s.peak(dag) <= budget
        assert s.cost(dag) <= hint.cost(dag) + 1e-9
        assert s.report["bound_scope"].startswith("schedules with at most 2")
        assert s.report["bound_c"] <= s.cost(dag) + 1e-9
        over = s.cost(dag) - dag.total_cost  # both gaps on the recomputation overhead, as the other strategies'
        assert s.report["gap_measure"] == "overhead"
        assert s.report["gap"] == pytest.approx((s.cost(dag) - s.report["bound"]) / over if over > 0 else 0.0)
        assert s.report["gap_c"] == pytest.approx(max(0.0, s.cost(dag) - s.report["bound_c"]) / over
                                                  if over > 0 else 0.0)
    assert ran >= 2


def test_cli_solve_with_cpsat(tmp_path) -> None:
    import json
    import subprocess
    import sys

    from remc.ir.nodelink import save_nodelink

    rng = np.random.default_rng(5)
    dag = training_graph(5, rng, skips=((0, 3),))
    path = tmp_path / "g.json"
    save_nodelink(dag, path)
    top = checkpoint_all(dag).peak(dag)
    budget, ref = top, checkpoint_all(dag).cost(dag)
    for frac in (0.95, 0.9, 0.85, 0.8, 0.75):  # the least of these budgets that approx can meet
        try:
            ref = solve_approx(dag, int(top * frac)).cost(dag)
        except InfeasibleError:
            break
        budget = int(top * frac)
    assert budget < top
    plan = tmp_path / "g.plan"
    res = subprocess.run([sys.executable, "-m", "remc.cli", "solve", str(path), "--budget", str(budget),
                          "--strategy", "cpsat", "--time-limit", "60", "--threads", "1", "--plan", str(plan),
                          "--json"], capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr
    rep = json.loads(res.stdout)
    assert rep["strategy"] == "cpsat" and rep["peak"] <= budget and plan.exists()
    assert rep["cost"] <= ref + 1e-9


@pytest.mark.parametrize("seed", [2, 11])
def test_relaxed_bound_never_above_the_optimum(seed: int) -> None:
    """Every round of cpsat_bound is a relaxation of all schedules: one round with a single merged instance
    per unit (the loosest) and the full rounds are at or below exhaustive search; when the rounds end with
    a schedule, it is optimal."""
    from remc.backends.cpsat import cpsat_bound

    closed = 0
    for dag in tiny_cases(8, seed):
        for budget in range(checkpoint_all(dag).peak(dag), -1, -1):
            best = exhaustive_optimum(dag, budget)
            if best is None:
                with pytest.raises(InfeasibleError):  # infeasible relaxation only where nothing fits
                    cpsat_bound(dag, budget, CpSatOptions(copies=dag.n, threads=1, time_limit=60))
                break
            loose = cpsat_bound(dag, budget, CpSatOptions(copies=1, threads=1, time_limit=60), rounds=1)
            assert loose.bound <= best + 1e-9
            full = cpsat_bound(dag, budget, CpSatOptions(copies=1, threads=1, time_limit=60))
            assert loose.bound - 1e-9 <= full.bound <= best + 1e-9
            if full.schedule is not None:
                s = full.schedule
                assert not check(dag, s.R, s.S) and s.peak(dag) <= budget
                if full.status == "OPTIMAL" and s.cost(dag) <= full.bound + 1e-9:
                    assert s.cost(dag) == pytest.approx(best)
                    closed += 1
    assert closed > 0



@pytest.mark.parametrize("seed", [3, 13])
def test_bound_with_a_cutoff_proves_the_target_and_never_exceeds_the_optimum(seed: int) -> None:
    """cpsat_bound with ``stop_at`` asks each round for a relaxation below the target (objective cutoff): when
    none exists (status CUTOFF) the bound is at least the target, and whatever the target (below, at or
    above the optimum) the bound is never above exhaustive search's optimum."""
    from remc.backends.cpsat import cpsat_bound

    cut = 0
    for dag in tiny_cases(8, seed):
        for budget in range(checkpoint_all(dag).peak(dag), -1, -1):
            best = exhaustive_optimum(dag, budget)
            if best is None:
                break
            over = best - float(dag.total_cost)
            for target in (best - 0.5 * over, best, best + 1.0):
                res = cpsat_bound(dag, budget, CpSatOptions(copies=1, threads=1, time_limit=60), stop_at=target)
                assert res.bound <= best + 1e-9
                if res.status == "CUTOFF":
                    assert res.bound >= target - 1e-9 * max(1.0, target)
                    cut += 1
    assert cut > 0


def test_checkmate_proves_optimal_with_the_cpsat_bound(monkeypatch) -> None:
    """checkmate's CP-SAT phase: the schedule is exhaustive search's optimum and the report's bound comes from
    CP-SAT when the MILP was not needed, some of them by the probe (one cutoff round) alone. (Without the covering
    MILP before CP-SAT, COVER_FIRST, which proves most of these small cases before CP-SAT starts.)"""
    import remc.backends.strategies as strategies
    from remc.backends.strategies import make_options, solve

    monkeypatch.setattr(strategies, "COVER_FIRST", False)

    proved = probed = 0
    for dag in tiny_cases(6, 5):
        top = checkpoint_all(dag).peak(dag)
        for budget in range(top - 1, -1, -1):
            best = exhaustive_optimum(dag, budget)
            if best is None:
                break
            s = solve("checkmate", dag, budget, make_options("checkmate", threads=1, time_limit=60))
            assert s.cost(dag) == pytest.approx(best) and s.peak(dag) <= budget
            assert s.report.status == "optimal" and s.report.bound <= best + 1e-9
            proved += s.report.extras["milp"].startswith("not needed (the gap is closed by the cp-sat")
            probed += s.report.extras["cp_sat"].startswith("incumbent proven by a cutoff round")
    assert proved > 0 and probed > 0  # some incumbents proven by the probe alone (cpsat_phase)


def test_integer_costs_are_exact_when_they_fit() -> None:
    """Integral costs above 2^40 (Moccasin's FCN8: up to 1.6e12) are kept exact (divided by their gcd), so a
    bound is not rounded below the optimum; non-integral ones are rounded down for a bound."""
    from remc.backends.cpsat import _int_costs

    big = np.array([1_624_437_161_984.0, 298_366_009_344.0, 0.0, 13_985_906_688.0])
    ints, scale = _int_costs(big)
    assert [c / scale for c in ints] == big.tolist()
    frac = np.array([0.5, 1.25, 3.0])
    ints, scale = _int_costs(frac, floor=True)
    assert all(c / scale <= x for c, x in zip(ints, frac))


def test_stalled_search_still_returns_a_schedule_no_worse_than_its_hint() -> None:
    """``stall`` (checkmate's C=2 model) ends the search early, never with a schedule over budget or worse
    than its hint."""
    rng = np.random.default_rng(8)
    dag = training_graph(7, rng, skips=((0, 4), (2, 6)), workspace=True)
    budget = int(0.8 * checkpoint_all(dag).peak(dag))
    hint = solve_approx(dag, budget)
    s = solve_cpsat(dag, budget, CpSatOptions(copies=2, threads=1, time_limit=60, stall=0.0), hint=hint)
    assert not check(dag, s.R, s.S) and s.peak(dag) <= budget
    assert s.cost(dag) <= hint.cost(dag) + 1e-9


def test_a_search_stopped_by_its_time_limit_with_nothing_is_no_schedule_in_time(monkeypatch) -> None:
    """CP-SAT's UNKNOWN (its time limit, or ``stop``, before any schedule) is NoScheduleInTime, which ``fit``
    answers by raising the solver budget and the report words as a time limit; before, it was a bare SolverError
    ("CP-SAT stopped with status UNKNOWN and no schedule"), as for a model CP-SAT rejects."""
    import remc.backends.cpsat as cpsat
    from remc.ir.errors import NoScheduleInTime, SolverError

    rng = np.random.default_rng(8)
    dag = training_graph(7, rng, skips=((0, 4), (2, 6)), workspace=True)
    budget = int(0.8 * checkpoint_all(dag).peak(dag))
    cp_model = cpsat.load_cp_model()
    for status, error in ((cp_model.UNKNOWN, NoScheduleInTime), (cp_model.MODEL_INVALID, SolverError)):
        monkeypatch.setattr(cpsat, "_solve_watched", lambda *a, _s=status, **k: _s)
        with pytest.raises(error) as caught:
            solve_cpsat(dag, budget, CpSatOptions(copies=2, threads=1, time_limit=5, presolve=True))
        assert (caught.type is NoScheduleInTime) == (status == cp_model.UNKNOWN)


def test_byte_sized_tensors_do_not_overflow_the_objective() -> None:
    """Tensors of hundreds of MB whose sizes share no common divisor leave the capacity near 1e9 in CP-SAT's
    units: the memory level's term in the objective (its weight times the level) overflowed CP-SAT's 64-bit
    check and the solve stopped with MODEL_INVALID (U-Net b4 416x608 at 0.5 of checkpoint-all). Both the hard
    capacity (presolve on) and the soft one (no hint that fits, presolve off) must solve."""
    import dataclasses
    rng = np.random.default_rng(5)
    dag = training_graph(5, rng, skips=((0, 3),))
    big = np.asarray([(k + 1) * 199_999_979 + 7 * k for k in range(dag.n)], dtype=np.int64)  # gcd 1
    # FLOP-like float costs: scaled up to CP-SAT's integer room, so the objective's weights are large too
    dag = dataclasses.replace(dag, mem=big, cost=rng.uniform(1e9, 5e9, dag.n))
    from remc.passes.milp_model import simple_lower_bound
    top, least = checkpoint_all(dag).peak(dag), simple_lower_bound(dag)
    budget = least + (top - least) // 3
    for presolve in (True, False):
        s = solve_cpsat(dag, budget, CpSatOptions(threads=1, time_limit=60, presolve=presolve))
        assert not check(dag, s.R, s.S) and s.peak(dag) <= budget


def test_strategy_hints_with_the_stage_search_where_no_baseline_fits() -> None:
    """The 'cpsat' strategy's hint is the cheapest baseline that fits; where none does, the eviction pass and
    stage search give it one (without a fitting hint CP-SAT starts over the budget: MobileNetV2 b4 at 6.5 MiB
    found no schedule in 30 s)."""
    from remc.backends.cpsat import cpsat_strategy
    from remc.passes.strategies import best_baseline
    rng = np.random.default_rng(3)
    dag = training_graph(int(rng.integers(5, 9)), rng, skips=((0, 3),))
    budget = 26  # the least any schedule needs: no baseline fits, the stage search does
    assert best_baseline(dag, budget) is None
    s = cpsat_strategy(dag, budget, CpSatOptions(threads=1, time_limit=60), None)
    assert not check(dag, s.R, s.S) and s.peak(dag) <= budget
    assert s.report["hint"].startswith("stage search")


def test_cp_model_loads_without_pandas_and_its_pandas_helpers_still_work() -> None:
    """load_cp_model imports OR-Tools' cp_model without pandas (0.4-0.65 s of a small solve); a solve works, and
    cp_model's pandas helpers import the real pandas on first use. In a fresh interpreter: pandas must not be
    loaded before."""
    import subprocess
    import sys
    import textwrap

    code = textwrap.dedent("""
        import sys
        from remc.backends.cpsat import load_cp_model
        cp_model = load_cp_model()
        assert "pandas" not in sys.modules, "pandas was imported"
        m = cp_model.CpModel()
        x = m.NewIntVar(0, 5, "x")
        m.Maximize(x)
        s = cp_model.CpSolver()
        assert s.Solve(m) == cp_model.OPTIMAL and s.Value(x) == 5
        import pandas as pd
        xs = m.new_int_var_series("y", pd.Index(range(3)), 0, 1)
        assert isinstance(xs, pd.Series) and len(xs) == 3
        print("ok")
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr


def test_multi_use_counts_only_present_merged_instances_used_more_than_once():
    from remc.backends.cpsat import _multi_use

    # (unit, serve literal, presence): unit 1 used twice, unit 2 once, unit 3 twice but its instance absent
    merged = [(1, "a", "p1"), (1, "b", "p1"), (2, "c", "p2"), (3, "d", "p3"), (3, "e", "p3"), (4, "f", "p4")]
    value = {"a": True, "b": True, "c": True, "d": True, "e": True, "f": False,
             "p1": True, "p2": True, "p3": False, "p4": True}.__getitem__
    assert _multi_use(merged, value) == {1}


def test_free_workers_leaves_busy_cores_alone(monkeypatch) -> None:
    import os

    from remc.backends import cpsat

    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1, 2, 3}, raising=False)
    for load, want in ((0.2, 4), (1.4, 3), (3.6, 1), (9.0, 1)):
        monkeypatch.setattr(os, "getloadavg", lambda load=load: (load, load, load))
        assert cpsat.free_workers() == want


def test_checkmate_takes_cpsat_first_from_the_stage_search_where_no_baseline_fits() -> None:
    """Where no baseline fits but the stage search from nothing finds a schedule, checkmate runs CP-SAT from
    it and skips approx's LP rounding once CP-SAT's bound proves the result (a layered DAG found by a scan)."""
    from test_evict import _layered

    from remc.backends.strategies import make_options, solve
    from remc.ir.schedule import checkpoint_all
    from remc.passes.strategies import best_baseline

    dag = _layered(20, 4, 1)
    budget = math.ceil(checkpoint_all(dag).peak(dag) * 0.8)
    assert best_baseline(dag, budget) is None
    s = solve("checkmate", dag, budget, make_options("checkmate", time_limit=120))
    assert not check(dag, s.R, s.S) and s.peak(dag) <= budget
    assert s.report.status == "optimal"
    assert "stage_search" in s.report.extras and s.report.extras["approx"] == "not run"


def test_schedule_without_recomputation_is_optimal_for_every_schedule() -> None:
    """With C < n the model's bound holds only for schedules within C computations per unit, but a schedule
    that computes every unit once meets the bound of every schedule: it is "optimal", not "optimal (C=2)"."""
    rng = np.random.default_rng(5)
    dag = training_graph(6, rng, skips=((0, 3),))
    s = solve_cpsat(dag, checkpoint_all(dag).peak(dag), CpSatOptions(copies=2, threads=1, time_limit=60))
    assert s.cost(dag) == pytest.approx(dag.total_cost)
    assert s.report["status"] == "optimal" and s.report["bound_scope"] == "all schedules"


@pytest.mark.parametrize("seed", [3, 17])
def test_quick_rounds_prove_the_target_or_return_a_cheaper_schedule(seed: int) -> None:
    """cpsat_bound with ``quick`` stops each round at its first relaxation below the target and grows it: the
    bound is never above exhaustive search's optimum; CUTOFF only where the target is at most the optimum
    (then the bound is at least the target); a schedule it returns fits, and where it comes from a target above
    the optimum it is below that target; a target above the optimum is never reported proven (CUTOFF)."""
    from remc.backends.cpsat import cpsat_bound

    cut = cheaper = 0
    for dag in tiny_cases(8, seed):
        for budget in range(checkpoint_all(dag).peak(dag), -1, -1):
            best = exhaustive_optimum(dag, budget)
            if best is None:
                break
            over = best - float(dag.total_cost)
            for target in (best - 0.5 * over, best, best + 1.0):
                res = cpsat_bound(dag, budget, CpSatOptions(copies=1, threads=1, time_limit=60), stop_at=target,
                                  quick=2)
                assert res.bound <= best + 1e-9
                if res.status == "CUTOFF":
                    assert target <= best + 1e-9
                    assert res.bound >= target - 1e-9 * max(1.0, target)
                    cut += 1
                if res.schedule is not None:
                    s = res.schedule
                    assert not check(dag, s.R, s.S) and s.peak(dag) <= budget
                    assert s.cost(dag) >= best - 1e-9
                    if target > best:
                        assert s.cost(dag) < target
                        cheaper += 1
                if target > best:
                    assert res.status != "CUTOFF" and res.schedule is not None
    assert cut > 0 and cheaper > 0


def test_checkmate_runs_no_baseline_where_the_stage_search_from_nothing_fits(monkeypatch) -> None:
    """Where CP-SAT runs, checkmate's first schedule is the stage search's from nothing, and the baselines run
    only when it finds none (backends/strategies.py STAGE_FIRST); the result is proven optimal either way."""
    import remc.backends.strategies as strategies
    from remc.backends.strategies import make_options, solve

    dag = training_graph(8, np.random.default_rng(5), skips=((1, 5),))
    budget = math.ceil(checkpoint_all(dag).peak(dag) * 0.8)
    calls: list[int] = []
    real = strategies.best_baseline

    def counted(*a, **k):
        calls.append(1)
        return real(*a, **k)

    monkeypatch.setattr(strategies, "best_baseline", counted)
    # (the paths where the covering MILP's decoded schedule does not prove itself: else neither search runs)
    monkeypatch.setattr(strategies, "COVER_BEFORE_STAGE", False)
    costs = []
    for first in (True, False):
        monkeypatch.setattr(strategies, "STAGE_FIRST", first)
        calls.clear()
        s = solve("checkmate", dag, budget, make_options("checkmate", time_limit=60, threads=1))
        assert not check(dag, s.R, s.S) and s.peak(dag) <= budget and s.report.status == "optimal"
        assert len(calls) == (0 if first else 1)
        assert s.report.extras.get("stage_search") is not None
        costs.append(s.cost(dag))
    assert costs[0] == pytest.approx(costs[1])


def test_a_stage_search_from_nothing_stopped_by_its_share_is_resumed(monkeypatch) -> None:
    """Where the stage search from nothing used its whole share (FIRST_STAGE_SHARE; here 0, so always), checkmate
    resumes it from its schedule with the share a stage search from a baseline gets, as before STAGE_FIRST."""
    import remc.backends.strategies as strategies
    from remc.backends.strategies import make_options, solve

    dag = training_graph(8, np.random.default_rng(5), skips=((1, 5),))
    budget = math.ceil(checkpoint_all(dag).peak(dag) * 0.8)
    starts: list[bool] = []
    real = strategies._stage_hint

    def recorded(dag_, budget_, incumbent, clock, share=strategies.STAGE_HINT_SHARE, **kw):
        starts.append(incumbent is None)
        return real(dag_, budget_, incumbent, clock, share=max(share, 0.05), **kw)  # (its own search still gets time)

    monkeypatch.setattr(strategies, "_stage_hint", recorded)
    monkeypatch.setattr(strategies, "FIRST_STAGE_SHARE", 0.0)
    monkeypatch.setattr(strategies, "FIRST_STAGE_APPROX", False)  # (else approx alone's share, at least)
    monkeypatch.setattr(strategies, "COVER_BEFORE_STAGE", False)  # (else its decoded schedule proves itself first)
    s = solve("checkmate", dag, budget, make_options("checkmate", time_limit=60, threads=1))
    assert not check(dag, s.R, s.S) and s.peak(dag) <= budget and s.report.status == "optimal"
    assert starts[:2] == [True, False]


def test_cpsat_phase_ends_once_a_bound_found_beside_it_proves_the_incumbent() -> None:
    """``cpsat_phase(external=)``: a bound from outside (the covering MILP beside CP-SAT) that proves the incumbent
    ends the phase before any CP-SAT step runs (the probe's and the rounds' ``stop`` too); one that proves nothing
    leaves the phase as it was."""
    from remc.backends.cpsat import cpsat_phase
    from remc.passes.strategies import best_baseline

    dag = training_graph(8, np.random.default_rng(5), skips=((1, 5),))
    budget = math.ceil(checkpoint_all(dag).peak(dag) * 0.8)
    inc = best_baseline(dag, budget)
    assert inc is not None
    asked: list[int] = []

    def proves() -> float:
        asked.append(1)
        return inc.cost(dag)

    best, bound, note = cpsat_phase(dag, budget, incumbent=inc, gap=1e-4, threads=1, seconds=60, external=proves)
    assert asked and "stopped: the bound found beside CP-SAT proves it" in note
    assert "C=2 model" not in note and best.cost(dag) == inc.cost(dag)
    best2, bound2, note2 = cpsat_phase(dag, budget, incumbent=inc, gap=1e-4, threads=1, seconds=60,
                                       external=lambda: -math.inf)
    assert "stopped" not in note2 and "C=2 model" in note2 and best2.cost(dag) <= inc.cost(dag)
    assert not check(dag, best2.R, best2.S) and best2.peak(dag) <= budget


def test_the_covering_milp_beside_cpsat_gives_the_bound_it_gives_alone_or_none_when_stopped() -> None:
    """``_CoverBeside`` (backends/strategies.py): started at once (no delay) it ends with cover_bound's own bound;
    stopped before its delay has passed it never starts (no bound, no child process)."""
    from _milp_dags import layered_dag

    from remc.backends.highs import HighsBackend
    from remc.backends.strategies import COVER_BESIDE_DEEP, _CancellableMip, _CoverBeside
    from remc.passes.coverbound import cover_bound
    from remc.passes.solver_api import Clock

    dag = layered_dag(40, 5, 11)
    budget = math.ceil(checkpoint_all(dag).peak(dag) * 0.8)
    alone = max(cover_bound(dag, budget, _CancellableMip(HighsBackend(), threading.Event(), presolve=depth == 1),
                            time_limit=60, threads=1, depth=depth).bound for depth in (1, COVER_BESIDE_DEEP))
    beside = _CoverBeside(dag, budget, Clock(60), cpu0=-math.inf, delay=0.0)
    beside.wait(None)
    assert beside.started and beside.done()
    assert beside.bound() == pytest.approx(alone) and "depth 1" in beside.note
    idle = _CoverBeside(dag, budget, Clock(60), cpu0=math.inf, delay=1.0)  # (its CPU delay never passes)
    idle.stop()
    assert not idle.started and idle.bound() == -math.inf and idle.done()


def test_the_covering_milp_beside_cpsat_goes_a_level_deeper_without_presolve(monkeypatch) -> None:
    """Once the covering MILP beside CP-SAT (depth 1) is solved, ``_CoverBeside`` solves the model of depth
    COVER_BESIDE_DEEP, without HiGHS' presolve, and keeps the better bound (Moccasin's n=250 at 0.9: +0.9039%, the
    C=2 model's schedule proven, against +0.8457% at depth 1); with COVER_BESIDE_DEEP = 1 only depth 1 runs."""
    from _milp_dags import layered_dag

    import remc.backends.strategies as strategies
    import remc.passes.coverbound as coverbound
    from remc.passes.solver_api import Clock

    dag = layered_dag(40, 5, 11)
    budget = math.ceil(checkpoint_all(dag).peak(dag) * 0.8)
    calls: list[tuple[int, bool]] = []
    real = coverbound.cover_bound

    def spy(dag, budget, mip, **kw):
        calls.append((kw["depth"], getattr(mip, "presolve", True)))
        return real(dag, budget, mip, **kw)

    def beside():
        calls.clear()
        b = strategies._CoverBeside(dag, budget, Clock(60), cpu0=-math.inf, delay=0.0)
        b.wait(None)
        return b

    monkeypatch.setattr(coverbound, "cover_bound", spy)
    one = real(dag, budget, strategies._highs(), time_limit=60, threads=1, depth=1)
    two = real(dag, budget, strategies._CancellableMip(strategies._highs(), threading.Event(), presolve=False),
               time_limit=60, threads=1, depth=2)
    b = beside()
    assert calls == [(1, True), (2, False)] and "depth 2: optimal" in b.note, (calls, b.note)
    assert b.bound() == pytest.approx(max(one.bound, two.bound))
    monkeypatch.setattr(strategies, "COVER_BESIDE_DEEP", 1)
    b = beside()
    assert calls == [(1, True)] and "depth 2" not in b.note and b.bound() == pytest.approx(one.bound)


def test_waiting_for_the_covering_milp_beside_cpsat_starts_it_before_its_delay() -> None:
    """``wait`` starts a ``_CoverBeside`` whose CPU delay has not passed (CP-SAT has ended by then): before, an idle
    process never reached the delay's CPU seconds, and checkmate without a time limit waited minutes for it (a test
    with CP-SAT stubbed out took 246 s, 243 of them in that wait)."""
    from _milp_dags import layered_dag

    from remc.backends.strategies import _CoverBeside
    from remc.passes.solver_api import Clock

    dag = layered_dag(40, 5, 11)
    budget = math.ceil(checkpoint_all(dag).peak(dag) * 0.8)
    beside = _CoverBeside(dag, budget, Clock(None), cpu0=math.inf, delay=1.0)  # (its CPU delay never passes)
    beside.wait(60.0)  # (a timeout, not a measurement: it ends in well under a second; before, never)
    done = beside.done()
    beside.stop()
    assert done and beside.started and math.isfinite(beside.bound())


def test_a_small_covering_milp_beside_cpsat_is_solved_in_this_process(monkeypatch) -> None:
    """Up to COVER_HERE_COLUMNS columns the covering MILP beside CP-SAT runs in this process (no child process: its
    start took 0.3-0.4 s of CPU from CP-SAT), with the bound it has in the child; above them in the child as before."""
    from _milp_dags import layered_dag

    import remc.backends.highs as highs
    import remc.backends.strategies as strategies
    from remc.passes.coverbound import cover_bound
    from remc.passes.solver_api import Clock

    dag = layered_dag(40, 5, 11)
    budget = math.ceil(checkpoint_all(dag).peak(dag) * 0.8)
    alone = cover_bound(dag, budget, highs.HighsBackend(), time_limit=60, threads=1, depth=1)  # (in the child)
    children: list[int] = []
    isolated = highs._solve_isolated
    monkeypatch.setattr(highs, "_solve_isolated", lambda *a, **k: children.append(1) or isolated(*a, **k))
    monkeypatch.setattr(strategies, "COVER_BESIDE_DEEP", 1)  # (the depth-1 model alone)
    beside = strategies._CoverBeside(dag, budget, Clock(60), cpu0=-math.inf, delay=0.0)
    beside.wait(None)
    assert beside.started and beside.bound() == pytest.approx(alone.bound) and children == []
    monkeypatch.setattr(strategies, "COVER_HERE_COLUMNS", 0)
    beside = strategies._CoverBeside(dag, budget, Clock(60), cpu0=-math.inf, delay=0.0)
    beside.wait(None)
    assert beside.bound() == pytest.approx(alone.bound) and children == [1]


def test_checkmate_proves_with_the_covering_milp_first_without_importing_ortools(monkeypatch) -> None:
    """COVER_FIRST (backends/strategies.py): on a small graph whose stage search schedule the covering MILP proves,
    checkmate returns it as optimal without CP-SAT (OR-Tools never imported: 0.15 s of CPU on VGG16/19); the same
    cost as with CP-SAT."""
    import subprocess
    import sys

    import remc.backends.strategies as strategies
    from remc.backends.strategies import make_options, solve

    code = ("import sys, math, numpy as np; sys.path.insert(0, 'tests'); from _milp_dags import training_graph; "
            "from remc.ir.schedule import checkpoint_all; from remc.backends.strategies import make_options, solve; "
            "d = training_graph(8, np.random.default_rng(0)); b = math.ceil(checkpoint_all(d).peak(d) * 0.9); "
            "s = solve('checkmate', d, b, make_options('checkmate', time_limit=20)); "
            "print(s.report.status, s.cost(d), any(m.startswith('ortools') for m in sys.modules)); "
            "print(s.report.extras['cp_sat'])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         cwd=str(__import__("pathlib").Path(__file__).resolve().parents[1])).stdout.splitlines()
    status, cost, imported = out[0].split()
    assert status == "optimal" and imported == "False" and "covering MILP" in out[1]
    from _milp_dags import training_graph
    dag = training_graph(8, np.random.default_rng(0))
    monkeypatch.setattr(strategies, "COVER_FIRST", False)
    alone = solve("checkmate", dag, math.ceil(checkpoint_all(dag).peak(dag) * 0.9),
                  make_options("checkmate", time_limit=20))
    assert alone.report.status == "optimal" and alone.cost(dag) == pytest.approx(float(cost))
    assert "covering MILP" not in alone.report.extras["cp_sat"]


def test_checkmate_proves_with_the_kept_parent_rows_of_the_covering_milp_first(monkeypatch) -> None:
    """The covering MILP run first (COVER_FIRST) adds its kept-parent rows lazily (passes/coverbound.py COVER_KEPT):
    on this training graph its bound without them (42) is below the optimum (45), which the stage search finds; with
    them it proves it and CP-SAT is not run (VGG19 of Moccasin's set at 0.8 likewise); without them CP-SAT proves
    the same cost."""
    from _milp_dags import training_graph

    import remc.passes.coverbound as coverbound
    from remc.backends.strategies import make_options, solve

    rng = np.random.default_rng(6)
    dag = training_graph(int(rng.integers(4, 7)), rng)
    s = solve("checkmate", dag, 24, make_options("checkmate", time_limit=20))
    assert s.report.status == "optimal" and s.cost(dag) == 45.0
    assert s.report.extras["cp_sat"].startswith("not run (the covering MILP's bound proves")
    monkeypatch.setattr(coverbound, "_kept_violated", lambda cm, x: np.zeros(len(cm.kept_rows[0]), bool))
    alone = solve("checkmate", dag, 24, make_options("checkmate", time_limit=20))
    assert alone.report.status == "optimal" and alone.cost(dag) == 45.0
    assert not alone.report.extras["cp_sat"].startswith("not run")


def test_checkmate_reads_approx_shares_without_importing_approx() -> None:
    """The stage search from nothing's share reads approx's shares from passes/options.py: a solve that CP-SAT proves
    imports neither approx nor what it imports (0.03-0.06 s of a VGG19 process), nor numpy.ma."""
    import subprocess
    import sys

    code = ("import sys; import remc.backends.strategies as s; s._first_stage_share(); "
            "import remc.passes.approx as a, remc.passes.options as o; "
            "print(a.STAGE_SEARCH_SHARE == o.STAGE_SEARCH_SHARE, a.FEASIBLE_SHARE == o.FEASIBLE_SHARE)")
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split() \
        == ["True", "True"]
    code = ("import sys; import remc.backends.strategies as s; s._first_stage_share(); "
            "print('remc.passes.approx' in sys.modules)")
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip() \
        == "False"


def test_the_stall_is_counted_on_the_search_clock_per_worker(monkeypatch) -> None:
    """The C=2 model's stall is measured on ``_search_clock`` (this process' CPU seconds per CP-SAT worker), not on
    the wall clock: under load the wall-clock stall stopped MobileNet's C=2 model at its hint (results/pub14). Here a
    clock that never advances: the stall (0) never ends the search, which ends proven, with the worker count
    passed to the clock."""
    import remc.backends.cpsat as cpsat

    made: list[int] = []

    def frozen(workers: int):
        made.append(workers)
        return lambda: 0.0

    monkeypatch.setattr(cpsat, "_search_clock", frozen)
    dag = training_graph(7, np.random.default_rng(8), skips=((0, 4), (2, 6)), workspace=True)
    budget = int(0.8 * checkpoint_all(dag).peak(dag))
    hint = solve_approx(dag, budget)
    s = solve_cpsat(dag, budget, CpSatOptions(copies=2, threads=1, time_limit=60, stall=0.0), hint=hint)
    assert made == [1] and "OPTIMAL" in s.report["solver"]
    assert not check(dag, s.R, s.S) and s.peak(dag) <= budget and s.cost(dag) <= hint.cost(dag) + 1e-9


def test_cover_first_stopped_by_its_time_limit_leaves_the_covering_milp_beside_cp_sat(monkeypatch) -> None:
    """``_cover_first`` (backends/strategies.py): a covering MILP stopped by its time limit gives its bound but does
    not count as solved, so checkmate runs it again beside CP-SAT (with the time CP-SAT leaves); solved, it does."""
    import remc.backends.strategies as strategies
    import remc.passes.coverbound as coverbound
    from remc.passes.coverbound import CoverBound
    from remc.passes.solver_api import Clock

    dag = training_graph(5, np.random.default_rng(0))
    budget = math.ceil(checkpoint_all(dag).peak(dag) * 0.9)
    for status, solved in (("time_limit", False), ("optimal", True)):
        monkeypatch.setattr(coverbound, "cover_bound", lambda *a, st=status, **k: CoverBound(7.0, st, 1.0, 10))
        notes: dict[str, str] = {}
        assert strategies._cover_first(dag, budget, Clock(None), notes) == (7.0, solved, None)


def test_checkmate_runs_the_covering_milp_first_on_graphs_above_100_units() -> None:
    """COVER_FIRST_UNITS (backends/strategies.py) is 400 since the covering MILP's pairs are merged
    (passes/coverbound.py COVER_MERGE): on a 126-unit training graph checkmate solves it before CP-SAT, in this
    process (at 100 units it went beside CP-SAT, to HiGHS' child process)."""
    from remc.backends.strategies import make_options, solve

    dag = training_graph(62, np.random.default_rng(3), skips=((3, 20), (25, 50)))
    assert dag.n > 100
    s = solve("checkmate", dag, math.ceil(checkpoint_all(dag).peak(dag) * 0.8), make_options("checkmate", time_limit=30))
    assert s.report.extras["cover_bound"].startswith("before CP-SAT")


def test_checkmate_takes_the_covering_milps_solution_as_its_schedule() -> None:
    """COVER_DECODE (backends/strategies.py): the covering MILP's solution before CP-SAT, read as a schedule
    (passes/coverbound.py ``cover_start``, ``cover_schedule``), fits here and costs its bound (126), where the stage
    search stops at 127: checkmate returns it, proven by that bound, without running CP-SAT (without the decoding
    CP-SAT runs from 127)."""
    from remc.backends.highs import HighsBackend
    from remc.backends.strategies import make_options, solve
    from remc.passes.coverbound import cover_bound, cover_schedule

    dag = training_graph(20, np.random.default_rng(3), skips=((3, 12), (8, 18)), workspace=True)
    budget = math.ceil(checkpoint_all(dag).peak(dag) * 0.7)
    cb = cover_bound(dag, budget, HighsBackend(), time_limit=None, threads=1, depth=1, max_columns=None, kept=True,
                     start=True)
    decoded = cover_schedule(dag, budget, cb.start)
    assert decoded is not None and not check(dag, decoded.R, decoded.S) and decoded.peak(dag) <= budget
    assert decoded.cost(dag) == pytest.approx(cb.bound, abs=1e-4)
    s = solve("checkmate", dag, budget, make_options("checkmate", time_limit=30))
    assert s.cost(dag) == pytest.approx(decoded.cost(dag)) and s.peak(dag) <= budget
    assert "cover_schedule" in s.report.extras and s.report.extras["cp_sat"].startswith("not run")


def test_checkmate_skips_the_stage_search_where_the_covering_milps_schedule_proves_itself(monkeypatch) -> None:
    """COVER_BEFORE_STAGE (backends/strategies.py): the covering MILP runs before the stage search from nothing;
    where its solution read as a schedule fits and costs its bound (here 126), checkmate returns it without running
    the stage search (nor the baselines, nor CP-SAT). Without it the stage search runs first (and stops at 127)."""
    import remc.backends.strategies as strategies
    from remc.backends.strategies import make_options, solve

    def no_stage_search(*a, **k):
        raise AssertionError("the stage search ran")

    monkeypatch.setattr(strategies, "_stage_hint", no_stage_search)
    monkeypatch.setattr(strategies, "best_baseline", no_stage_search)
    dag = training_graph(20, np.random.default_rng(3), skips=((3, 12), (8, 18)), workspace=True)
    budget = math.ceil(checkpoint_all(dag).peak(dag) * 0.7)
    s = solve("checkmate", dag, budget, make_options("checkmate", time_limit=30))
    assert s.peak(dag) <= budget and not check(dag, s.R, s.S) and s.report.status == "optimal"
    assert s.cost(dag) == pytest.approx(126.0)
    assert "stage_search" not in s.report.extras and s.report.extras["cp_sat"].startswith("not run")


def test_the_covering_milp_solved_in_this_process_runs_without_highs_presolve(monkeypatch) -> None:
    """COVER_HERE_PRESOLVE (backends/strategies.py): ``_CancellableMip`` solves a covering MILP of at most
    COVER_HERE_COLUMNS columns in this process with HiGHS' MIP presolve off (on ResNet50 of Moccasin's set at 0.8
    the presolve was 2/3 of the solve's CPU and removed 23 of 646 columns); the bound is the same."""
    import threading

    import remc.backends.highs as highs
    import remc.backends.strategies as strategies
    from remc.passes.coverbound import cover_bound

    seen: list[str] = []
    real = highs._run_highs

    def spy(h, *a, **k):
        seen.append(h.getOptionValue("presolve")[1])
        return real(h, *a, **k)

    monkeypatch.setattr(highs, "_run_highs", spy)
    dag = training_graph(20, np.random.default_rng(3), skips=((3, 12), (8, 18)), workspace=True)
    budget = math.ceil(checkpoint_all(dag).peak(dag) * 0.7)
    cb = cover_bound(dag, budget, strategies._CancellableMip(highs.HighsBackend(), threading.Event()), time_limit=30,
                     threads=1, depth=1, max_columns=strategies.COVER_HERE_COLUMNS, kept=True)
    assert seen and set(seen) == {"off"}
    assert cb.bound == pytest.approx(126.0, abs=1e-4)


def test_the_c2_models_least_stall_grows_with_the_graph(monkeypatch) -> None:
    """STALL_MIN_PER_UNIT (backends/cpsat.py): a stalled search of a larger graph is stopped only after
    ``stall_min(n)`` seconds without a better solution (Moccasin's n=250 at 0.9: the C=2 model's first better
    schedule came 2.1 s after its hint, past STALL_MIN); on small graphs STALL_MIN, as before."""
    import remc.backends.cpsat as cpsat

    assert cpsat.stall_min(100) == cpsat.STALL_MIN and cpsat.stall_min(250) > 2.1
    seen: list[float] = []
    real = cpsat._solve_watched

    def spy(*a, **k):
        seen.append(k["least"] if "least" in k else a[6] if len(a) > 6 else cpsat.STALL_MIN)
        return real(*a, **k)

    monkeypatch.setattr(cpsat, "_solve_watched", spy)
    monkeypatch.setattr(cpsat, "STALL_MIN_PER_UNIT", 1.0)
    dag = training_graph(6, np.random.default_rng(3), skips=((0, 3), (1, 5)))
    budget = math.ceil(checkpoint_all(dag).peak(dag) * 0.9)
    s = solve_cpsat(dag, budget, CpSatOptions(copies=3, threads=1, time_limit=30, stall=0.5))
    assert not check(dag, s.R, s.S) and s.peak(dag) <= budget
    assert seen == [float(dag.n)]
