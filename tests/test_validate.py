"""The independent plan simulator: hand-computed peaks, agreement with the schedule's U accounting, and
rejection of broken plans with messages that name the statement."""
from __future__ import annotations

import dataclasses
import importlib.util
import inspect
from pathlib import Path

import numpy as np
import pytest

import remc.passes.validate as validate_module
from remc.ir.dag import DAG
from remc.ir.errors import PlanError
from remc.ir.plan import Compute, Deallocate, Plan, parse_plan
from remc.ir.schedule import checkpoint_all, memory_profile
from remc.passes.plangen import generate_plan
from remc.passes.validate import simulate, validate

PLANS = Path(__file__).parent / "plans"
_spec = importlib.util.spec_from_file_location("plan_graphs", PLANS / "graphs.py")
graphs = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(graphs)


def both(dag: DAG, sched) -> tuple[int, int]:
    """Simulated peaks of the late (Algorithm 1 + stage-end frees) and the early-free plan."""
    late = validate(generate_plan(dag, sched, early_free=False), dag).peak
    early = validate(generate_plan(dag, sched), dag).peak
    return late, early


# ------------------------------------------------------------------------------- hand-computed peaks

def test_chain_checkpoint_all_peak() -> None:
    """Chain f1(10) f2(20) f3(30) loss(1) g3(30) g2(20) g1(10), constant 100, every unit computed once.
    Stage 1: 100 + f1 10 = 110. Stage 2: 110 + f2 20 = 130. Stage 3: 130 + f3 30 = 160.
    Stage 4: 160 + loss 1 = 161. Stage 5: 161 + g3 30 = 191, then f3 and loss are freed: 160.
    Stage 6: 160 + g2 20 = 180, then f2 and g3 are freed: 130. Stage 7: 130 + g1 10 = 140. Peak 191, while
    g3 runs (stage 5, statement 1), with f1, f2, f3, loss, g3 live; cost 7, no recomputation."""
    dag = graphs.chain()
    sim = validate(generate_plan(dag, checkpoint_all(dag)), dag)
    assert (sim.peak, sim.cost, sim.recomputes) == (191, 7.0, {})
    assert (sim.peak_stmt, sim.peak_where) == (4, "stage 5, statement 1")
    assert sim.live_at_peak == ((0, "f1"), (1, "f2"), (2, "f3"), (3, "loss"), (4, "g3"))
    assert (sim.computes, sim.deallocations, sim.live_at_end) == (7, 7, ())
    assert both(dag, checkpoint_all(dag)) == (191, 191)


def test_chain_recompute_peak() -> None:
    """Keep f1 throughout, never f2 (chain.recompute.plan). Stage 1: 100 + f1 10 = 110.
    Stage 2: 110 + f2 20 = 130, f2 freed (unused, not kept): 110. Stage 3: 110 + f2 20 = 130, + f3 30 = 160,
    f2 freed: 140. Stage 4: 140 + loss 1 = 141. Stage 5: 141 + g3 30 = 171, f3 and loss freed: 140.
    Stage 6: 140 + f2 20 = 160, + g2 20 = 180, f2 and g3 freed: 130. Stage 7: 130 + g1 10 = 140.
    Peak 180 (stage 6, statement 2: g2) instead of 191; cost 9 = 7 + two recomputations of f2."""
    dag = graphs.chain()
    plan = parse_plan((PLANS / "chain.recompute.plan").read_text(encoding="utf-8"))
    sim = validate(plan, dag)
    assert (sim.peak, sim.cost, sim.recomputes) == (180, 9.0, {"f2": 2})
    assert sim.peak_where == "stage 6, statement 2"
    assert sim.live_at_peak == ((0, "f1"), (5, "g3"), (6, "f2"), (7, "g2"))
    assert both(dag, graphs.chain_recompute()) == (180, 180)
    assert validate(plan, dag, budget=180).peak == 180


def test_residual_block_peaks() -> None:
    """conv1 a(8), conv2 b(16, workspace 4), Add s(8), loss(1), grad/Add gs(8), grad/conv2 gb(16),
    grad/conv1 ga(8); constant 64. Checkpoint all: stage 1: 64 + 8 = 72. Stage 2: 72 + 16 = 88, plus b's
    workspace 4 while it runs: 92. Stage 3: 88 + 8 = 96. Stage 4: 96 + 1 = 97. Stage 5: 97 + 8 = 105, s and
    loss freed: 96. Stage 6: 96 + gb 16 = 112, b freed: 96. Stage 7: 96 + 8 = 104. Peak 112 (gb).
    With s also kept (spuriously) into stage 6: stage 5 frees only loss (104), stage 6 starts at
    64 + a 8 + b 16 + s 8 + gs 8 = 104 and gb makes 120 = the late plan's peak. The early plan frees s right
    after its last use in stage 5, so stage 6 is 96 + 16 = 112 again. Cost 4+4+1+1+1+8+8 = 27."""
    dag = graphs.residual()
    sim = validate(generate_plan(dag, checkpoint_all(dag)), dag)
    assert (sim.peak, sim.cost, sim.peak_where) == (112, 27.0, "stage 6, statement 1")
    assert both(dag, graphs.residual_spurious()) == (120, 112)
    assert graphs.residual_spurious().peak(dag) == 120


def test_residual_workspace_counts_only_while_running() -> None:
    """Raise conv2's workspace to 40: stage 2 then peaks at 72 + 16 + 40 = 128 > 112, and only there."""
    base = graphs.residual()
    dag = DAG(base.names, base.cost, base.mem, base.edges, base.constant, [0, 40, 0, 0, 0, 0, 0], ops=base.ops)
    sim = validate(generate_plan(dag, checkpoint_all(dag)), dag)
    assert (sim.peak, sim.peak_where) == (128, "stage 2, statement 1")
    assert sim.live_at_peak == ((0, "/block/conv1/Conv"), (1, "/block/conv2/Conv"))


def test_unet_long_skip_peaks() -> None:
    """e1(32) e2(8) m(8) d1(32, uses m and the skip e1) loss(1) gd1(32) gm(8) ge2(8) ge1(32), constant 16.
    Checkpoint all: 16+32 = 48, +8 = 56, +8 = 64, +32 = 96, +1 = 97, +gd1 32 = 129 (peak; then d1, loss
    freed: 96), +gm 8 = 104 (m freed: 96), +ge2 8 = 104 (e2, gm freed: 88), +ge1 32 = 120.
    Keeping only the skip e1 (unet.recompute.plan): 48; 56; 64 (e2 freed: 56); 88 (m freed: 80); 81;
    113 (loss, d1 freed: 80); stage 7 recomputes e2 88, m 96 (e2 freed: 88), gm 96 (m freed: 88);
    stage 8 recomputes e2 96, ge2 104 (e2, gm freed: 88); stage 9: ge1 88 + 32 = 120 = peak.
    Cost 9 + 3 recomputations (e2 twice, m once) = 12."""
    dag = graphs.unet()
    sim = validate(generate_plan(dag, checkpoint_all(dag)), dag)
    assert (sim.peak, sim.peak_where) == (129, "stage 6, statement 1")
    plan = parse_plan((PLANS / "unet.recompute.plan").read_text(encoding="utf-8"))
    sim = validate(plan, dag)
    assert (sim.peak, sim.cost, sim.recomputes, sim.peak_where) == (120, 12.0, {"e2": 2, "m": 1},
                                                                    "stage 9, statement 1")
    assert sim.live_at_peak == ((0, "e1"), (5, "gd1"), (10, "ge2"), (11, "ge1"))
    assert both(dag, graphs.unet_recompute()) == (120, 120)


# ------------------------------------------------------------------ agreement with the U accounting

def test_late_plan_peak_equals_memory_profile_and_early_is_no_higher() -> None:
    rng = np.random.default_rng(11)
    lower = cases = 0
    for trial in range(150):
        n = int(rng.integers(1, 14))
        dag = graphs.random_dag(rng, n, float(rng.random()) * 0.5, no_recompute=trial % 2 == 0)
        scheds = [checkpoint_all(dag)] + [s for extra in (False, not dag.no_recompute.any())
                                          if (s := graphs.random_schedule(rng, dag, extra_r=extra))]
        for sched in scheds:
            late = validate(generate_plan(dag, sched, early_free=False), dag)
            early = validate(generate_plan(dag, sched), dag)
            assert late.peak == int(memory_profile(dag, sched.R, sched.S).max())
            assert early.peak <= late.peak
            assert late.cost == pytest.approx(sched.cost(dag)) and early.cost == late.cost
            want = {dag.names[v]: int(k) for v, k in enumerate(sched.recomputes()) if k > 0}
            assert late.recomputes == early.recomputes == want
            assert late.live_at_end == early.live_at_end == ()
            lower += early.peak < late.peak
            cases += 1
    assert cases > 300 and lower > 20  # early freeing matters on some random schedules


# ---------------------------------------------------------------------------------------- rejections

@pytest.mark.parametrize("path", sorted((PLANS / "invalid").glob("*.plan")), ids=lambda p: p.stem)
def test_invalid_plan_message(path: Path) -> None:
    """Each file parses but fails validation against its graph (named by the file's prefix) with the exact
    message in its .err file."""
    dag = getattr(graphs, path.stem.split("_")[0])()
    plan = parse_plan(path.read_text(encoding="utf-8"))
    expected = path.with_suffix(".err").read_text(encoding="utf-8").rstrip("\n")
    with pytest.raises(PlanError) as err:
        validate(plan, dag)
    assert str(err.value) == expected


def test_invalid_corpus_covers_the_error_kinds() -> None:
    names = {p.stem for p in (PLANS / "invalid").glob("*.plan")}
    assert {"chain_use_after_free", "chain_not_computed_yet", "chain_missing_input", "chain_double_free",
            "chain_undefined_register", "chain_never_computed", "chain_over_budget"} <= names


def chain_plan() -> Plan:
    return generate_plan(graphs.chain(), graphs.chain_recompute(), graph_name="chain")


def test_budget_argument() -> None:
    """The recompute plan peaks at 180 (test_chain_recompute_peak): 179 is rejected where g2 runs."""
    plan = dataclasses.replace(chain_plan(), budget=None)
    assert simulate(plan, graphs.chain(), budget=180).peak == 180
    with pytest.raises(PlanError) as err:
        simulate(plan, graphs.chain(), budget=179)
    assert str(err.value) == ('stage 6, statement 2 (%7 = compute "g2"): memory in use 180 B exceeds the budget '
                              '179 B (live: constant 100 B, %5 "g3" 30 B, %6 "f2" 20 B, %7 "g2" 20 B and 1 more)')


def test_big_sizes_are_shown_with_bytes() -> None:
    base = graphs.chain()
    dag = DAG(base.names, base.cost, base.mem << 20, base.edges, base.constant << 20, ops=base.ops)
    with pytest.raises(PlanError, match=r"memory in use 180\.0 MiB \(188743680 bytes\) exceeds the budget "
                                        r"175\.0 MiB \(183500800 bytes\)"):
        validate(generate_plan(dag, graphs.chain_recompute()), dag, budget=175 << 20)


def edited(plan: Plan, stage: int, stmts: list) -> Plan:
    stages = [list(s) for s in plan.stages]
    stages[stage] = stmts
    return dataclasses.replace(plan, stages=stages)


def test_redefined_register() -> None:
    plan = chain_plan()
    bad = edited(plan, 3, [Compute(3, "loss")])
    with pytest.raises(PlanError, match=r'^stage 4, statement 1 \(%3 = compute "loss"\): register %3 is already '
                                        r"defined \(at stage 3, statement 2\)$"):
        validate(bad, graphs.chain())


def test_unit_missing_from_the_table() -> None:
    bad = edited(chain_plan(), 3, [Compute(4, "lost")])
    with pytest.raises(PlanError, match=r'^stage 4, statement 1 \(%4 = compute "lost"\): unit "lost" is not in '
                                        r"the unit table$"):
        simulate(bad)


def test_use_of_a_value_kept_only_by_the_schedule() -> None:
    """Drop the deallocation-free stage 5 compute of g3: g2 in stage 6 uses g3, never computed."""
    plan = chain_plan()
    bad = edited(plan, 4, [Deallocate(3), Deallocate(4)])
    with pytest.raises(PlanError, match=r'^stage 6, statement 2 \(%7 = compute "g2"\): uses "g3" which is not '
                                        r"resident \(not computed yet\)$"):
        validate(bad, graphs.chain())


def test_without_a_dag_only_registers_and_memory_are_checked() -> None:
    """chain_missing_input computes g2 without f2: only the DAG knows that g2 needs f2."""
    plan = parse_plan((PLANS / "invalid" / "chain_missing_input.plan").read_text(encoding="utf-8"))
    sim = simulate(plan)
    assert sim.recomputes == {"f2": 1}
    with pytest.raises(PlanError, match="uses \"f2\" which is not resident"):
        simulate(plan, graphs.chain())
    double = parse_plan((PLANS / "invalid" / "chain_double_free.plan").read_text(encoding="utf-8"))
    with pytest.raises(PlanError, match="already deallocated"):
        simulate(double)


@pytest.mark.parametrize("change, message", [
    (lambda d: DAG(d.names[:-1], d.cost[:-1], d.mem[:-1], d.edges[:-1]), "the plan has 7 units, the graph 6"),
    (lambda d: DAG(d.names, d.cost, d.mem, d.edges, 99), "constant 100 in the plan, 99 in the graph"),
    (lambda d: DAG(d.names[:2] + ("F3",) + d.names[3:], d.cost, d.mem, d.edges, d.constant),
     'unit 2 is "f3" in the plan but "F3" in the graph'),
    (lambda d: DAG(d.names, d.cost, d.mem, d.edges, d.constant, workspace=[0, 0, 0, 0, 0, 0, 5]),
     'unit "g1": ws 0 in the plan, 5 in the graph'),
    (lambda d: DAG(d.names, d.cost * 2, d.mem, d.edges, d.constant), 'unit "f1": cost 1.0 in the plan, 2.0'),
])
def test_plan_of_another_graph(change, message: str) -> None:
    with pytest.raises(PlanError, match="^the plan does not belong to this graph: " + message.replace("(", r"\(")):
        validate(chain_plan(), change(graphs.chain()))


def test_validator_is_independent_of_the_schedule_accounting() -> None:
    """The simulator must not reuse ir.schedule (free_matrix, memory_profile): it replays the plan only."""
    source = inspect.getsource(validate_module)
    assert "schedule" not in source.replace("the schedule's memory accounting (``ir.schedule``)", "")


def test_duplicate_unit_in_a_table_built_in_code() -> None:
    plan = chain_plan()
    bad = dataclasses.replace(plan, units=plan.units + (plan.units[2],))
    with pytest.raises(PlanError, match='^the unit table lists "f3" twice$'):
        simulate(bad)


def test_plan_solved_above_its_budget_is_held_to_its_solver_budget() -> None:
    """A compile's fit may solve above the budget in remc's live-bytes model (which counts outputs ONNX Runtime
    does not allocate) while the device check keeps to the budget: the written plan records ``solver_budget``,
    and the simulator holds its live bytes to that, not to the budget (the chain's checkpoint-all peak is 191:
    a plan with budget 180 and solver budget 191 validates; with solver budget 190, or none, it does not)."""
    dag = graphs.chain()
    plan = generate_plan(dag, checkpoint_all(dag))
    ok = dataclasses.replace(plan, budget=180, report={"solver_budget": 191})
    assert ok.live_budget == 191
    assert validate(ok, dag).peak == 191
    for report in ({"solver_budget": 190}, {}, {"solver_budget": 150}):
        low = dataclasses.replace(plan, budget=180, report=report)
        with pytest.raises(PlanError, match="exceeds the plan's"):
            validate(low, dag)
    assert dataclasses.replace(plan, budget=180, report={"solver_budget": 150}).live_budget == 180
