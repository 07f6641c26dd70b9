"""Models exported by torch.onnx in training mode, differentiated by remc, compared with torch autograd.

Two exporters:
- legacy (dynamo=False, training=TRAINING, do_constant_folding=False): BatchNormalization nodes with
  training_mode=1 and three outputs, Constant nodes, Dropout with ratio/training_mode inputs;
- dynamo (dynamo=True, optimize=False): inference-form BatchNormalization in a train-mode model, Conv
  biases built from Shape/Expand/CastLike of constants. (With optimize=True the exporter's optimizer folds
  those BatchNormalization nodes into the Conv weights using the running statistics, which is an
  inference graph: not a model to train.)

Same weights and inputs on both sides; float32; loss and parameter gradients must match torch's to
float32 rounding (1e-4 of each gradient's norm, plus 1e-6 for gradients that are zero up to rounding).
"""
from __future__ import annotations

import io

import numpy as np
import onnx
import onnx.numpy_helper
import pytest
from grad_helpers import gradcheck, session

torch = pytest.importorskip("torch")
nn = torch.nn

pytestmark = pytest.mark.torch


class Block(nn.Module):
    """A ResNet basic block."""

    def __init__(self, c: int) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(c, c, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(c)
        self.conv2 = nn.Conv2d(c, c, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(c)

    def forward(self, x):
        return torch.relu(x + self.bn2(self.conv2(torch.relu(self.bn1(self.conv1(x))))))


class SmallNet(nn.Module):
    """conv-bn-relu-maxpool stem, a residual block, global average pooling, a linear classifier."""

    def __init__(self, classes: int = 5, dropout: float = 0.0) -> None:
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 8, 3, stride=2, padding=1, bias=True), nn.BatchNorm2d(8),
                                  nn.ReLU(), nn.MaxPool2d(3, 2, 1))
        self.block = Block(8)
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.drop = nn.Dropout(dropout)
        self.fc = nn.Linear(8, classes)

    def forward(self, x):
        return self.fc(self.drop(torch.flatten(self.pool(self.block(self.stem(x))), 1)))


class TinyGPT(nn.Module):
    """Token + position embeddings, one pre-LN transformer block (causal attention, GELU MLP), LM head."""

    def __init__(self, vocab: int = 11, t: int = 6, d: int = 8, heads: int = 2) -> None:
        super().__init__()
        self.tok, self.pos = nn.Embedding(vocab, d), nn.Embedding(t, d)
        self.ln1, self.ln2, self.lnf = nn.LayerNorm(d), nn.LayerNorm(d), nn.LayerNorm(d)
        self.qkv, self.proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.fc1, self.fc2 = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)
        self.head = nn.Linear(d, vocab, bias=False)
        self.heads, self.t, self.d = heads, t, d
        self.register_buffer("mask", torch.tril(torch.ones(t, t, dtype=torch.bool)))

    def forward(self, ids):
        b, t = ids.shape
        x = self.tok(ids) + self.pos(torch.arange(t))
        q, k, v = self.qkv(self.ln1(x)).split(self.d, dim=2)
        hd = self.d // self.heads
        q, k, v = (z.reshape(b, t, self.heads, hd).transpose(1, 2) for z in (q, k, v))
        att = (q @ k.transpose(-2, -1)) / hd ** 0.5
        att = att.masked_fill(~self.mask[:t, :t], float("-inf")).softmax(-1)
        y = (att @ v).transpose(1, 2).reshape(b, t, self.d)
        x = x + self.proj(y)
        x = x + self.fc2(nn.functional.gelu(self.fc1(self.ln2(x))))
        return self.head(self.lnf(x))


def export(net: nn.Module, x: torch.Tensor, dynamo: bool, opset: int | None = None) -> onnx.ModelProto:
    """torch.onnx.export of ``net`` in training mode (see the module docstring)."""
    net.train()
    f = io.BytesIO()
    if dynamo:
        pytest.importorskip("onnxscript")
        prog = torch.onnx.export(net, (x,), dynamo=True, optimize=False, input_names=["x"], output_names=["y"])
        return prog.model_proto
    torch.onnx.export(net, (x,), f, dynamo=False, training=torch.onnx.TrainingMode.TRAINING,
                      do_constant_folding=False, input_names=["x"], output_names=["y"], opset_version=opset)
    return onnx.load_from_string(f.getvalue())


def sync_buffers(net: nn.Module, model: onnx.ModelProto) -> None:
    """Give ``net`` the running statistics the export wrote (tracing ran a training-mode forward)."""
    inits = {t.name: onnx.numpy_helper.to_array(t) for t in model.graph.initializer}
    with torch.no_grad():
        for name, buf in net.named_buffers():
            if name in inits and buf.dtype.is_floating_point:
                buf.copy_(torch.from_numpy(inits[name].copy()))


def torch_reference(net: nn.Module, x: torch.Tensor, labels: torch.Tensor, class_axis_last: bool = False):
    """Loss, parameter gradients and running statistics after one training-mode forward/backward."""
    net.train()
    net.zero_grad()
    before = {k: v.clone() for k, v in net.state_dict().items()}
    y = net(x)
    if class_axis_last:
        y = y.reshape(-1, y.shape[-1])
        labels = labels.reshape(-1)
    loss = nn.functional.cross_entropy(y, labels)
    loss.backward()
    grads = {k: p.grad.detach().numpy().copy() for k, p in net.named_parameters()}
    after = {k: v.detach().numpy().copy() for k, v in net.state_dict().items()}
    net.load_state_dict(before)
    return float(loss), grads, after, before


def compare(train: onnx.ModelProto, net: nn.Module, feeds: dict, loss, grads) -> dict:
    """Run the training graph and compare its loss and gradients with torch's; return its outputs."""
    names = [o.name for o in train.graph.output]
    out = dict(zip(names, session(train).run(None, feeds)))
    np.testing.assert_allclose(out["loss"], loss, rtol=1e-5)
    params = dict(net.named_parameters())
    for name, g in grads.items():
        assert f"grad.{name}" in out, f"no gradient output for parameter {name}"
        got = out[f"grad.{name}"]
        assert got.shape == tuple(params[name].shape)
        err = np.abs(got - g).max()
        # atol: a Conv bias before BatchNorm has a zero gradient, computed as rounding noise on both sides
        assert err <= 1e-4 * np.linalg.norm(g) + 1e-6, f"grad.{name}: max error {err:.3g}"
    return out


def check_running_stats(out: dict, net: nn.Module, after: dict, before: dict, n_per_channel: dict) -> None:
    """remc's updated statistics follow ONNX (population variance); torch's running_var uses the unbiased
    variance: convert torch's to the ONNX definition before comparing."""
    for name, mod in net.named_modules():
        if not isinstance(mod, nn.BatchNorm2d):
            continue
        m = 1 - mod.momentum
        np.testing.assert_allclose(out[f"{name}.running_mean.updated"], after[f"{name}.running_mean"],
                                   rtol=1e-5, atol=1e-6)
        n = n_per_channel[name]
        var_unbiased = (after[f"{name}.running_var"] - m * before[f"{name}.running_var"].numpy()) / (1 - m)
        expect = m * before[f"{name}.running_var"].numpy() + (1 - m) * var_unbiased * (n - 1) / n
        np.testing.assert_allclose(out[f"{name}.running_var.updated"], expect, rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize("dynamo", [False, True], ids=["legacy", "dynamo"])
def test_small_resnet_matches_torch(dynamo):
    from remc.passes.grad import build_training_graph
    torch.manual_seed(0)
    net = SmallNet()
    with torch.no_grad():  # non-trivial BN affine parameters and running statistics
        for mod in net.modules():
            if isinstance(mod, nn.BatchNorm2d):
                mod.weight.uniform_(0.5, 1.5)
                mod.bias.normal_(0, 0.1)
                mod.running_mean.normal_(0, 0.1)
                mod.running_var.uniform_(0.5, 1.5)
    x = torch.randn(4, 3, 16, 16)
    labels = torch.tensor([0, 3, 1, 4])
    model = export(net, x, dynamo)
    sync_buffers(net, model)
    loss, grads, after, before = torch_reference(net, x, labels)
    train = build_training_graph(model, "cross-entropy")
    assert not any(n.op_type == "BatchNormalization" for n in train.graph.node)
    out = compare(train, net, {"x": x.numpy(), "labels": labels.numpy()}, loss, grads)
    n = {"stem.1": 4 * 8 * 8, "block.bn1": 4 * 4 * 4, "block.bn2": 4 * 4 * 4}
    check_running_stats(out, net, after, before, n)
    bn_stats = [o.name for o in train.graph.output if o.name.endswith(".updated")]
    assert len(bn_stats) == 6


@pytest.mark.parametrize("dynamo", [False, True], ids=["legacy", "dynamo"])
def test_dropout_model_exports_differentiate(dynamo):
    """With dropout on, torch and ONNX Runtime draw different masks: check finite differences instead
    (gradcheck's FD re-runs would draw new masks too, so compare at ratio 0 and only build at 0.3)."""
    from remc.passes.grad import build_training_graph
    torch.manual_seed(1)
    x = torch.randn(2, 3, 16, 16)
    train = build_training_graph(export(SmallNet(dropout=0.3), x, dynamo), "cross-entropy")
    drops = [n for n in train.graph.node if n.op_type == "Dropout"]
    assert len(drops) == 1 and len(drops[0].output) == 2
    out = session(train).run(None, {"x": x.numpy(), "labels": np.array([1, 2])})
    assert np.isfinite(out[0])


def test_small_resnet_finite_differences():
    torch.manual_seed(2)
    model = export(SmallNet(), torch.randn(2, 3, 12, 12), dynamo=False)
    gradcheck(model, "cross-entropy", label_high=5, n_dirs=1, eps=1e-3, rtol=5e-3)


@pytest.mark.parametrize("dynamo,opset", [(False, None), (False, 14), (True, None)],
                         ids=["legacy", "legacy-opset14", "dynamo"])
def test_tiny_gpt_matches_torch(dynamo, opset):
    """At opset 14 the legacy exporter decomposes LayerNorm (ReduceMean, Sub, Pow, Sqrt, Div) and GELU
    (Div, Erf, Add, Mul); remc upgrades the model to opset 17 first."""
    from remc.passes.grad import build_training_graph
    torch.manual_seed(3)
    net = TinyGPT()
    ids = torch.randint(0, 11, (2, 6))
    labels = torch.randint(0, 11, (2, 6))
    model = export(net, ids, dynamo, opset)
    if opset == 14:
        assert "LayerNormalization" not in {n.op_type for n in model.graph.node}
    loss, grads, _, _ = torch_reference(net, ids, labels, class_axis_last=True)
    train = build_training_graph(model, "cross-entropy")
    compare(train, net, {"x": ids.numpy(), "labels": labels.numpy()}, loss, grads)


class ConvNeXtish(nn.Module):
    """GroupNorm (exported as Reshape + InstanceNormalization + Mul + Add), reflection padding, a depthwise
    7x7 convolution, channels-last LayerNorm and GELU, a layer scale: ops of modern vision models."""

    def __init__(self) -> None:
        super().__init__()
        self.stem = nn.Sequential(nn.ReflectionPad2d(1), nn.Conv2d(3, 8, 3), nn.GroupNorm(2, 8))
        self.dw = nn.Conv2d(8, 8, 7, padding=3, groups=8)
        self.ln = nn.LayerNorm(8)
        self.fc = nn.Linear(8, 16)
        self.gamma = nn.Parameter(torch.full((16,), 0.5))
        self.head = nn.Linear(16, 5)

    def forward(self, x):
        y = self.stem(x)
        y = self.dw(y).permute(0, 2, 3, 1)
        y = self.gamma * nn.functional.gelu(self.fc(self.ln(y)))
        return self.head(y.mean((1, 2)))


@pytest.mark.parametrize("dynamo", [False, True], ids=["legacy", "dynamo"])
def test_groupnorm_reflectionpad_model_matches_torch(dynamo):
    from remc.passes.grad import build_training_graph
    torch.manual_seed(3)
    net = ConvNeXtish()
    with torch.no_grad():
        net.stem[2].weight.uniform_(0.5, 1.5)
        net.stem[2].bias.normal_(0, 0.1)
    x = torch.randn(3, 3, 12, 12)
    labels = torch.tensor([0, 3, 1])
    model = export(net, x, dynamo)
    loss, grads, _, _ = torch_reference(net, x, labels)
    train = build_training_graph(model, "cross-entropy")
    compare(train, net, {"x": x.numpy(), "labels": labels.numpy()}, loss, grads)


def test_dynamo_export_with_its_optimizer_is_refused():
    """torch.onnx.export(dynamo=True)'s optimizer (on by default) folds parameters into constants (Linear
    weights transposed into val_<k> initializers): the file is not the model to train, and remc says how to
    export it instead of training the folded copies and the exporter's constants."""
    from remc.ir.errors import ModelError
    from remc.passes.grad import build_training_graph
    pytest.importorskip("onnxscript")
    torch.manual_seed(3)
    net = ConvNeXtish().train()
    prog = torch.onnx.export(net, (torch.randn(2, 3, 12, 12),), dynamo=True, input_names=["x"], output_names=["y"])
    with pytest.raises(ModelError, match="optimize=False"):
        build_training_graph(prog.model_proto, "cross-entropy")


class SetNet(nn.Module):
    """nn.MultiheadAttention over a set, max pooling over it (ReduceMax), a gated linear unit, torch.einsum and
    torch.cumsum: ops a user's own model brings that the zoo has not."""

    def __init__(self, d: int = 16) -> None:
        super().__init__()
        self.inp = nn.Linear(6, d)
        self.att = nn.MultiheadAttention(d, 2, batch_first=True)
        self.ln = nn.LayerNorm(d)
        self.glu = nn.Linear(d, 2 * d)
        self.w = nn.Parameter(torch.randn(d, d) * 0.1)
        self.out = nn.Linear(d, 5)

    def forward(self, x):
        h = self.inp(x)
        a, _ = self.att(h, h, h, need_weights=False)
        h = self.ln(h + a)
        p, q = self.glu(h).chunk(2, dim=-1)
        h = torch.einsum("bsi,ij->bsj", torch.tanh(p) * torch.sigmoid(q), self.w)
        h = h.cumsum(1) * 0.1
        return self.out(h.max(1).values)


@pytest.mark.parametrize("dynamo", [False, True], ids=["legacy", "dynamo"])
def test_attention_set_model_matches_torch(dynamo):
    from remc.passes.grad import build_training_graph
    torch.manual_seed(5)
    net = SetNet()
    x = torch.randn(4, 7, 6)
    labels = torch.tensor([0, 3, 1, 4])
    model = export(net, x, dynamo)
    assert {"ReduceMax", "CumSum", "Einsum"} <= {n.op_type for n in model.graph.node}
    loss, grads, _, _ = torch_reference(net, x, labels)
    compare(build_training_graph(model, "cross-entropy"), net, {"x": x.numpy(), "labels": labels.numpy()}, loss,
            grads)
