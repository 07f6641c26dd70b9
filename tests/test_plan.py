"""Plan IR text (printer, parser, located errors) and plan generation from schedules (Algorithm 1)."""
from __future__ import annotations

import dataclasses
import importlib.util
import math
import re
from pathlib import Path

import numpy as np
import pytest

from remc.ir.errors import PlanError
from remc.ir.plan import Compute, Deallocate, Plan, Unit, parse_plan, print_plan
from remc.ir.schedule import Schedule, checkpoint_all, free_matrix
from remc.passes.plangen import generate_plan, unit_table

PLANS = Path(__file__).parent / "plans"
_spec = importlib.util.spec_from_file_location("plan_graphs", PLANS / "graphs.py")
graphs = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(graphs)


def round_trip(plan: Plan) -> str:
    """Print, parse, print: the texts and the structures must agree."""
    text = print_plan(plan)
    again = parse_plan(text)
    assert again == plan
    assert print_plan(again) == text
    return text


# ------------------------------------------------------------------------------------ golden text files

@pytest.mark.parametrize("name", sorted(graphs.golden()))
def test_golden_plan_text(name: str) -> None:
    """generate_plan prints exactly the reviewed file (regenerate with python tests/plans/graphs.py)."""
    dag, sched, kw = graphs.golden()[name]
    plan = generate_plan(dag, sched, **kw)
    expected = (PLANS / f"{name}.plan").read_text(encoding="utf-8")
    assert print_plan(plan) == expected
    assert parse_plan(expected) == plan


@pytest.mark.parametrize("path", sorted(PLANS.glob("*.plan")), ids=lambda p: p.name)
def test_corpus_round_trip(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    assert print_plan(parse_plan(text)) == text


@pytest.mark.parametrize("path", sorted((PLANS / "bad").glob("*.plan")), ids=lambda p: p.stem)
def test_bad_plan_message(path: Path) -> None:
    """Each bad file fails with the exact message (location, line, caret, what was expected) in its .err."""
    expected = path.with_suffix(".err").read_text(encoding="utf-8").rstrip("\n")
    with pytest.raises(PlanError) as err:
        parse_plan(path.read_text(encoding="utf-8"), source=f"bad/{path.name}")
    assert str(err.value) == expected


def test_bad_corpus_covers_the_error_kinds() -> None:
    names = {p.stem for p in (PLANS / "bad").glob("*.plan")}
    assert {"typo_compute", "unknown_unit", "duplicate_register", "stage_order", "unit_count",
            "unterminated_string", "truncated_header"} <= names
    assert all(p.with_suffix(".err").exists() for p in (PLANS / "bad").glob("*.plan"))


def test_parse_error_caret_is_under_the_column() -> None:
    text = print_plan(generate_plan(graphs.chain(), checkpoint_all(graphs.chain())))
    bad = text.replace('%3 = compute "loss"', '%3 = compute @"loss"')
    with pytest.raises(PlanError) as err:
        parse_plan(bad, source="x.plan")
    first, src, caret = str(err.value).split("\n")
    assert first.startswith("x.plan:25:16: unexpected character '@'; expected a quoted string")
    assert src.endswith('%3 = compute @"loss"  # Loss, 1 B')
    assert caret.index("^") == src.index("@")


def test_parse_accepts_missing_final_newline_and_blank_comment_lines() -> None:
    text = print_plan(generate_plan(graphs.chain(), checkpoint_all(graphs.chain())))
    edited = text.replace("stage 2:\n", "# a note\n\n   # another\nstage 2:\n").rstrip("\n")
    assert parse_plan(edited) == parse_plan(text)


# -------------------------------------------------------------------------------- printer and parser

def odd_plan() -> Plan:
    units = (Unit("/layer1/layer1.0/conv1/Conv", ("/layer1/layer1.0/conv1/Conv",), 12_897_484, 0, 1.5e9, "Conv"),
             Unit('we"ird\\name', ("a/b", 'c"d', "e\\f", "tab\there", "nl\nx", "ünï"), 0, 4096, 0.0, ""),
             Unit("coarse", (), 1 << 33, 7, 2.5e-05, "Conv+Relu"))
    stages = [[Compute(0, units[0].name)], [Compute(7, units[1].name), Deallocate(0)],
              [Compute(3, units[2].name), Compute(4, units[0].name), Deallocate(3), Deallocate(99)], []]
    report = {"status": "time limit", "objective": 1.25e9, "bound": 1e16, "gap": math.inf, "neg": -math.inf,
              "nodes": 12, "optimal": False, "warm": True, "incumbent": None, "x.y-z": np.float64(0.5),
              "count": np.int64(3)}
    return Plan('g "q" \\ /', 6 << 30, 123, "checkmate-milp", "coarse", units, stages, report)


def test_printer_round_trips_escapes_report_values_and_empty_stages() -> None:
    text = round_trip(odd_plan())
    assert 'plan "g \\"q\\" \\\\ /"' in text
    assert re.search(r"^budget 6442450944 +# 6\.0 GiB$", text, re.M)
    assert "report gap=inf" in text and "report incumbent=none" in text and "report optimal=false" in text
    assert 'members=["a/b", "c\\"d", "e\\\\f", "tab\\there", "nl\\nx", "ünï"]' in text
    assert "members=[]" in text
    assert text.endswith("stage 4:\n")


def test_printer_comments_come_from_the_unit_table() -> None:
    lines = print_plan(odd_plan()).splitlines()
    body = lines[lines.index("stage 1:"):]
    assert body[1].endswith("# Conv, 12.3 MiB")
    assert body[3].endswith("# 0 B, ws 4.0 KiB")
    assert body[4].endswith('# "/layer1/layer1.0/conv1/Conv", 12.3 MiB')
    assert body[7].endswith("# Conv, 12.3 MiB, recompute 1")
    assert body[9].endswith("# undefined register")


def test_nan_report_value_round_trips_as_text() -> None:
    plan = Plan("g", None, 0, "s", "fine", (Unit("a", ("a",), 1, 0, 1.0),), [[Compute(0, "a")]],
                {"gap": math.nan})
    text = print_plan(plan)
    assert "report gap=nan" in text
    assert math.isnan(parse_plan(text).report["gap"]) and print_plan(parse_plan(text)) == text


@pytest.mark.parametrize("report, message", [({"xs": [1, 2]}, "report entry 'xs': list value"),
                                             ({"bad key": 1}, "report key 'bad key' is not an identifier")])
def test_printer_rejects_unprintable_reports(report: dict, message: str) -> None:
    plan = Plan("g", None, 0, "s", "fine", (), [], report)
    with pytest.raises(PlanError, match=message):
        print_plan(plan)


def test_generate_plan_keeps_scalar_report_entries() -> None:
    """Solver details that are not scalars (per-epsilon trial lists) stay in the schedule's report."""
    sched = checkpoint_all(graphs.chain())
    sched.report = {"status": "ok", "trace": [1.0, 2.0], "gap": np.float64(0.5)}
    plan = generate_plan(graphs.chain(), sched)
    assert plan.report == {"status": "ok", "gap": 0.5}
    assert parse_plan(print_plan(plan)).report == plan.report


def test_plan_text_has_no_timings() -> None:
    """Solve seconds and other timings differ from run to run: the plan leaves them out, so one schedule
    gives one plan text."""
    texts = []
    for seconds in (0.25, 7.5):
        sched = checkpoint_all(graphs.chain())
        sched.report = {"status": "optimal", "seconds": seconds, "refine_seconds": seconds / 2,
                        "solver_seconds": seconds, "elapsed": seconds, "refine_evals": 12}
        plan = generate_plan(graphs.chain(), sched)
        assert plan.report == {"status": "optimal", "refine_evals": 12}
        texts.append(print_plan(plan))
    assert texts[0] == texts[1]


def test_report_and_header_fields_come_from_arguments_and_schedule() -> None:
    sched = checkpoint_all(graphs.residual())
    sched.report = {"status": "optimal", "objective": np.float64(27.0), "seconds": 0.25}
    plan = generate_plan(graphs.residual(), sched, graph_name="res", budget=120, granularity="coarse")
    assert (plan.graph, plan.budget, plan.constant, plan.strategy, plan.granularity) == \
        ("res", 120, 64, "checkpoint-all", "coarse")
    assert plan.report == {"status": "optimal", "objective": 27.0}  # timings stay in the schedule's report
    assert type(plan.report["objective"]) is float
    assert plan.units == unit_table(graphs.residual())
    assert plan.units[1] == Unit("/block/conv2/Conv", ("/block/conv2/Conv",), 16, 4, 4.0, "Conv")
    round_trip(plan)


# ------------------------------------------------------------------------------------ plan generation

def test_generate_plan_rejects_an_invalid_schedule() -> None:
    dag = graphs.chain()
    R = np.eye(7, dtype=bool)
    with pytest.raises(PlanError, match=r"invalid hand schedule: \(1b\) stage 1: 'f2' computed without 'f1'"):
        generate_plan(dag, Schedule(R, np.zeros((7, 7), dtype=bool), strategy="hand"))


def check_structure(dag, sched: Schedule, plan: Plan) -> None:
    """Computes follow R row-major, registers are fresh in order, and every register is freed exactly once."""
    computes = [[dag.index(st.unit) for st in stage if isinstance(st, Compute)] for stage in plan.stages]
    assert computes == [list(np.flatnonzero(sched.R[t])) for t in range(dag.n)]
    regs = [st.reg for _, _, st in plan.statements() if isinstance(st, Compute)]
    assert regs == list(range(len(regs)))
    freed = [st.reg for _, _, st in plan.statements() if isinstance(st, Deallocate)]
    assert sorted(freed) == regs


def check_late_frees(dag, sched: Schedule, plan: Plan) -> None:
    """early_free=False: right after each compute k come the FREE[t, (i, k)] parents (Algorithm 1), by
    parent; the extra deallocations sit at the end of the stage, and after stage t exactly the units of
    S[t+1] are live, one register each (after the last stage, none)."""
    free = free_matrix(dag, sched.R, sched.S)
    unit_of = {st.reg: dag.index(st.unit) for _, _, st in plan.statements() if isinstance(st, Compute)}
    live: set[int] = set()
    for t, stage in enumerate(plan.stages):
        pos = [j for j, st in enumerate(stage) if isinstance(st, Compute)]
        for a, b in zip(pos, pos[1:] + [len(stage)]):
            k = dag.index(stage[a].unit)
            want = sorted(int(dag.edges[e, 0]) for e in np.flatnonzero(free[t] & (dag.edges[:, 1] == k)))
            got = [unit_of[st.reg] for st in stage[a + 1:b]]
            assert got[:len(want)] == want, (t, k)
            if b < len(stage):
                assert len(got) == len(want), (t, k)
        for st in stage:
            (live.add if isinstance(st, Compute) else live.remove)(st.reg)
        kept = sorted(unit_of[r] for r in live)
        assert kept == (list(np.flatnonzero(sched.S[t + 1])) if t + 1 < dag.n else []), t


def check_early_frees(dag, plan: Plan) -> None:
    """early_free=True: every deallocation directly follows (past other deallocations) the last compute that
    defines or uses its register, and nothing uses the register afterwards."""
    flat = [st for _, _, st in plan.statements()]
    current: dict[int, int] = {}
    last: dict[int, int] = {}
    for p, st in enumerate(flat):
        if isinstance(st, Compute):
            k = dag.index(st.unit)
            for i in dag.preds[k]:
                last[current[int(i)]] = p
            current[k] = st.reg
            last[st.reg] = p
    for p, st in enumerate(flat):
        if isinstance(st, Deallocate):
            q = max(j for j in range(p) if isinstance(flat[j], Compute))
            assert last[st.reg] == q, (p, st)


def schedules(rng: np.random.Generator, count: int):
    """Random DAGs with checkpoint-all and random-S (solve_r) schedules, some with extra recomputations."""
    for trial in range(count):
        n = int(rng.integers(1, 13))
        dag = graphs.random_dag(rng, n, float(rng.random()) * 0.5, no_recompute=trial % 2 == 0)
        yield dag, checkpoint_all(dag)
        for extra in (False, not dag.no_recompute.any()):
            sched = graphs.random_schedule(rng, dag, extra_r=extra)
            if sched is not None:
                yield dag, sched


def test_random_plans_round_trip_and_are_well_formed() -> None:
    rng = np.random.default_rng(7)
    seen = 0
    for dag, sched in schedules(rng, 120):
        late = generate_plan(dag, sched, early_free=False, graph_name="random", budget=10_000)
        early = generate_plan(dag, sched, graph_name="random")
        for plan in (late, early):
            round_trip(plan)
            check_structure(dag, sched, plan)
        check_late_frees(dag, sched, late)
        check_early_frees(dag, early)
        seen += 1
    assert seen > 250


def test_all_golden_plans_are_well_formed() -> None:
    for dag, sched, kw in graphs.golden().values():
        plan = generate_plan(dag, sched, **kw)
        check_structure(dag, sched, plan)
        (check_late_frees(dag, sched, plan) if kw.get("early_free") is False else check_early_frees(dag, plan))


def test_stage_end_frees_and_early_motion_on_a_spurious_checkpoint() -> None:
    """residual_spurious keeps the Add output (%2) into stage 6 although only stage 5 uses it. Algorithm 1
    alone never frees it (FREE[5, (Add, grad/Add)] = 0 because S[6, Add] = 1, and nothing uses it in stage
    6); the late plan frees it at the end of stage 6, the early plan right after its last use in stage 5."""
    dag, sched = graphs.residual(), graphs.residual_spurious()
    late = generate_plan(dag, sched, early_free=False)
    early = generate_plan(dag, sched)
    assert late.stages[5] == [Compute(5, "grad/conv2"), Deallocate(1), Deallocate(2)]
    assert early.stages[4] == [Compute(4, "grad/Add"), Deallocate(2), Deallocate(3)]
    assert early.stages[5] == [Compute(5, "grad/conv2"), Deallocate(1)]


def test_stale_copy_of_a_value_recomputed_while_checkpointed() -> None:
    """checkpoint-all on the chain plus R[2, f1]: stage 3 recomputes f1 although S[2] holds it (%0)."""
    dag = graphs.chain()
    base = checkpoint_all(dag)
    R = base.R.copy()
    R[2, 0] = True
    sched = Schedule(R, base.S, strategy="hand")
    late = generate_plan(dag, sched, early_free=False)
    early = generate_plan(dag, sched)
    # late: f1 again (%2), f3 (%3), then the superseded copy %0 at the end; %2 is kept (S[3, f1]).
    assert late.stages[2] == [Compute(2, "f1"), Compute(3, "f3"), Deallocate(0)]
    # early: %0 was last used by f2 in stage 2, so it is freed right after that compute.
    assert early.stages[1] == [Compute(1, "f2"), Deallocate(0)]
    assert early.stages[2] == [Compute(2, "f1"), Compute(3, "f3")]


def test_value_computed_and_unused_in_its_stage_is_freed_after_its_compute() -> None:
    """unet_recompute plus R[4, e2]: stage 5 computes e2 (%4), which nothing in stage 5 uses and S[5] does
    not keep; the late plan frees it at the end of the stage, the early plan right after its compute."""
    dag, base = graphs.unet(), graphs.unet_recompute()
    R = base.R.copy()
    R[4, 1] = True
    sched = Schedule(R, base.S, strategy="hand")
    late = generate_plan(dag, sched, early_free=False)
    early = generate_plan(dag, sched)
    assert late.stages[4] == [Compute(4, "e2"), Compute(5, "loss"), Deallocate(4)]
    assert early.stages[4] == [Compute(4, "e2"), Deallocate(4), Compute(5, "loss")]


def test_module_docstring_example_parses() -> None:
    import textwrap

    import remc.ir.plan as plan_module
    doc = plan_module.__doc__
    example = textwrap.dedent(doc[doc.index("::\n") + 3:doc.index("Stages are numbered")]).strip("\n") + "\n"
    plan = parse_plan(example)
    assert [u.name for u in plan.units] == ["fc1", "relu"] and plan.budget == 6 << 30
    assert plan.stages == [[Compute(0, "fc1")], [Compute(1, "relu"), Deallocate(0)]]


def test_device_line_round_trips_and_defaults_to_cpu() -> None:
    """A CUDA plan prints a ``device`` line and reads back the same; a plan without one is a CPU plan."""
    units = (Unit("a", ("a",), 1, 0, 1.0),)
    cuda = Plan("g", None, 0, "s", "fine", units, [[Compute(0, "a")]], {}, "cuda")
    text = print_plan(cuda)
    assert 'device "cuda"' in text and parse_plan(text) == cuda and print_plan(parse_plan(text)) == text
    cpu = dataclasses.replace(cuda, device="cpu")
    assert "device" not in print_plan(cpu) and parse_plan(print_plan(cpu)).device == "cpu"


def test_writing_a_plan_does_not_import_the_parser() -> None:
    """lark is imported only where plan text is parsed: `remc solve` prints plans and never parses one (the
    other tests here parse). In a fresh interpreter."""
    import subprocess
    import sys

    code = "import sys\nimport remc.ir.plan\nassert 'lark' not in sys.modules, 'lark was imported'\n"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
