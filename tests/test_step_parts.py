"""tools/step_parts.py counts a step graph's always-resident parts and floor from the ONNX file alone; on the
zoo's GPT-2 (test size) with SGD momentum, its always-resident bytes are remc's (the DAG's constant, the
infeasible-budget message's "always resident"), the tied embedding's gradient (an Add of two contributions as
large as the embedding) needs what remc's unit for it needs, and its floor is at most remc's lower bound (at
test size an activation's gradient needs more; at real size the two are equal, BENCHMARKS)."""
import importlib.util
from pathlib import Path

from remc import zoo
from remc.passes.milp_model import simple_lower_bound, unit_needs
from remc.passes.optimizer import OptimizerOptions, append_optimizer, memory_parts
from remc.pipeline import State, compile_pipeline, run, stages


def _tool():
    path = Path(__file__).resolve().parents[1] / "tools" / "step_parts.py"
    spec = importlib.util.spec_from_file_location("step_parts", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_step_parts_floor_is_remcs_lower_bound_on_gpt2():
    cfg = dict(zoo.small_config("gpt2"))
    batch = cfg.pop("batch")
    step = append_optimizer(zoo.export("gpt2", batch, train=True, **cfg), OptimizerOptions("sgd", momentum=0.9))
    p = _tool().parts(step)
    mine = memory_parts(step)
    assert (p["weights"], p["optimizer_state"], p["updated"], p["data"]) == (
        mine["weights"], mine["optimizer_state"], mine["updated"], mine["data"])
    assert p["optimizer_state"] == p["weights"] and p["updated"] == 2 * p["weights"]
    assert p["neediest_parameter"] == "wte.weight"  # the neediest, not the largest (h.0.mlp.c_fc.weight)
    assert p["gradient_formed_by"] == "Add of 2 contributions"
    state = run(stages(compile_pipeline(cost="flops"), last="units"), State(model=step, budget=None))
    dag = state.dag.kept_from_start()  # the training loop's accounting: every output bound before the step
    assert p["always_resident"] == int(dag.constant)
    assert p["floor"] - p["always_resident"] == 3 * p["its_gradient"] == int(unit_needs(dag)[dag.names.index("wte.weight/grad/0")])
    assert p["floor"] <= simple_lower_bound(dag)


def test_lower_bound_text_says_whose_model_it_bounds():
    """remc's bound holds every graph output from the step's start (a training loop's fixed buffers); on the
    four transformer step graphs ``remc compile`` fit one run 1 byte below it on the device (BENCHMARKS), so the
    message must not claim it for every placement."""
    from remc.passes.milp_model import lower_bound_text
    cfg = dict(zoo.small_config("gpt2"))
    batch = cfg.pop("batch")
    step = append_optimizer(zoo.export("gpt2", batch, train=True, **cfg), OptimizerOptions("sgd", momentum=0.0))
    dag = run(stages(compile_pipeline(cost="flops"), last="units"), State(model=step, budget=None)).dag
    text = lower_bound_text(dag.kept_from_start())  # the training loop's DAG (``remc.fit.compile_fit`` with steps)
    assert text.startswith("no schedule of this graph can need less than ")
    assert "in remc's model, which holds the graph's outputs from the start" in text and "may need less" in text
    one_run = lower_bound_text(dag)  # one run: the outputs from their computation on
    assert "of graph outputs computed by then" in one_run and "from the start" not in one_run
