"""VGG16 and VGG19 (Simonyan & Zisserman 2015; the layer layout of keras.applications.VGG16/19).

Conv blocks of 3x3 convolutions (bias, ReLU) each ending in a 2x2 max pool, then Flatten and the
classifier fc1, fc2 (ReLU, Dropout 0.5 as in the original paper) and the logits layer. Keras'
applications omit the classifier dropout; the parameter count is the same (VGG16 138,357,544 and
VGG19 143,667,240 at 224x224, 1000 classes).
"""
from __future__ import annotations

import onnx

from remc.ir.errors import ModelError
from remc.zoo.builder import GraphBuilder, image_input, logits_output

BLOCKS = {16: (2, 2, 3, 3, 3), 19: (2, 2, 4, 4, 4)}
"""Convolutions per block."""
CHANNELS = (64, 128, 256, 512, 512)


def vgg_features(b: GraphBuilder, x: str, convs: tuple[int, ...], width_mult: float,
                 in_channels: int = 3) -> tuple[list[str], int]:
    """The VGG conv blocks; returns each block's pooled output (pool1..poolK) and the last width."""
    pools, cin = [], in_channels
    for i, (n, ch) in enumerate(zip(convs, CHANNELS), start=1):
        cout = max(1, round(ch * width_mult))
        for j in range(1, n + 1):
            x = b.conv(x, f"block{i}/conv{j}", cin, cout, 3)
            x = b.relu(x, f"block{i}/relu{j}")
            cin = cout
        x = b.maxpool(x, f"block{i}/pool")
        pools.append(x)
    return pools, cin


def build_vgg(depth: int, batch: int, b: GraphBuilder, *, height: int = 224, width: int = 224,
              num_classes: int = 1000, width_mult: float = 1.0, fc_width: int = 4096,
              dropout: float = 0.5) -> onnx.ModelProto:
    """VGG-``depth`` (16 or 19) classifier: input [batch, 3, height, width] -> logits [batch, classes].

    ``width_mult`` scales the conv channels; ``fc_width`` is the width of fc1/fc2; ``dropout`` 0
    leaves the Dropout nodes out. height and width must be multiples of 32.
    """
    if height % 32 or width % 32:
        raise ModelError(f"vgg{depth}: height and width must be multiples of 32, got {height}x{width}")
    pools, c = vgg_features(b, "input", BLOCKS[depth], width_mult)
    x = b.node("Flatten", [pools[-1]], "flatten", axis=1)
    fin = c * (height // 32) * (width // 32)
    for i, fout in ((1, fc_width), (2, fc_width)):
        x = b.relu(b.linear(x, f"fc{i}", fin, fout), f"fc{i}/relu")
        if dropout > 0:
            x = b.dropout(x, f"fc{i}/dropout", dropout)
        fin = fout
    w = b.param("predictions.weight", (num_classes, fin), std=(1.0 / fin) ** 0.5)
    bias = b.param("predictions.bias", (num_classes,))
    b.node("Gemm", [x, w, bias], "predictions", out="logits", transB=1)
    return b.model(f"vgg{depth}", [image_input(batch, 3, height, width)],
                   [logits_output([batch, num_classes])])
