"""ResNet50 (He et al. 2016) with the layout of keras.applications.ResNet50, which the paper used.

Stem: 7x7/2 conv, BN, ReLU, 3x3/2 max pool. Four stages of bottleneck blocks (1x1, 3x3, 1x1 convs,
each followed by BN; ReLU after the first two and after the residual Add). As in Keras (ResNet v1),
the stride of a stage's first block is on its first 1x1 conv and on the projection shortcut, and the
convs have biases. Head: global average pool and the logits layer. 25,636,712 weights at 1000 classes
(25,583,592 trainable plus 53,120 BatchNorm running statistics), as Keras reports.
"""
from __future__ import annotations

import onnx

from remc.ir.errors import ModelError
from remc.zoo.builder import GraphBuilder, image_input, logits_output

STAGES = (3, 4, 6, 3)
"""Bottleneck blocks per stage."""


def _conv_bn(b: GraphBuilder, x: str, name: str, cin: int, cout: int, k: int, stride: int = 1,
             relu: bool = True, gamma: tuple[float, float] = (0.8, 1.2)) -> str:
    """Conv (with bias, as Keras) -> BN [-> ReLU]; name "layer1.0/conv1" gives ".../bn1", ".../relu1"."""
    scope, conv = name.rsplit("/", 1)
    suffix = conv.removeprefix("conv")
    x = b.conv(x, name, cin, cout, k, stride=stride)
    x = b.batchnorm(x, f"{scope}/bn{suffix}", cout, gamma=gamma)
    return b.relu(x, f"{scope}/relu{suffix}") if relu else x


def bottleneck(b: GraphBuilder, x: str, scope: str, cin: int, planes: int, stride: int) -> str:
    """One bottleneck block (output width 4 * planes) with a projection shortcut when needed."""
    h = _conv_bn(b, x, f"{scope}/conv1", cin, planes, 1, stride)
    h = _conv_bn(b, h, f"{scope}/conv2", planes, planes, 3)
    h = _conv_bn(b, h, f"{scope}/conv3", planes, 4 * planes, 1, relu=False, gamma=(0.1, 0.3))
    if stride != 1 or cin != 4 * planes:
        x = b.conv(x, f"{scope}/downsample.conv", cin, 4 * planes, 1, stride=stride)
        x = b.batchnorm(x, f"{scope}/downsample.bn", 4 * planes)
    h = b.node("Add", [h, x], f"{scope}/add")
    return b.relu(h, f"{scope}/relu")


def build_resnet50(batch: int, b: GraphBuilder, *, height: int = 224, width: int = 224,
                   num_classes: int = 1000, width_mult: float = 1.0,
                   stages: tuple[int, ...] = STAGES) -> onnx.ModelProto:
    """ResNet50 classifier: input [batch, 3, height, width] -> logits [batch, classes].

    ``width_mult`` scales every width (stem 64, stage widths 64..512); ``stages`` gives the blocks
    per stage (depth knob; (3, 4, 6, 3) is ResNet50). height and width must be multiples of 32.
    """
    if height % 32 or width % 32:
        raise ModelError(f"resnet50: height and width must be multiples of 32, got {height}x{width}")
    base = max(1, round(64 * width_mult))
    x = b.conv("input", "conv1", 3, base, 7, stride=2, pad=3)
    x = b.relu(b.batchnorm(x, "bn1", base), "relu")
    x = b.maxpool(x, "maxpool", k=3, stride=2, pad=1)
    cin = base
    for i, blocks in enumerate(stages, start=1):
        planes = base * 2 ** (i - 1)
        for j in range(blocks):
            stride = 2 if i > 1 and j == 0 else 1
            x = bottleneck(b, x, f"layer{i}.{j}", cin, planes, stride)
            cin = 4 * planes
    x = b.flatten_pool(x, "head")
    w = b.param("fc.weight", (num_classes, cin), std=(1.0 / cin) ** 0.5)
    b.node("Gemm", [x, w, b.param("fc.bias", (num_classes,))], "fc", out="logits", transB=1)
    return b.model("resnet50", [image_input(batch, 3, height, width)],
                   [logits_output([batch, num_classes])])
