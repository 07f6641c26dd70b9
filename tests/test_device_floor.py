"""remc/fit.py ``device_floor``: a lower bound on what every plan needs on the device, below which a compile
refuses the budget at once (no raised solves: MobileNetV3-large b4 at 0.9x took the whole limit to refuse,
590 s with the default one)."""
from __future__ import annotations

from pathlib import Path

import onnx
import onnx.parser
import pytest

from remc.fit import device_floor
from remc.pipeline import State, compile_pipeline, run, stages

GRAPHS = Path(__file__).parent / "graphs"

# a = x * w is read by a Reshape (its output is a's buffer) and by an Add of a and that reshape; the Relu may
# write in place; g, a graph output, is the Add's
ALIASED = """
<ir_version: 8, opset_import: ["" : 17]>
g (float[64, 64] x, float[64, 64] w) => (float[4096] g) {
    a = Mul(x, w)
    shape = Constant<value = int64[1] {4096}>()
    b = Reshape(a, shape)
    a1 = Reshape(a, shape)
    r = Relu(a1)
    g = Add(b, r)
}
"""


def _state(model: onnx.ModelProto, granularity: str = "fine") -> State:
    return run(stages(compile_pipeline(cost="flops", granularity=granularity), last="units"), State(model=model))


def test_the_floor_counts_a_shared_buffer_once_and_skips_aliasing_and_in_place_nodes() -> None:
    st = _state(onnx.parser.parse_model(ALIASED))
    floor, why = device_floor(st, "cpu")
    tensor = 64 * 64 * 4
    # the neediest node is the Add: its inputs b and r are a's buffer (Reshape aliases; Relu may write into it),
    # counted once, and its output g (the Mul holds only a beside x and w, which are in the constant)
    assert floor == int(st.dag.constant) + 2 * tensor
    assert "node 'Add_4' (Add) needs its 1 input buffer(s)" in why
    assert floor < int(st.dag.constant) + 4 * tensor  # the live-bytes model holds b, r and a apart


@pytest.mark.parametrize("name", ["chain_train", "residual_train", "unet_train"])
def test_the_floor_is_at_most_the_unmodified_graphs_need_on_the_device(name: str) -> None:
    """Checkpoint-all is one plan: what the device needs for it (the arena replayed, kernels measured) is at
    least the floor; and the floor holds the constant and every graph output."""
    from remc.fit import unmodified_need
    model = onnx.parser.parse_model((GRAPHS / f"{name}.onnxtxt").read_text())
    st = _state(model, "coarse")
    need = unmodified_need(st, "cpu", None)
    floor, _ = device_floor(st, "cpu")
    assert int(st.dag.constant) + int(st.dag.kept.sum()) <= floor <= need
