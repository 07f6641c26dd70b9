"""Gradient rules against finite differences on ONNX Runtime CPU (see grad_helpers for the method).

Each case is a one-op model whose tensors are trainable initializers; the training graph (mse loss
against random labels, i.e. a random projection of the output) runs with graph optimizations off and
on, and every gradient output is checked along random directions. float64 where ONNX Runtime CPU runs
the op in double, float32 otherwise (tolerances justified in grad_helpers).
"""
from __future__ import annotations

import numpy as np
import pytest
from grad_helpers import F32, F64, gradcheck, make_model, one_op, random_feeds, session
from onnx import TensorProto, helper, numpy_helper

from remc.ir.errors import ModelError, UnsupportedOpError
from remc.passes.grad import build_training_graph, is_backward_node, supported_ops

R = np.random.default_rng(1234)


def rnd(*shape: int, dtype=np.float64, positive: bool = False) -> np.ndarray:
    a = R.standard_normal(shape)
    if positive:
        a = np.abs(a) + 0.5
    return a.astype(dtype)


def f32(*shape: int, **kw) -> np.ndarray:
    return rnd(*shape, dtype=np.float32, **kw)


# ---- convolution ---------------------------------------------------------------------------------
CONV_CASES = [
    # (x shape, w shape, attrs)
    ((2, 3, 7, 6), (4, 3, 3, 3), dict(pads=[1, 1, 1, 1])),
    ((2, 3, 8, 8), (4, 3, 3, 3), dict(strides=[2, 2], pads=[1, 1, 1, 1])),
    ((1, 2, 7, 9), (3, 2, 3, 2), dict(strides=[2, 3])),
    ((1, 2, 9, 9), (2, 2, 3, 3), dict(dilations=[2, 2], pads=[2, 1, 0, 2])),
    ((2, 4, 6, 6), (6, 2, 3, 3), dict(group=2, pads=[1, 1, 1, 1])),
    ((2, 4, 7, 7), (8, 1, 3, 3), dict(group=4, strides=[2, 2], pads=[1, 1, 1, 1])),  # depthwise x2
    ((1, 3, 7, 8), (2, 3, 3, 3), dict(auto_pad="SAME_UPPER", strides=[2, 2])),
    ((1, 3, 7, 8), (2, 3, 4, 4), dict(auto_pad="SAME_LOWER", strides=[2, 2])),
    ((1, 3, 7, 8), (2, 3, 3, 3), dict(auto_pad="VALID", strides=[2, 1], dilations=[1, 2])),
    ((2, 3, 11), (4, 3, 3), dict(strides=[2], pads=[1, 0])),  # 1-D
    ((1, 2, 5, 4, 4), (2, 2, 3, 2, 2), dict(pads=[1, 0, 1, 1, 1, 0])),  # 3-D
]


@pytest.mark.parametrize("xs,ws,attrs", CONV_CASES, ids=[f"conv{k}" for k in range(len(CONV_CASES))])
@pytest.mark.parametrize("bias", [True, False])
def test_conv(xs, ws, attrs, bias):
    params = {"x": f32(*xs), "w": f32(*ws)}
    if bias:
        params["b"] = f32(ws[0])
    gradcheck(one_op("Conv", params, **attrs), expect=list(params))


CONVT_CASES = [
    ((2, 3, 4, 5), (3, 2, 3, 3), dict(strides=[2, 2], pads=[1, 1, 1, 1], output_padding=[1, 1])),
    ((1, 4, 3, 3), (4, 3, 4, 4), dict(strides=[2, 2], pads=[1, 1, 1, 1])),
    ((1, 4, 3, 4), (4, 1, 3, 3), dict(group=2, strides=[2, 1], dilations=[1, 2])),
    ((1, 2, 3, 3), (2, 3, 3, 3), dict(strides=[2, 2], auto_pad="SAME_UPPER")),
    ((1, 2, 3, 3), (2, 3, 3, 3), dict(strides=[2, 2], output_shape=[6, 7])),
    ((2, 3, 5), (3, 2, 3), dict(strides=[3], pads=[0, 1])),
]


@pytest.mark.parametrize("xs,ws,attrs", CONVT_CASES, ids=[f"convT{k}" for k in range(len(CONVT_CASES))])
def test_conv_transpose(xs, ws, attrs):
    group = attrs.get("group", 1)
    params = {"x": f32(*xs), "w": f32(*ws), "b": f32(ws[1] * group)}
    gradcheck(one_op("ConvTranspose", params, **attrs), expect=list(params))


# ---- dense ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("ta,tb", [(0, 0), (1, 0), (0, 1), (1, 1)])
@pytest.mark.parametrize("cshape", [(5,), (3, 5), (1, 5), None])
def test_gemm(ta, tb, cshape):
    a = rnd(4, 3) if ta else rnd(3, 4)
    b = rnd(5, 4) if tb else rnd(4, 5)
    params = {"a": a, "b": b}
    if cshape:
        params["c"] = rnd(*cshape)
    gradcheck(one_op("Gemm", params, transA=ta, transB=tb, alpha=0.7, beta=1.3), expect=list(params))


@pytest.mark.parametrize("ash,bsh", [((3, 4), (4, 5)), ((2, 3, 4), (4, 5)), ((2, 1, 3, 4), (3, 4, 5)), ((2, 3, 4), (4,)),
                                     ((4,), (4, 5)), ((3, 4), (4,)), ((2, 3, 4), (2, 4, 2))])
def test_matmul(ash, bsh):
    gradcheck(one_op("MatMul", {"a": rnd(*ash), "b": rnd(*bsh)}))


def test_matmul_weight_gradient_folds_the_batch():
    """A weight shared by every batch entry (ViT's attention projection: (197, 1, 768) @ (768, 2304)) gets
    its gradient from one product over all rows, not a (batch, K, N) product per entry summed after: no
    gradient value is larger than the largest of A, B and dY."""
    from remc.ir.onnx_io import import_model
    train = build_training_graph(one_op("MatMul", {"a": rnd(6, 1, 8), "b": rnd(8, 12)}))
    graph = import_model(train)
    biggest = max(v.nbytes for n in graph.nodes if is_backward_node(n.proto) for v in n.outputs)
    assert biggest <= 8 * 12 * 8                                        # B, float64; was 6 * 8 * 12 * 8


# ---- elementwise ---------------------------------------------------------------------------------
@pytest.mark.parametrize("op", ["Add", "Sub", "Mul", "Div"])
@pytest.mark.parametrize("ash,bsh", [((2, 3), (2, 3)), ((2, 3, 4), (4,)), ((2, 1, 4), (3, 1)), ((), (2, 3))])
def test_binary_broadcast(op, ash, bsh):
    b = rnd(*bsh, positive=op == "Div")
    params = {"a": rnd(*ash) if ash else np.asarray(0.7), "b": b}
    # a rank-0 initializer is not a trainable candidate: only b then
    gradcheck(one_op("Add" if op == "Add" else op, params), expect=[k for k in params if params[k].ndim])


def test_pow():
    gradcheck(one_op("Pow", {"a": rnd(2, 3, positive=True), "b": rnd(3)}))
    gradcheck(one_op("Pow", {"a": rnd(2, 3)}, inputs=["a", "e"], consts={"e": np.asarray(3.0)}), expect=["a"])


UNARY = [  # (op, dtype, positive input, attrs)
    ("Relu", F64, False, {}), ("Sigmoid", F64, False, {}), ("Tanh", F64, False, {}), ("Exp", F64, False, {}),
    ("Log", F64, True, {}), ("Sqrt", F64, True, {}), ("Neg", F64, False, {}), ("Reciprocal", F64, True, {}),
    ("Abs", F64, False, {}), ("Sin", F64, False, {}), ("Cos", F64, False, {}), ("Identity", F64, False, {}),
    ("LeakyRelu", F32, False, {"alpha": 0.1}), ("Erf", F32, False, {}), ("Softplus", F32, False, {}),
    ("Elu", F32, False, {"alpha": 0.7}), ("HardSigmoid", F32, False, {}), ("HardSwish", F32, False, {}),
    ("Gelu", F32, False, {}), ("Gelu", F32, False, {"approximate": "tanh"}),
    ("Softmax", F64, False, {"axis": 1}), ("Softmax", F64, False, {}), ("LogSoftmax", F64, False, {"axis": 0}),
    ("LogSoftmax", F64, False, {}),
]


@pytest.mark.parametrize("op,dt,pos,attrs", UNARY, ids=[f"{u[0]}{k}" for k, u in enumerate(UNARY)])
def test_unary(op, dt, pos, attrs):
    x = rnd(3, 4, 5, positive=pos) * (3.0 if op in ("HardSigmoid", "HardSwish") else 1.0)
    x = x.astype(np.float32 if dt == F32 else np.float64)
    gradcheck(one_op(op, {"x": x}, **attrs), expect=["x"])


def test_clip():
    x = rnd(4, 5)
    gradcheck(one_op("Clip", {"x": x}, inputs=["x", "lo", "hi"], consts={"lo": np.asarray(-0.5), "hi": np.asarray(0.6)}))
    gradcheck(one_op("Clip", {"x": x}, inputs=["x", "", "hi"], consts={"hi": np.asarray(0.2)}))


def test_prelu():  # float only on ORT CPU
    gradcheck(one_op("PRelu", {"x": f32(2, 3, 4), "s": f32(3, 1, positive=True)}))
    gradcheck(one_op("PRelu", {"x": f32(2, 3, 4), "s": f32(4)}))


def test_where_max_min():
    cond = R.random((3, 4)) > 0.5
    gradcheck(one_op("Where", {"a": rnd(3, 4), "b": rnd(4)}, inputs=["c", "a", "b"], consts={"c": cond}))
    gradcheck(one_op("Max", {"a": rnd(3, 4), "b": rnd(4), "c": rnd(3, 1)}))
    gradcheck(one_op("Min", {"a": rnd(3, 4), "b": rnd(3, 4)}))


def test_sum_and_cast():
    gradcheck(one_op("Sum", {"a": rnd(3, 4), "b": rnd(4), "c": rnd(3, 4)}))
    cast = helper.make_node("Cast", ["x"], ["c"], name="cast", to=TensorProto.DOUBLE)
    mul = helper.make_node("Mul", ["c", "w"], ["y"], name="mul")
    m = make_model([cast, mul], [], "y", {"x": f32(3, 4), "w": rnd(4)})
    _, grads = gradcheck(m, eps=1e-3, rtol=1e-4)
    assert grads["x"].dtype == np.float32
    like = helper.make_node("CastLike", ["x", "d"], ["c"], name="castlike")
    m = make_model([like, mul], [], "y", {"x": f32(3, 4), "w": rnd(4)}, consts={"d": np.zeros(1)})
    gradcheck(m, eps=1e-3, rtol=1e-4, expect=["x", "w"])
    gradcheck(one_op("Mean", {"a": f32(3, 4), "b": f32(4)}))  # float only on ORT CPU


# ---- normalization -------------------------------------------------------------------------------
@pytest.mark.parametrize("shape", [(4, 3, 2, 3), (5, 3), (3, 2, 4)])
@pytest.mark.parametrize("mode", ["inference-form", "training-3-outputs"])
def test_batch_norm(shape, mode):
    c = shape[1]
    params = {"x": rnd(*shape) * 2 + 1, "s": rnd(c), "b": rnd(c)}
    stats = {"m": rnd(c), "v": rnd(c, positive=True)}
    outs = ["y"] + (["rm", "rv"] if mode == "training-3-outputs" else [])
    node = helper.make_node("BatchNormalization", ["x", "s", "b", "m", "v"], outs, name="bn", epsilon=1e-3,
                            momentum=0.8, **({"training_mode": 1} if len(outs) == 3 else {}))
    model = make_model([node], [], "y", params, consts=stats)
    for t in model.graph.initializer:  # running statistics: float initializers, but buffers
        if t.name in stats:
            t.doc_string = "buffer"
    train, _ = gradcheck(model, expect=["x", "s", "b"])
    assert [o.name for o in train.graph.output][-2:] == ["m.updated", "v.updated"]
    assert not any(n.op_type == "BatchNormalization" for n in train.graph.node)
    feeds = random_feeds(train, np.random.default_rng(0))
    rm, rv = session(train).run(["m.updated", "v.updated"], feeds)
    axes = (0,) + tuple(range(2, len(shape)))
    mom = float(np.float32(0.8))  # attributes are float32
    np.testing.assert_allclose(rm, mom * stats["m"] + (1 - mom) * params["x"].mean(axis=axes), rtol=1e-12)
    np.testing.assert_allclose(rv, mom * stats["v"] + (1 - mom) * params["x"].var(axis=axes), rtol=1e-12)


def test_batch_norm_running_stats_without_buffer_role_are_not_trained():
    """Running statistics reach the loss only through BN's non-differentiable inputs."""
    params = {"x": rnd(4, 3, 2), "s": rnd(3), "b": rnd(3), "m": rnd(3), "v": rnd(3, positive=True)}
    node = helper.make_node("BatchNormalization", ["x", "s", "b", "m", "v"], ["y"], name="bn")
    gradcheck(make_model([node], [], "y", params), expect=["x", "s", "b"])


def test_torch_export_signature_decides_what_is_trained():
    """A torch.export-based export lists its parameters in the graph's metadata: only those are trained (its
    optimizer also leaves constants as float initializers, e.g. a unit scale under a GroupNorm); a listed
    parameter that is not an initializer (folded into a constant) is refused."""
    from remc.passes.grad.build import TORCH_SIGNATURE_KEY
    params = {"w": rnd(3, 4), "val_7": np.ones(4)}
    model = make_model([helper.make_node("MatMul", ["x", "w"], ["h"], name="mm"),
                        helper.make_node("Mul", ["h", "val_7"], ["y"], name="scale")],
                       [helper.make_tensor_value_info("x", F64, [2, 3])], "y", params)
    sig = "\n# inputs\np_w: PARAMETER target='w'\nx: USER_INPUT\n"
    helper.set_metadata_props(model.graph, {TORCH_SIGNATURE_KEY: sig})
    train = build_training_graph(model, "mse")
    assert [o.name for o in train.graph.output if o.name.startswith("grad.")] == ["grad.w"]
    helper.set_metadata_props(model.graph, {TORCH_SIGNATURE_KEY: sig + "p_b: PARAMETER target='b'\n"})
    with pytest.raises(ModelError, match="optimize=False"):
        build_training_graph(model, "mse")


@pytest.mark.parametrize("shape", [(2, 3, 4, 5), (3, 2, 6), (2, 4, 3, 2, 2)])
def test_instance_norm(shape):
    """Decomposed in the forward (torch exports GroupNorm through it): gradients by finite differences, and
    the decomposition's output equals ONNX Runtime's InstanceNormalization."""
    c = shape[1]
    params = {"x": rnd(*shape) * 2 + 1, "s": rnd(c), "b": rnd(c)}
    model = one_op("InstanceNormalization", params, epsilon=1e-3)
    train, _ = gradcheck(model, expect=["x", "s", "b"])
    assert not any(n.op_type == "InstanceNormalization" for n in train.graph.node)
    x, sp = params["x"], tuple(range(2, len(shape)))
    bshape = (1, c) + (1,) * (len(shape) - 2)
    want = ((x - x.mean(axis=sp, keepdims=True)) / np.sqrt(x.var(axis=sp, keepdims=True) + float(np.float32(1e-3)))
            * params["s"].reshape(bshape) + params["b"].reshape(bshape))
    fwd = one_op("InstanceNormalization", {k: v.astype(np.float32) for k, v in params.items()}, dtype=F32,
                 epsilon=1e-3)  # ONNX Runtime's kernel (float only on CPU) computes the same function
    np.testing.assert_allclose(session(fwd).run(None, {})[0], want, rtol=1e-4, atol=1e-4)
    y_node = [n for n in train.graph.node if n.name == "node"]
    assert y_node and y_node[0].op_type == "Add"  # the node producing Y keeps the forward node's name
    train.graph.output.append(helper.make_tensor_value_info("y", F64, list(shape)))
    got = session(train).run(["y"], random_feeds(train, np.random.default_rng(0)))[0]
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)  # and so does the decomposition


@pytest.mark.parametrize("shape,axis", [((3, 4, 5), -1), ((3, 4, 5), 1), ((2, 6), -1)])
def test_layer_norm(shape, axis):
    norm = shape[axis % len(shape):]
    params = {"x": rnd(*shape), "s": rnd(*norm), "b": rnd(*norm)}
    gradcheck(one_op("LayerNormalization", params, axis=axis, epsilon=1e-3), expect=list(params))


def test_layer_norm_without_bias_and_exported_outputs():
    params = {"x": rnd(3, 4), "s": rnd(4)}
    gradcheck(one_op("LayerNormalization", params, n_out=1), expect=["x", "s"])


# ---- pooling -------------------------------------------------------------------------------------
MAXPOOL_CASES = [
    ((2, 3, 6, 6), dict(kernel_shape=[2, 2], strides=[2, 2])),
    ((1, 2, 7, 7), dict(kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])),  # overlapping windows
    ((1, 2, 7, 8), dict(kernel_shape=[3, 2], strides=[2, 2], ceil_mode=1)),
    ((1, 2, 8, 8), dict(kernel_shape=[2, 2], dilations=[2, 2])),
    ((1, 2, 5, 6), dict(kernel_shape=[2, 3], strides=[1, 2], storage_order=1)),
    ((2, 3, 9), dict(kernel_shape=[3], strides=[2], pads=[1, 1])),
]


@pytest.mark.parametrize("xs,attrs", MAXPOOL_CASES, ids=[f"maxpool{k}" for k in range(len(MAXPOOL_CASES))])
def test_max_pool(xs, attrs):
    gradcheck(one_op("MaxPool", {"x": rnd(*xs)}, **attrs))


AVGPOOL_CASES = [
    ((2, 3, 6, 6), dict(kernel_shape=[2, 2], strides=[2, 2])),
    ((1, 2, 7, 7), dict(kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])),
    ((1, 2, 7, 7), dict(kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1], count_include_pad=1)),
    ((1, 2, 7, 8), dict(kernel_shape=[3, 2], strides=[2, 2], ceil_mode=1)),
    ((1, 2, 8, 7), dict(kernel_shape=[3, 3], strides=[2, 2], pads=[1, 0, 1, 0], ceil_mode=1, count_include_pad=1)),
    ((1, 2, 7, 7), dict(kernel_shape=[3, 3], strides=[2, 2], auto_pad="SAME_UPPER")),
    ((2, 3, 9), dict(kernel_shape=[3], strides=[2], pads=[1, 1])),
]


@pytest.mark.parametrize("xs,attrs", AVGPOOL_CASES, ids=[f"avgpool{k}" for k in range(len(AVGPOOL_CASES))])
def test_average_pool(xs, attrs):
    gradcheck(one_op("AveragePool", {"x": f32(*xs)}, **attrs))


def test_global_average_pool():
    gradcheck(one_op("GlobalAveragePool", {"x": f32(2, 3, 4, 5)}))


# ---- data movement -------------------------------------------------------------------------------
def test_reshapes():
    x = rnd(2, 3, 4)
    gradcheck(one_op("Reshape", {"x": x}, inputs=["x", "s"], consts={"s": np.array([4, -1])}), expect=["x"])
    gradcheck(one_op("Flatten", {"x": x}, axis=2))
    gradcheck(one_op("Transpose", {"x": x}, perm=[2, 0, 1]))
    gradcheck(one_op("Transpose", {"x": x}))
    gradcheck(one_op("Unsqueeze", {"x": x}, inputs=["x", "a"], consts={"a": np.array([0, 3])}))
    gradcheck(one_op("Squeeze", {"x": rnd(2, 1, 3)}, inputs=["x", "a"], consts={"a": np.array([1])}))
    gradcheck(one_op("Expand", {"x": rnd(3, 1)}, inputs=["x", "s"], consts={"s": np.array([2, 3, 4])}))
    gradcheck(one_op("Tile", {"x": rnd(2, 3)}, inputs=["x", "r"], consts={"r": np.array([2, 3])}))


def test_concat_split():
    gradcheck(one_op("Concat", {"a": rnd(2, 3), "b": rnd(2, 1), "c": rnd(2, 4)}, axis=1))
    gradcheck(one_op("Concat", {"a": rnd(2, 3)}, inputs=["k", "a"], consts={"k": np.ones((2, 2))}, axis=-1),
              expect=["a"])
    # three outputs: y, y1 (unused) and y2 (unused): the gradient needs zeros for the unused pieces
    gradcheck(one_op("Split", {"x": rnd(2, 7)}, inputs=["x", "s"], n_out=3, consts={"s": np.array([2, 4, 1])},
                     axis=1))
    gradcheck(one_op("Split", {"x": rnd(6, 2)}, n_out=2, num_outputs=2, axis=0, opset=20))


SLICE_CASES = [
    ([1, 0], [3, 5], [0, 1], None),
    ([-3], [100], [1], None),
    ([0, 4], [5, 0], [0, 1], [2, -1]),  # strided and reversed
    ([5], [-100], [1], [-2]),
    ([1], [4], [-1], None),
]


@pytest.mark.parametrize("starts,ends,axes,steps", SLICE_CASES)
def test_slice(starts, ends, axes, steps):
    consts = {"st": np.array(starts), "en": np.array(ends), "ax": np.array(axes)}
    names = ["x", "st", "en", "ax"]
    if steps is not None:
        consts["sp"] = np.array(steps)
        names.append("sp")
    gradcheck(one_op("Slice", {"x": rnd(5, 6)}, inputs=names, consts=consts), expect=["x"])


def test_pad():
    consts = {"p": np.array([1, 0, 2, 1])}
    gradcheck(one_op("Pad", {"x": rnd(3, 4)}, inputs=["x", "p"], consts=consts), expect=["x"])
    consts = {"p": np.array([1, -1, -1, 2])}  # negative pads crop
    gradcheck(one_op("Pad", {"x": rnd(3, 4)}, inputs=["x", "p"], consts=consts), expect=["x"])
    consts = {"p": np.array([2, 1]), "v": np.asarray(0.5), "a": np.array([1])}
    gradcheck(one_op("Pad", {"x": rnd(3, 4)}, inputs=["x", "p", "v", "a"], consts=consts), expect=["x"])


@pytest.mark.parametrize("mode,pads", [("reflect", [0, 1, 2, 0, 2, 1]), ("reflect", [1, 0, 3, 1, -1, 0]),
                                       ("edge", [0, 2, 1, 0, 3, 2]), ("wrap", [0, 5, 1, 0, 2, 4])])
def test_pad_reflect_edge_wrap(mode, pads):
    """torch's ReflectionPad2d / ReplicationPad2d / circular padding; finite differences of ONNX Runtime's
    own Pad catch any index its adjoint maps differently."""
    consts = {"p": np.array(pads)}
    gradcheck(one_op("Pad", {"x": rnd(2, 3, 4)}, inputs=["x", "p"], consts=consts, mode=mode), expect=["x"])


@pytest.mark.parametrize("ind,axis", [(np.array([[1, 3, 1], [0, 1, 4]]), 0), (np.array([2, 0, 2, -1]), 1),
                                      (np.array(-2), 1), (np.array([[0], [2]]), 2)])
def test_gather_constant_indices(ind, axis):
    gradcheck(one_op("Gather", {"x": rnd(5, 4, 3)}, inputs=["x", "i"], consts={"i": ind}, axis=axis),
              expect=["x"])


def test_gather_embedding_from_input():
    """An embedding lookup of run-time token ids (repeats accumulate)."""
    node = helper.make_node("Gather", ["emb", "ids"], ["y"], name="embed")
    ids = helper.make_tensor_value_info("ids", TensorProto.INT64, [3, 4])
    gradcheck(make_model([node], [ids], "y", {"emb": rnd(5, 3)}), label_high=5)


def test_gather_elements():
    ind = np.array([[0, 2, 2], [1, 1, 0]])
    gradcheck(one_op("GatherElements", {"x": f32(3, 3)}, inputs=["x", "i"], consts={"i": ind}, axis=0),
              expect=["x"])


@pytest.mark.parametrize("op,axes,keepdims", [("ReduceMean", [1], 1), ("ReduceMean", [0, 2], 0),
                                              ("ReduceSum", [-1], 0), ("ReduceSum", None, 1),
                                              ("ReduceSumSquare", [1], 1)])
def test_reductions(op, axes, keepdims):
    consts = {} if axes is None else {"a": np.array(axes)}
    names = ["x"] + ([] if axes is None else ["a"])
    gradcheck(one_op(op, {"x": rnd(2, 3, 4)}, inputs=names, consts=consts, keepdims=keepdims), expect=["x"])


def test_reduce_mean_axes_attribute_at_opset_17():
    gradcheck(one_op("ReduceMean", {"x": rnd(2, 3, 4)}, axes=[1, 2], keepdims=0, opset=17))


RESIZE_CASES = [  # (x shape, scales or None, sizes or None, attrs)
    ((1, 2, 3, 4), [1, 1, 2, 2], None, dict(mode="nearest", coordinate_transformation_mode="asymmetric",
                                            nearest_mode="floor")),
    ((1, 2, 3, 4), None, [1, 2, 7, 5], dict(mode="nearest")),
    ((1, 2, 4, 3), [1, 1, 2, 2], None, dict(mode="linear")),
    ((1, 2, 4, 3), None, [1, 2, 7, 8], dict(mode="linear", coordinate_transformation_mode="align_corners")),
    ((1, 2, 5, 4), [1, 1, 1.5, 0.5], None, dict(mode="linear", coordinate_transformation_mode="pytorch_half_pixel")),
    ((1, 1, 4, 4), [1, 1, 2, 1.5], None, dict(mode="cubic")),
    ((1, 1, 4, 4), None, [1, 1, 6, 5], dict(mode="cubic", exclude_outside=1, cubic_coeff_a=-0.5)),
    ((1, 2, 3, 4), None, [6, 8], dict(mode="nearest", axes=[2, 3], coordinate_transformation_mode="asymmetric",
                                      nearest_mode="floor")),
]


@pytest.mark.parametrize("xs,scales,sizes,attrs", RESIZE_CASES, ids=[f"resize{k}" for k in range(len(RESIZE_CASES))])
def test_resize(xs, scales, sizes, attrs):
    consts = {}
    names = ["x", "", ""]
    if scales is not None:
        consts["sc"] = np.array(scales, dtype=np.float32)
        names[2] = "sc"
    else:
        consts["sz"] = np.array(sizes, dtype=np.int64)
        names.append("sz")
    gradcheck(one_op("Resize", {"x": f32(*xs)}, inputs=names, consts=consts, **attrs), expect=["x"])


# ---- dropout ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("inputs", [["x", "r"], ["x", "r", "t"], ["x"]])
def test_dropout_reuses_the_forward_mask(inputs):
    """Random masks defeat finite differences: check that loss and gradient use one and the same mask."""
    ratio = 0.3 if "r" in inputs else 0.5
    x = rnd(40, 50)
    consts = {"r": np.asarray(ratio), "t": np.asarray(False)}  # training_mode false in the forward model
    model = one_op("Dropout", {"x": x}, inputs=inputs, consts={k: consts[k] for k in inputs[1:]})
    train = build_training_graph(model, "mse")
    drops = [n for n in train.graph.node if n.op_type == "Dropout"]
    assert len(drops) == 1 and len(drops[0].output) == 2 and len(drops[0].input) == 3
    feeds = random_feeds(train, np.random.default_rng(0))
    loss, g = session(train).run(["loss", "grad.x"], feeds)
    kept = g != 0
    assert abs(kept.mean() - (1 - ratio)) < 0.05
    y = np.where(kept, x / (1 - ratio), 0.0)
    # ONNX Runtime computes the scale 1 / (1 - ratio) in float32
    np.testing.assert_allclose(loss, np.mean((y - feeds["labels"]) ** 2), rtol=1e-6)
    np.testing.assert_allclose(g, np.where(kept, 2 * (y - feeds["labels"]) / y.size / (1 - ratio), 0), rtol=1e-6,
                               atol=1e-10)


# ---- losses --------------------------------------------------------------------------------------------
def test_cross_entropy_classification():
    train, _ = gradcheck(one_op("Gemm", {"a": rnd(4, 3), "b": rnd(3, 5)}), "cross-entropy", label_high=5)
    labels = [i for i in train.graph.input if i.name == "labels"][0]
    assert labels.type.tensor_type.elem_type == TensorProto.INT64
    assert [d.dim_value for d in labels.type.tensor_type.shape.dim] == [4]


def test_cross_entropy_segmentation():
    train, _ = gradcheck(one_op("Mul", {"a": rnd(2, 3, 4, 5), "b": rnd(3, 1, 1)}), "cross-entropy")
    labels = [i for i in train.graph.input if i.name == "labels"][0]
    assert [d.dim_value for d in labels.type.tensor_type.shape.dim] == [2, 4, 5]


def test_cross_entropy_language_model():
    node = helper.make_node("Gather", ["emb", "ids"], ["y"], name="embed")
    ids = helper.make_tensor_value_info("ids", TensorProto.INT64, [2, 3])
    train, _ = gradcheck(make_model([node], [ids], "y", {"emb": rnd(4, 6)}), "cross-entropy", label_high=4)
    labels = [i for i in train.graph.input if i.name == "labels"][0]
    assert [d.dim_value for d in labels.type.tensor_type.shape.dim] == [2, 3]


def test_cross_entropy_value():
    logits = rnd(3, 4)
    train = build_training_graph(one_op("Identity", {"x": logits}), "cross-entropy", label_name="target")
    t = np.array([0, 3, 1])
    loss, g = session(train).run(["loss", "grad.x"], {"target": t})
    p = np.exp(logits - logits.max(1, keepdims=True))
    p /= p.sum(1, keepdims=True)
    np.testing.assert_allclose(loss, -np.mean(np.log(p[np.arange(3), t])), rtol=1e-12)
    np.testing.assert_allclose(g, (p - np.eye(4)[t]) / 3, rtol=1e-12)


# ---- graphs of several ops --------------------------------------------------------------------------
def test_shared_value_and_tied_weights_accumulate():
    nodes = [helper.make_node("MatMul", ["x", "w"], ["h"], name="mm1"),
             helper.make_node("Tanh", ["h"], ["t"], name="act"),
             helper.make_node("Mul", ["t", "h"], ["u"], name="mul"),  # h used twice
             helper.make_node("MatMul", ["u", "w"], ["y"], name="mm2")]  # w used twice
    x = helper.make_tensor_value_info("x", TensorProto.DOUBLE, [2, 3])
    train, _ = gradcheck(make_model(nodes, [x], "y", {"w": rnd(3, 3)}))
    assert {n.op_type for n in train.graph.node if n.name.startswith("w/grad/")} <= {"Add", "Sum"}


def test_shape_chain_is_folded_and_not_differentiated():
    """Flatten as exporters write it: Shape -> Gather -> Unsqueeze -> Concat -> Reshape."""
    nodes = [helper.make_node("Relu", ["x"], ["r"], name="relu"),
             helper.make_node("Shape", ["r"], ["s"], name="shape"),
             helper.make_node("Constant", [], ["zero"], name="c0", value=numpy_helper.from_array(np.array(0))),
             helper.make_node("Gather", ["s", "zero"], ["n"], name="g", axis=0),
             helper.make_node("Unsqueeze", ["n", "ax"], ["nu"], name="u"),
             helper.make_node("Concat", ["nu", "m1"], ["shp"], name="cat", axis=0),
             helper.make_node("Reshape", ["r", "shp"], ["f"], name="reshape"),
             helper.make_node("MatMul", ["f", "w"], ["y"], name="mm")]
    x = helper.make_tensor_value_info("x", TensorProto.DOUBLE, [2, 3, 2])
    m = make_model(nodes, [x], "y", {"w": rnd(6, 2)}, consts={"ax": np.array([0]), "m1": np.array([-1])})
    train, _ = gradcheck(m, expect=["w"])
    ops = [n.op_type for n in train.graph.node]
    assert "Shape" not in ops and "Concat" not in ops


def test_split_to_sequence_is_rewritten():
    """torch.split as the dynamo exporter writes it: SplitToSequence + SequenceAt at constant positions."""
    nodes = [helper.make_node("SplitToSequence", ["x", "sz"], ["seq"], name="split", axis=1),
             helper.make_node("SequenceAt", ["seq", "i0"], ["a"], name="at0"),
             helper.make_node("SequenceAt", ["seq", "i2"], ["b"], name="at2"),
             helper.make_node("Mul", ["a", "b"], ["y"], name="mul")]
    consts = {"sz": np.asarray(2), "i0": np.asarray(0), "i2": np.asarray(-1)}
    train, _ = gradcheck(make_model(nodes, [], "y", {"x": rnd(3, 6)}, consts=consts))
    ops = {n.op_type for n in train.graph.node}
    assert "Split" in ops and "SplitToSequence" not in ops and "SequenceAt" not in ops


def test_ops_with_float_constants_from_exporters():
    """Decomposed GELU as the legacy exporter writes it (Div, Erf, Add, Mul with Constant nodes)."""
    c = lambda name, v: helper.make_node("Constant", [], [name], name=name,  # noqa: E731
                                         value=numpy_helper.from_array(np.asarray(v, dtype=np.float32)))
    nodes = [c("sqrt2", np.sqrt(2.0)), c("one", 1.0), c("half", 0.5),
             helper.make_node("Div", ["x", "sqrt2"], ["d"], name="div"),
             helper.make_node("Erf", ["d"], ["e"], name="erf"),
             helper.make_node("Add", ["e", "one"], ["a"], name="add"),
             helper.make_node("Mul", ["x", "a"], ["m"], name="mul"),
             helper.make_node("Mul", ["m", "half"], ["y"], name="mul2")]
    gradcheck(make_model(nodes, [], "y", {"x": f32(3, 4)}), expect=["x"])


# ---- interface -----------------------------------------------------------------------------------------
def test_unknown_op_raises():
    model = one_op("Det", {"x": rnd(2, 3, 3)})
    with pytest.raises(UnsupportedOpError, match=r"no gradient rule for op 'Det' \(node 'node'\)"):
        build_training_graph(model, "mse")


def test_unsupported_variant_raises():
    model = one_op("ReduceSumSquare", {"x": rnd(2, 3)}, noop_with_empty_axes=1)
    with pytest.raises(UnsupportedOpError, match="ReduceSumSquare.*noop_with_empty_axes"):
        build_training_graph(model, "mse")


def test_op_without_rule_off_the_gradient_path_is_fine():
    nodes = [helper.make_node("Atan", ["x"], ["a"], name="atan"),  # x is data: no gradient needed
             helper.make_node("Mul", ["a", "w"], ["y"], name="mul")]
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])  # Atan: float only on ORT CPU
    gradcheck(make_model(nodes, [x], "y", {"w": f32(3)}), expect=["w"])


def test_dynamic_batch():
    node = helper.make_node("MatMul", ["x", "w"], ["y"], name="mm")
    x = helper.make_tensor_value_info("x", TensorProto.DOUBLE, ["N", 3])
    model = make_model([node], [x], "y", {"w": rnd(3, 2)})
    with pytest.raises(ModelError, match=r"graph input 'x' has a dynamic dimension 0"):
        build_training_graph(model, "mse")
    train, _ = gradcheck(model, batch=5)
    dims = [d.dim_value for d in train.graph.input[0].type.tensor_type.shape.dim]
    assert dims == [5, 3]
    x2 = helper.make_tensor_value_info("x", TensorProto.DOUBLE, [2, "K"])
    with pytest.raises(ModelError, match=r"graph input 'x' has a dynamic dimension 1"):
        build_training_graph(make_model([node], [x2], "y", {"w": rnd(3, 2)}), "mse", batch=2)


def test_outputs_inputs_and_names():
    nodes = [helper.make_node("Conv", ["x", "w1"], ["h"], name="conv", pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["h"], ["r"], name=""),
             helper.make_node("GlobalAveragePool", ["r"], ["p"], name="pool"),
             helper.make_node("Flatten", ["p"], ["f"], name="flat"),
             helper.make_node("Gemm", ["f", "w2", "b2"], ["y"], name="fc", transB=1)]
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3, 5, 5])
    params = {"w1": f32(4, 3, 3, 3), "w2": f32(6, 4), "b2": f32(6)}
    model = make_model(nodes, [x], "y", params, consts={"unused": np.ones(3, np.float32)})
    train = build_training_graph(model, "cross-entropy")
    assert [i.name for i in train.graph.input] == ["x", "labels"]
    assert [o.name for o in train.graph.output] == ["loss", "grad.w1", "grad.w2", "grad.b2"]
    assert {t.name for t in train.graph.initializer} >= set(params)
    names = [n.name for n in train.graph.node]
    assert {"conv", "pool", "flat", "fc"} <= set(names) and "Relu_1" in names
    bw = [n for n in train.graph.node if is_backward_node(n)]
    assert bw and all("/grad/" in n.name for n in bw)
    assert {n.name.split("/grad/")[0] for n in bw} <= {"conv", "Relu_1", "pool", "flat", "fc", "loss"}
    fwd = [n for n in train.graph.node if not is_backward_node(n)]
    assert [n.name for n in fwd] == ["conv", "Relu_1", "pool", "flat", "fc", "loss/log_softmax", "loss/label_index",
                                     "loss/pick", "loss/sum", "loss"]
    assert "SoftmaxCrossEntropyLoss" not in {n.op_type for n in train.graph.node}  # no CUDA kernel in stock ORT
    assert train.ir_version <= 10 and train.opset_import[0].version == 20
    gradcheck(model, "cross-entropy")


def test_forward_names_with_the_marker_are_rewritten():
    node = helper.make_node("Relu", ["x"], ["y"], name="/grad/Relu")
    train = build_training_graph(make_model([node], [], "y", {"x": rnd(2, 2)}), "mse")
    assert [n.name for n in train.graph.node if not is_backward_node(n)][0] == "/grad_/Relu"


def test_old_opset_is_upgraded():
    nodes = [helper.make_node("Unsqueeze", ["x"], ["u"], name="unsq", axes=[0]),  # opset-11 form
             helper.make_node("ReduceSum", ["u"], ["y"], name="sum", axes=[2], keepdims=0)]
    model = make_model(nodes, [], "y", {"x": rnd(3, 4)}, opset=11)
    model.ir_version = 6
    train, _ = gradcheck(model)
    assert train.opset_import[0].version == 17


def test_trainable_override_and_roles():
    model = one_op("Mul", {"a": rnd(2, 3), "b": rnd(3)})
    gradcheck(model, expect=["b"], trainable=["b"])
    model.graph.initializer[0].doc_string = "constant"
    gradcheck(model, expect=["b"])
    with pytest.raises(ModelError, match="not an initializer"):
        build_training_graph(model, "mse", trainable=["nope"])


def test_unsorted_graph_is_rejected():
    nodes = [helper.make_node("Relu", ["h"], ["y"], name="second"),
             helper.make_node("Neg", ["x"], ["h"], name="first")]
    with pytest.raises(ModelError, match="topological order"):
        build_training_graph(make_model(nodes, [], "y", {"x": rnd(2)}), "mse")


def test_bad_arguments():
    model = one_op("Relu", {"x": rnd(2, 2)})
    with pytest.raises(ModelError, match="unknown loss"):
        build_training_graph(model, "hinge")
    with pytest.raises(ModelError, match="already has a value named 'y'"):
        build_training_graph(model, "mse", label_name="y")


def test_every_rule_is_exercised_here():
    """A new rule needs a finite-difference test in this file."""
    text = open(__file__).read()
    missing = [op for op in supported_ops() if f'"{op}"' not in text]
    assert not missing, f"rules without a test: {missing}"


def test_float64_double_check_of_conv_weight_formula_by_numpy():
    """The Conv dW formula on grouped, strided, dilated, padded input against a direct numpy sum."""
    x, w = f32(2, 4, 7, 6), f32(6, 2, 3, 2)
    attrs = dict(group=2, strides=[2, 1], dilations=[1, 2], pads=[1, 0, 0, 1])
    train = build_training_graph(one_op("Conv", {"x": x, "w": w}, **attrs), "mse")
    feeds = random_feeds(train, np.random.default_rng(3))
    sess = session(train)
    gw = sess.run(["grad.w"], feeds)[0]
    # direct: y = conv(x, w); dL/dy = 2 (y - t) / n; dW[o, c, i, j] = sum dy[n, o, p, q] xpad[n, g*2+c, 2p+i, q+2j]
    xp = np.pad(x.astype(np.float64), [(0, 0), (0, 0), (1, 0), (0, 1)])
    ho, wo = feeds["labels"].shape[2:]
    y = np.zeros((2, 6, ho, wo))
    for o in range(6):
        gi = o // 3
        for i in range(3):
            for j in range(2):
                patch = xp[:, gi * 2:gi * 2 + 2, i:i + 2 * ho:2, 2 * j:2 * j + wo]
                y[:, o] += np.einsum("ncpq,c->npq", patch, w[o, :, i, j].astype(np.float64))
    dy = 2 * (y - feeds["labels"]) / y.size
    ref = np.zeros_like(w, dtype=np.float64)
    for o in range(6):
        gi = o // 3
        for i in range(3):
            for j in range(2):
                patch = xp[:, gi * 2:gi * 2 + 2, i:i + 2 * ho:2, 2 * j:2 * j + wo]
                ref[o, :, i, j] = np.einsum("ncpq,npq->c", patch, dy[:, o])
    np.testing.assert_allclose(gw, ref, rtol=1e-3, atol=1e-5)



def test_conv_input_gradient_has_symmetric_conv_transpose_pads():
    """onnxruntime's CUDA provider leaves a ConvTranspose with asymmetric pads to the CPU, so the input
    gradient of an asymmetrically padded Conv uses symmetric pads and a Slice (values: the FD tests above)."""
    x, w = f32(1, 2, 9, 9), f32(2, 2, 3, 3)
    train = build_training_graph(one_op("Conv", {"x": x, "w": w}, pads=[2, 1, 0, 2]), "mse")
    cts = [n for n in train.graph.node if n.op_type == "ConvTranspose"]
    assert cts
    for n in cts:
        pads = next(list(a.ints) for a in n.attribute if a.name == "pads")
        assert pads[:2] == pads[2:], pads
    assert any(n.op_type == "Slice" for n in train.graph.node)


@pytest.mark.parametrize("op", ["ReduceMax", "ReduceMin"])
@pytest.mark.parametrize("keepdims", [0, 1])
def test_reduce_max_min(op, keepdims):
    """torch's amax/amin and max(dim).values (PointNet-style global max pooling)."""
    gradcheck(one_op(op, {"x": rnd(2, 3, 4)}, inputs=["x", "a"], consts={"a": np.array([1])}, keepdims=keepdims),
              expect=["x"])
    gradcheck(one_op(op, {"x": rnd(2, 3, 4)}, axes=[0, 2], keepdims=keepdims, opset=17), expect=["x"])


def test_reduce_max_shares_a_tie():
    """A tie (e.g. ReLU zeros) shares the gradient evenly, as torch.amax does: the sum over the slice is kept."""
    from remc.passes.grad import build_training_graph
    x = np.array([[1.0, 3.0, 3.0], [0.0, 0.0, 0.0]])
    train = build_training_graph(one_op("ReduceMax", {"x": x}, axes=[1], keepdims=0, opset=17), "mse")
    out = dict(zip([o.name for o in train.graph.output], session(train).run(None, {"labels": np.zeros(2)})))
    g = out["grad.x"]
    assert g[0, 0] == 0 and g[0, 1] == g[0, 2] != 0 and np.allclose(g[1], g[1, 0])


@pytest.mark.parametrize("exclusive,reverse", [(0, 0), (1, 0), (0, 1), (1, 1)])
def test_cumsum(exclusive, reverse):
    """torch.cumsum (position ids in Hugging Face exports) and ONNX's exclusive/reverse variants."""
    gradcheck(one_op("CumSum", {"x": rnd(3, 4)}, inputs=["x", "a"], consts={"a": np.array(1)},
                     exclusive=exclusive, reverse=reverse), expect=["x"])


@pytest.mark.parametrize("eq,shapes", [("bi,ij->bj", [(3, 4), (4, 5)]), ("bhqd,bhkd->bhqk", [(2, 2, 3, 4), (2, 2, 5, 4)]),
                                       ("ij,jk", [(3, 4), (4, 2)]), ("...d,de->...e", [(2, 3, 4), (4, 5)]),
                                       ("ij,k->ik", [(3, 4), (2,)]), ("i,i->", [(5,), (5,)])])
def test_einsum(eq, shapes):
    """torch.einsum exports Einsum: every operand's gradient, including an index summed out of one operand
    only ('ij,k->ik': j) and an implicit output ('ij,jk')."""
    params = {f"x{k}": rnd(*s) for k, s in enumerate(shapes)}
    gradcheck(one_op("Einsum", params, equation=eq), expect=list(params))


@pytest.mark.parametrize("op", ["Tan", "Atan", "Asin", "Acos", "Sinh", "Cosh"])
def test_trigonometric(op):
    x = (np.tanh(rnd(3, 4)) * 0.6).astype(np.float32)  # inside Asin/Acos's domain, away from Tan's poles; ONNX Runtime's
    gradcheck(one_op(op, {"x": x}), expect=["x"])  # CPU kernels of these are float only


@pytest.mark.parametrize("op,attrs", [("Selu", {}), ("Selu", {"alpha": 1.2, "gamma": 0.9}), ("Celu", {}),
                                      ("Celu", {"alpha": 0.5})])
def test_selu_celu(op, attrs):
    gradcheck(one_op(op, {"x": rnd(3, 4, dtype=np.float32)}, **attrs), expect=["x"])  # float-only kernels


@pytest.mark.parametrize("op", ["ReduceL2", "ReduceL1", "ReduceLogSumExp"])
@pytest.mark.parametrize("keepdims", [0, 1])
def test_norm_reductions(op, keepdims):
    """F.normalize / .norm() (ReduceL2), .abs().sum() as ReduceL1, torch.logsumexp."""
    gradcheck(one_op(op, {"x": rnd(2, 3, 4)}, inputs=["x", "a"], consts={"a": np.array([-1])}, keepdims=keepdims),
              expect=["x"])
    gradcheck(one_op(op, {"x": rnd(2, 3, 4)}, keepdims=keepdims), expect=["x"])  # every axis


def test_reduce_l2_of_a_zero_slice_is_zero():
    """F.normalize of an all-zero row: no NaN (torch clamps the norm; remc's subgradient there is 0)."""
    x = np.array([[3.0, 4.0], [0.0, 0.0]])
    train = build_training_graph(one_op("ReduceL2", {"x": x}, axes=[1], keepdims=0, opset=17), "mse")
    out = dict(zip([o.name for o in train.graph.output], session(train).run(None, {"labels": np.zeros(2)})))
    assert np.isfinite(out["grad.x"]).all() and (out["grad.x"][1] == 0).all()


@pytest.mark.parametrize("upper,k", [(1, None), (0, None), (1, 1), (0, -1)])
def test_trilu(upper, k):
    consts = {} if k is None else {"k": np.array(k)}
    gradcheck(one_op("Trilu", {"x": rnd(2, 4, 4)}, inputs=["x"] + ([] if k is None else ["k"]), consts=consts,
                     upper=upper), expect=["x"])


@pytest.mark.parametrize("largest,axis", [(1, -1), (0, 1)])
def test_topk(largest, axis):
    """torch.topk and torch.sort values: the gradient goes back to the selected positions."""
    gradcheck(one_op("TopK", {"x": rnd(3, 5)}, inputs=["x", "k"], consts={"k": np.array([2])}, n_out=2,
                     largest=largest, axis=axis), expect=["x"])


@pytest.mark.parametrize("reduction", ["none", "add"])
def test_scatter_nd(reduction):
    """Both the data and the updates get gradients (Swin V2's qkv bias: a slice of a parameter set to zero)."""
    consts = {"i": np.array([[1], [3]])}
    gradcheck(one_op("ScatterND", {"d": rnd(5, 3), "u": rnd(2, 3)}, inputs=["d", "i", "u"], consts=consts,
                     reduction=reduction), expect=["d", "u"])


@pytest.mark.parametrize("reduction", ["none", "add"])
def test_scatter_elements(reduction):
    consts = {"i": np.array([[0, 2], [1, 0]])}
    gradcheck(one_op("ScatterElements", {"d": rnd(2, 4), "u": rnd(2, 2)}, inputs=["d", "i", "u"], consts=consts,
                     axis=1, reduction=reduction), expect=["d", "u"])


def test_shapes_computed_from_folded_shapes():
    """torchvision's Swin pads each window to a multiple of its size: pads computed from Shape (Gather, Mod, Sub,
    Concat), then a Reshape whose target is computed from the padded tensor's Shape. Folding and shape inference
    alternate until that second shape is known."""
    c = {"one": np.array(1), "two": np.array(2), "z3": np.zeros(3, dtype=np.int64), "ax0": np.array([0]),
         "lead": np.array([1, 2])}
    nodes = [helper.make_node("MatMul", ["x", "w"], ["xw"], name="mm"),
             helper.make_node("Shape", ["xw"], ["s"], name="s"),
             helper.make_node("Gather", ["s", "one"], ["d"], name="d"),
             helper.make_node("Mod", ["d", "two"], ["r"], name="r"),
             helper.make_node("Sub", ["two", "r"], ["p"], name="p"),
             helper.make_node("Unsqueeze", ["p", "ax0"], ["p1"], name="p1"),
             helper.make_node("Concat", ["z3", "p1"], ["pads"], name="pads", axis=0),
             helper.make_node("Pad", ["xw", "pads"], ["y1"], name="pad"),
             helper.make_node("Shape", ["y1"], ["s2"], name="s2"),
             helper.make_node("Gather", ["s2", "one"], ["d2"], name="d2"),
             helper.make_node("Div", ["d2", "two"], ["h"], name="h"),
             helper.make_node("Unsqueeze", ["h", "ax0"], ["h1"], name="h1"),
             helper.make_node("Concat", ["lead", "h1"], ["shape"], name="shape", axis=0),
             helper.make_node("Reshape", ["y1", "shape"], ["y2"], name="reshape"),
             helper.make_node("ReduceSum", ["y2", "ax0"], ["y"], name="sum", keepdims=0)]
    x = helper.make_tensor_value_info("x", TensorProto.DOUBLE, [1, 4])
    model = make_model(nodes, [x], "y", {"w": rnd(4, 5)}, consts=c)
    gradcheck(model, expect=["w"])


def test_several_outputs_need_logits_and_the_others_are_dropped():
    """torchvision's GoogLeNet in training mode also returns its auxiliary classifiers' logits: remc grad asks
    which output the loss reads (--logits); the other outputs and what only they need leave the graph."""
    nodes = [helper.make_node("MatMul", ["x", "w"], ["y"], name="main"),
             helper.make_node("MatMul", ["x", "v"], ["h"], name="aux0"),
             helper.make_node("Relu", ["h"], ["aux"], name="aux1")]
    x = helper.make_tensor_value_info("x", TensorProto.DOUBLE, [3, 4])
    model = make_model(nodes, [x], "y", {"w": rnd(4, 5), "v": rnd(4, 2)})
    model.graph.output.append(helper.make_empty_tensor_value_info("aux"))
    with pytest.raises(ModelError, match=r"2 outputs \(y, aux\).*--logits"):
        build_training_graph(model, "mse")
    with pytest.raises(ModelError, match=r"--logits 'z' is not an output of the model; its outputs are y, aux"):
        build_training_graph(model, "mse", logits="z")
    train, _ = gradcheck(model, logits="y", expect=["w"])
    assert "grad.v" not in {o.name for o in train.graph.output}
    assert not {"aux0", "aux1"} & {n.name for n in train.graph.node}


@pytest.mark.parametrize("keepdims", [0, 1])
def test_reduce_prod(keepdims):
    """torch.prod; slices with one zero and with two zeros too (the product is multilinear, so finite differences
    hold there)."""
    gradcheck(one_op("ReduceProd", {"x": rnd(2, 3, 4)}, inputs=["x", "a"], consts={"a": np.array([2])},
                     keepdims=keepdims), expect=["x"])
    x = rnd(3, 4)
    x[1, 2] = 0.0
    x[2, 0] = x[2, 3] = 0.0
    gradcheck(one_op("ReduceProd", {"x": x}, inputs=["x", "a"], consts={"a": np.array([1])}, keepdims=keepdims),
              expect=["x"])
