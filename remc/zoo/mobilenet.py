"""MobileNet v1 (Howard et al. 2017) and MobileNetV2 (Sandler et al. 2018), keras.applications layout.

v1: a 3x3/2 conv then 13 depthwise-separable blocks (3x3 depthwise conv, BN, ReLU, 1x1 pointwise
conv, BN, ReLU), no conv biases; global average pool and the logits layer. The paper's ReLU is used
(Keras uses ReLU6; the shapes and costs are the same). Keras' 1e-3 head dropout is left out.
4,253,864 weights at alpha 1, 1000 classes (4,231,976 trainable + 21,888 BN running statistics).

v2: inverted residual blocks (1x1 expansion, 3x3 depthwise, 1x1 linear projection, each with BN;
ReLU6 after the first two; a residual Add when stride is 1 and widths match), last 1x1 conv to 1280,
pool and logits. ReLU6 is ``Clip(x, 0, 6)``. 3,538,984 weights (3,504,872 trainable).
"""
from __future__ import annotations

import onnx

from remc.ir.errors import ModelError
from remc.zoo.builder import GraphBuilder, image_input, logits_output

V1_BLOCKS = ((64, 1), (128, 2), (128, 1), (256, 2), (256, 1), (512, 2), (512, 1), (512, 1),
             (512, 1), (512, 1), (512, 1), (1024, 2), (1024, 1))
"""(pointwise width, depthwise stride) of the 13 v1 blocks."""
V2_SETTINGS = ((1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2), (6, 96, 3, 1),
               (6, 160, 3, 2), (6, 320, 1, 1))
"""(expansion t, width c, repeats n, first stride s) of the v2 stages."""


def _check_size(name: str, height: int, width: int) -> None:
    if height % 32 or width % 32:
        raise ModelError(f"{name}: height and width must be multiples of 32, got {height}x{width}")


def make_divisible(v: float, divisor: int = 8) -> int:
    """Round a width to a multiple of ``divisor``, never more than 10% below ``v`` (Keras/torchvision)."""
    new_v = max(divisor, int(v + divisor / 2) // divisor * divisor)
    return new_v + divisor if new_v < 0.9 * v else new_v


def _conv_bn_act(b: GraphBuilder, x: str, scope: str, tag: str, cin: int, cout: int, k: int,
                 stride: int = 1, groups: int = 1, act: str | None = "relu") -> str:
    """Conv (no bias) -> BN -> activation; nodes "{scope}/{tag}", "{scope}/{tag}_bn", "{scope}/{tag}_relu"."""
    x = b.conv(x, f"{scope}/{tag}", cin, cout, k, stride=stride, groups=groups, bias=False)
    x = b.batchnorm(x, f"{scope}/{tag}_bn", cout)
    if act == "relu":
        return b.relu(x, f"{scope}/{tag}_relu")
    if act == "relu6":
        return b.relu6(x, f"{scope}/{tag}_relu6")
    return x


def _head(b: GraphBuilder, x: str, cin: int, num_classes: int) -> str:
    x = b.flatten_pool(x, "head")
    w = b.param("classifier.weight", (num_classes, cin), std=(1.0 / cin) ** 0.5)
    return b.node("Gemm", [x, w, b.param("classifier.bias", (num_classes,))], "classifier",
                  out="logits", transB=1)


def build_mobilenet(batch: int, b: GraphBuilder, *, height: int = 224, width: int = 224,
                    num_classes: int = 1000, width_mult: float = 1.0) -> onnx.ModelProto:
    """MobileNet v1: input [batch, 3, height, width] -> logits [batch, classes]; width_mult is alpha."""
    _check_size("mobilenet", height, width)
    cin = max(1, round(32 * width_mult))
    x = _conv_bn_act(b, "input", "stem", "conv", 3, cin, 3, stride=2)
    for i, (ch, stride) in enumerate(V1_BLOCKS, start=1):
        cout = max(1, round(ch * width_mult))
        x = _conv_bn_act(b, x, f"block{i}", "dw", cin, cin, 3, stride=stride, groups=cin)
        x = _conv_bn_act(b, x, f"block{i}", "pw", cin, cout, 1)
        cin = cout
    _head(b, x, cin, num_classes)
    return b.model("mobilenet", [image_input(batch, 3, height, width)],
                   [logits_output([batch, num_classes])])


def inverted_residual(b: GraphBuilder, x: str, scope: str, cin: int, cout: int, t: int,
                      stride: int) -> str:
    """A MobileNetV2 block: [expand] -> depthwise -> linear projection [-> Add]."""
    hidden = cin * t
    h = x if t == 1 else _conv_bn_act(b, x, scope, "expand", cin, hidden, 1, act="relu6")
    h = _conv_bn_act(b, h, scope, "dw", hidden, hidden, 3, stride=stride, groups=hidden, act="relu6")
    h = _conv_bn_act(b, h, scope, "project", hidden, cout, 1, act=None)
    return b.node("Add", [h, x], f"{scope}/add") if stride == 1 and cin == cout else h


def build_mobilenet_v2(batch: int, b: GraphBuilder, *, height: int = 224, width: int = 224,
                       num_classes: int = 1000, width_mult: float = 1.0) -> onnx.ModelProto:
    """MobileNetV2: input [batch, 3, height, width] -> logits [batch, classes]; width_mult is alpha."""
    _check_size("mobilenet_v2", height, width)
    cin = make_divisible(32 * width_mult)
    x = _conv_bn_act(b, "input", "stem", "conv", 3, cin, 3, stride=2, act="relu6")
    block = 0
    for t, c, n, s in V2_SETTINGS:
        cout = make_divisible(c * width_mult)
        for j in range(n):
            x = inverted_residual(b, x, f"block{block}", cin, cout, t, s if j == 0 else 1)
            cin, block = cout, block + 1
    last = make_divisible(1280 * max(1.0, width_mult))
    x = _conv_bn_act(b, x, "last", "conv", cin, last, 1, act="relu6")
    _head(b, x, last, num_classes)
    return b.model("mobilenet_v2", [image_input(batch, 3, height, width)],
                   [logits_output([batch, num_classes])])
