"""Whole-model gradient checks on small versions of every zoo model.

For each model: the training graph (cross-entropy; per pixel for segmentation, per token for gpt2)
runs on ONNX Runtime CPU with graph optimizations off, and the directional derivative of the loss along
directions in the joint parameter space (one half along the computed gradient, one random; unit norm
over all parameters together) is compared with central differences of the loss.

float32 (the zoo's dtype; ONNX Runtime CPU runs Conv only in float). The tolerance is 1e-2 of
|grad| |v| (a wrong rule anywhere is off by O(|grad|)) plus the loss's float32 rounding divided by the
step; the steps (EPS) are small enough that curvature stays below the tolerance. Dropout ratios are set to 0
(each run draws a new mask, which finite differences cannot follow; the Dropout rule has its own test).
"""
from __future__ import annotations

import numpy as np
import onnx
import pytest
from grad_helpers import params_as_inputs, random_feeds, session
from onnx import numpy_helper

zoo = pytest.importorskip("remc.zoo")

from remc.passes.grad import build_training_graph, is_backward_node  # noqa: E402

EPS = 3e-4
"""Central-difference step; the rounding term of the tolerance is ROUNDING |L| / EPS ~ 1e-2 |L|;
VGG16 at 1e-3 still sees ReLU/MaxPool curvature of ~2% of its per-parameter derivatives."""
EPS_ALONG_GRADIENT = {"mobilenet": 3e-5, "mobilenet_v2": 3e-5, "unet": 1e-4}
"""Along the half-gradient direction the BN-heavy MobileNets curve so much that the central difference
of mobilenet_v2 still moves by 2% of |g| between steps 1e-4 and 3e-5 (and by 15% at 1e-3)."""
RTOL = 1e-2
PER_PARAM = 24
ROUNDING = 3e-6
"""Measured float32 rounding of the loss relative to |L| (sums over many terms); its effect on the
central difference is ROUNDING |L| / eps."""

MODELS = zoo.list_models()
SIZES = {name: {"batch": 4, "height": 64, "width": 64} for name in ("resnet50", "mobilenet", "mobilenet_v2")}
"""BatchNorm over 2 samples of a 1x1 map (the small config's last stage) normalizes channels whose values
are nearly equal: the loss is then so curved that no float32 step size resolves its derivative. A batch
of 4 at 64x64 leaves 4x4 maps there."""


def without_dropout(model: onnx.ModelProto) -> onnx.ModelProto:
    """A copy whose Dropout nodes have ratio 0."""
    m = onnx.ModelProto()
    m.CopyFrom(model)
    ratios = {n.input[1] for n in m.graph.node if n.op_type == "Dropout" and len(n.input) > 1 and n.input[1]}
    for t in m.graph.initializer:
        if t.name in ratios:
            t.CopyFrom(numpy_helper.from_array(np.zeros_like(numpy_helper.to_array(t)), t.name))
    for n in m.graph.node:
        if n.op_type == "Dropout" and (len(n.input) < 2 or not n.input[1]):
            raise AssertionError("zoo Dropout without a ratio input: set one for this test")
    return m


@pytest.mark.parametrize("name", MODELS)
def test_zoo_model_gradients(name):
    cfg = {**zoo.small_config(name), **SIZES.get(name, {})}
    model = without_dropout(zoo.build(name, **cfg))
    train = build_training_graph(model, "cross-entropy")
    outs = [o.name for o in train.graph.output]
    params = [o[len("grad."):] for o in outs if o.startswith("grad.")]
    roles = zoo.initializer_roles(model)
    assert sorted(params) == sorted(k for k, r in roles.items() if r == "param"), "trainable set != zoo params"
    assert any(is_backward_node(n) for n in train.graph.node)

    rng = np.random.default_rng(0)
    vocab = cfg.get("vocab_size") or cfg.get("num_classes") or 10
    feeds = random_feeds(train, rng, label_high=vocab)
    res = dict(zip(outs, session(train).run(None, feeds)))
    assert np.isfinite(res["loss"])
    grads = {p: res[f"grad.{p}"].astype(np.float64) for p in params}
    inits = {t.name: numpy_helper.to_array(t) for t in train.graph.initializer if t.name in grads}
    sess = session(params_as_inputs(train, params))
    gnorm = np.sqrt(sum(float(np.sum(g * g)) for g in grads.values()))
    assert gnorm > 0

    def loss_at(step: dict[str, np.ndarray], eps: float) -> float:
        f = dict(feeds)
        f.update({p: (inits[p] + eps * step[p]).astype(inits[p].dtype) for p in params})
        return float(sess.run(["loss"], f)[0])

    for k, eps in enumerate((EPS_ALONG_GRADIENT.get(name, EPS), EPS)):
        v = {p: rng.standard_normal(g.shape) for p, g in grads.items()}
        vn = np.sqrt(sum(float(np.sum(x * x)) for x in v.values()))
        v = {p: x / vn for p, x in v.items()}
        if k == 0:
            v = {p: v[p] + grads[p] / gnorm for p in params}
            vn = np.sqrt(sum(float(np.sum(x * x)) for x in v.values()))
            v = {p: x / vn for p, x in v.items()}
        fd = (loss_at(v, eps) - loss_at(v, -eps)) / (2 * eps)
        an = sum(float(np.sum(grads[p] * v[p])) for p in params)
        tol = RTOL * gnorm + ROUNDING * abs(float(res["loss"])) / eps
        assert abs(fd - an) <= tol, (f"{name}: finite difference {fd:.6g}, gradient {an:.6g} "
                                     f"(|g| {gnorm:.3g}, tolerance {tol:.3g})")


@pytest.mark.parametrize("name", MODELS)
def test_zoo_model_gradients_per_parameter(name):
    """The joint direction weighs parameters by their gradient; a rule feeding only small-gradient
    parameters (a transformer's attention, say) needs directions in single parameters: PER_PARAM of them
    (all for small models), each half along that parameter's gradient."""
    cfg = {**zoo.small_config(name), **SIZES.get(name, {})}
    train = build_training_graph(without_dropout(zoo.build(name, **cfg)), "cross-entropy")
    outs = [o.name for o in train.graph.output]
    params = [o[len("grad."):] for o in outs if o.startswith("grad.")]
    rng = np.random.default_rng(1)
    feeds = random_feeds(train, rng, label_high=cfg.get("vocab_size") or cfg.get("num_classes") or 10)
    res = dict(zip(outs, session(train).run(None, feeds)))
    inits = {t.name: numpy_helper.to_array(t) for t in train.graph.initializer if t.name in set(params)}
    sess = session(params_as_inputs(train, params))
    eps = EPS_ALONG_GRADIENT.get(name, EPS)
    chosen = rng.choice(params, size=min(PER_PARAM, len(params)), replace=False)
    for p in chosen:
        g = res[f"grad.{p}"].astype(np.float64)
        gn = float(np.linalg.norm(g))
        v = rng.standard_normal(g.shape)
        v = v / np.linalg.norm(v) + (g / gn if gn > 0 else 0)
        v /= np.linalg.norm(v)
        f = dict(feeds)
        f.update(inits)
        losses = []
        for sign in (1, -1):
            f[p] = (inits[p] + sign * eps * v).astype(inits[p].dtype)
            losses.append(float(sess.run(["loss"], f)[0]))
        fd = (losses[0] - losses[1]) / (2 * eps)
        an = float(np.sum(g * v))
        tol = RTOL * gn + ROUNDING * abs(float(res["loss"])) / eps
        assert abs(fd - an) <= tol, f"{name}: d loss / d {p}: finite difference {fd:.6g}, gradient {an:.6g}"
