"""Helpers for the gradient tests: tiny models, ONNX Runtime sessions, finite-difference checks.

Finite differences are directional: for a parameter p and a direction v (unit norm; the first one half
random, half along the computed gradient, so a wrong scale cannot hide; the others random), the central
difference (L(p + eps v) - L(p - eps v)) / (2 eps) must match <grad p, v>. The error is measured against
|grad p| |v| (the largest <grad p, v> can be), so cancellation in the dot product does not make the
check flaky. In float64 (eps = 1e-6) truncation (~eps^2) and rounding (~1e-16 |L| / eps) are far below
rtol = 1e-6. In float32 (for ops ONNX Runtime CPU only runs in float: Conv, ConvTranspose, AveragePool,
Resize, Erf/Gelu, LeakyRelu, ...) rounding is ~1e-7 |L| / eps, so eps = 1e-2 with rtol = 2e-2 keeps
both rounding and truncation (~eps^2 L''') well inside the tolerance while a wrong rule (off by a
transpose, a factor, a boundary) is off by O(1).
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

from remc.passes.grad import build_training_graph, is_backward_node

F32, F64 = TensorProto.FLOAT, TensorProto.DOUBLE
TOL = {F64: dict(eps=1e-6, rtol=1e-6, atol=1e-10), F32: dict(eps=1e-2, rtol=2e-3, atol=1e-6)}


def make_model(nodes: Sequence[onnx.NodeProto], inputs: Sequence[onnx.ValueInfoProto], output: str,
               params: dict[str, np.ndarray], opset: int = 20, consts: dict[str, np.ndarray] | None = None,
               ) -> onnx.ModelProto:
    """A forward model: ``params`` are float initializers (trainable), ``consts`` other initializers."""
    inits = [numpy_helper.from_array(np.asarray(v), k) for k, v in params.items()]
    for k, v in (consts or {}).items():
        t = numpy_helper.from_array(np.asarray(v), k)
        t.doc_string = "constant"
        inits.append(t)
    g = helper.make_graph(list(nodes), "g", list(inputs), [onnx.ValueInfoProto(name=output)], initializer=inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 10 if opset >= 21 else 9 if opset >= 19 else 8
    return m


def one_op(op: str, params: dict[str, np.ndarray], *, inputs: Sequence[str] | None = None,
           n_out: int = 1, opset: int = 20, consts: dict[str, np.ndarray] | None = None,
           data: dict[str, tuple[int, ...]] | None = None, dtype: int = F64, **attrs: object) -> onnx.ModelProto:
    """A model of one ``op`` node reading ``inputs`` (default: the params in order); output "y"."""
    names = list(inputs) if inputs is not None else list(params)
    outs = ["y"] + [f"y{k}" for k in range(1, n_out)]
    node = helper.make_node(op, names, outs, name="node", **attrs)
    vis = [helper.make_tensor_value_info(k, dtype, list(s)) for k, s in (data or {}).items()]
    return make_model([node], vis, "y", params, opset, consts)


def session(model: onnx.ModelProto, optimize: bool = False) -> ort.InferenceSession:
    """A CPU session; graph optimizations off unless ``optimize``."""
    so = ort.SessionOptions()
    so.graph_optimization_level = (ort.GraphOptimizationLevel.ORT_ENABLE_ALL if optimize
                                   else ort.GraphOptimizationLevel.ORT_DISABLE_ALL)
    so.log_severity_level = 3
    return ort.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"])


def random_feeds(model: onnx.ModelProto, rng: np.random.Generator, n_classes: int | None = None,
                 label_high: int | None = None) -> dict[str, np.ndarray]:
    """Random values for every graph input (int64 inputs: class ids / token ids below ``label_high``)."""
    feeds = {}
    for vi in model.graph.input:
        tt = vi.type.tensor_type
        shape = [d.dim_value for d in tt.shape.dim]
        dt = helper.tensor_dtype_to_np_dtype(tt.elem_type)
        if np.issubdtype(dt, np.integer):
            feeds[vi.name] = rng.integers(0, label_high or 3, size=shape).astype(dt)
        else:
            feeds[vi.name] = rng.standard_normal(shape).astype(dt)
    return feeds


def params_as_inputs(model: onnx.ModelProto, names: Sequence[str]) -> onnx.ModelProto:
    """The training model with ``names`` moved from initializers to graph inputs, output "loss" only."""
    m = onnx.ModelProto()
    m.CopyFrom(model)
    g = m.graph
    moved = [t for t in g.initializer if t.name in set(names)]
    keep = [t for t in g.initializer if t.name not in set(names)]
    del g.initializer[:]
    g.initializer.extend(keep)
    g.input.extend(helper.make_tensor_value_info(t.name, t.data_type, list(t.dims)) for t in moved)
    loss = [o for o in g.output if o.name == "loss"]
    del g.output[:]
    g.output.extend(loss)
    return m


def check_naming(train: onnx.ModelProto, forward: onnx.ModelProto) -> None:
    """Unique names; forward nodes keep the forward model's names (or are '<forward node>/<k>' pieces of
    a decomposed one, or the loss); backward nodes are '<owner>/grad/<k>' with a forward node, an
    initializer or the loss as owner."""
    names = [n.name for n in train.graph.node]
    assert len(set(names)) == len(names), "node names must be unique"
    given = {n.name for n in forward.graph.node if n.name}
    fwd = [n.name for n in train.graph.node if not is_backward_node(n)]
    bwd = [n.name for n in train.graph.node if is_backward_node(n)]
    assert bwd, "no backward nodes"
    for name in fwd:
        assert ("/grad/" not in name and (name in given or name.split("/")[0] in ("loss",)
                or any(name.startswith(f"{g}/") for g in given) or name.endswith("/update/0")
                or name.rsplit("_", 1)[-1].isdigit())), f"unexpected forward node name {name!r}"
    owners = set(fwd) | {t.name for t in forward.graph.initializer} | {"loss"}
    owners -= {n.name for n in forward.graph.node if n.op_type == "Constant"}
    for name in bwd:
        assert name.split("/grad/")[0] in owners, f"backward node {name!r} has no owner"
    assert train.ir_version <= 10


def gradcheck(model: onnx.ModelProto, loss: str = "mse", *, dtype: int | None = None, seed: int = 0,
              n_dirs: int = 2, eps: float | None = None, rtol: float | None = None, label_high: int = 3,
              expect: Sequence[str] | None = None, **kw: object) -> tuple[onnx.ModelProto, dict[str, np.ndarray]]:
    """Build the training graph of ``model``, run it (optimizations off and on), check every gradient
    output against directional central differences of the loss. Returns the training model and the
    gradients by parameter name."""
    train = build_training_graph(model, loss, **kw)
    onnx.checker.check_model(train, full_check=True)
    check_naming(train, model)
    rng = np.random.default_rng(seed)
    feeds = random_feeds(train, rng, label_high=label_high)
    outs = [o.name for o in train.graph.output]
    res = dict(zip(outs, session(train).run(None, feeds)))
    res_opt = dict(zip(outs, session(train, optimize=True).run(None, feeds)))
    grads = {o[len("grad."):]: v for o, v in res.items() if o.startswith("grad.")}
    if expect is not None:
        assert sorted(grads) == sorted(expect), f"gradient outputs {sorted(grads)}, expected {sorted(expect)}"
    inits = {t.name: numpy_helper.to_array(t) for t in train.graph.initializer}
    dt = dtype if dtype is not None else inits[next(iter(grads))].dtype if grads else np.float64
    tol = TOL[F64 if np.dtype(helper.tensor_dtype_to_np_dtype(dt) if isinstance(dt, int) else dt) == np.float64
              else F32]
    eps = tol["eps"] if eps is None else eps
    rtol = tol["rtol"] if rtol is None else rtol
    for k, v in res.items():
        np.testing.assert_allclose(res_opt[k], v, rtol=max(rtol, 1e-5), atol=1e-6,
                                   err_msg=f"{k}: optimized and unoptimized sessions differ")
    fd_model = params_as_inputs(train, list(grads))
    sess = session(fd_model)

    def loss_at(name: str, value: np.ndarray) -> float:
        f = dict(feeds)
        f.update({p: inits[p] for p in grads})
        f[name] = value
        return float(sess.run(["loss"], f)[0])

    base = {p: inits[p] for p in grads}
    for p, g in grads.items():
        assert g.shape == base[p].shape and g.dtype == base[p].dtype
        gn = g.astype(np.float64) / max(float(np.linalg.norm(g)), 1e-300)
        for k in range(n_dirs):
            v = rng.standard_normal(g.shape)
            v /= np.linalg.norm(v)
            if k == 0:  # half along the gradient: a wrong scale shows at full size
                v = (v + gn) / np.linalg.norm(v + gn)
            v = v.astype(g.dtype)
            fd = (loss_at(p, base[p] + eps * v) - loss_at(p, base[p] - eps * v)) / (2 * eps)
            an = float(np.sum(g.astype(np.float64) * v))
            scale = float(np.linalg.norm(g.astype(np.float64)))
            assert abs(fd - an) <= rtol * scale + tol["atol"], (
                f"d loss / d {p} along a random direction: finite difference {fd:.8g}, gradient {an:.8g} "
                f"(|grad| = {scale:.3g})")
    return train, grads
