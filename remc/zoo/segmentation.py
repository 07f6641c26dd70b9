"""U-Net, FCN8 and SegNet with VGG16 encoders, after keras_segmentation (divamgupta/image-segmentation-keras)
``vgg_unet``, ``fcn_8_vgg`` and ``vgg_segnet``: the models the Checkmate artifact evaluated (its default
resolution 416x608, 19 Cityscapes classes).

Layout NCHW; logits [N, classes, H, W] at the input resolution. Differences from keras_segmentation:
- U-Net and SegNet end at half resolution there; with ``full_resolution`` (default) a final nearest
  2x Resize of the logits brings them to H x W (``full_resolution=False`` keeps keras' H/2 x W/2).
- FCN8's last 16x16/8 transposed conv is cropped by 4 on each side (ONNX pads) to exactly H x W;
  Keras leaves it uncropped (H+8 x W+8). Its 4x4/2 transposed convs are cropped by 1 on each side
  (same size as keras' ``crop`` at the bottom/right): onnxruntime-gpu's CUDA provider does not take a
  ConvTranspose with asymmetric pads, and the graph must run with every node on CUDA.
- keras' ZeroPadding2D + 'valid' 3x3 conv is one Conv with pads 1.
SegNet here is keras_segmentation's: 2x nearest upsampling (UpSampling2D, here Resize) in the decoder,
not the original paper's MaxUnpool with pooling indices, and its decoder convs have BN but no ReLU.
"""
from __future__ import annotations

import onnx

from remc.ir.errors import ModelError
from remc.zoo.builder import GraphBuilder, image_input, logits_output
from remc.zoo.vgg import BLOCKS, vgg_features

NUM_CLASSES = 19


def _check_size(name: str, height: int, width: int) -> None:
    if height % 32 or width % 32:
        raise ModelError(f"{name}: height and width must be multiples of 32, got {height}x{width}")


def _ch(c: int, width_mult: float) -> int:
    return max(1, round(c * width_mult))


def _score(b: GraphBuilder, x: str, name: str, cin: int, batch: int, classes: int, height: int,
           width: int, full_resolution: bool) -> onnx.ModelProto:
    """The half-resolution score conv, the 2x upsampling to H x W (or not) and the model."""
    if not full_resolution:
        b.conv(x, "decoder/score", cin, classes, 3, gain=1.0, out="logits")
        out_hw = (height // 2, width // 2)
    else:
        x = b.conv(x, "decoder/score", cin, classes, 3, gain=1.0)
        b.upsample(x, "upsample_logits", (height, width), out="logits")
        out_hw = (height, width)
    return b.model(name, [image_input(batch, 3, height, width)],
                   [logits_output([batch, classes, *out_hw])])


def build_unet(batch: int, b: GraphBuilder, *, height: int = 416, width: int = 608,
               num_classes: int = NUM_CLASSES, width_mult: float = 1.0,
               full_resolution: bool = True) -> onnx.ModelProto:
    """U-Net with a VGG16 encoder (blocks 1-4) and a decoder of upsample, skip Concat, conv, ReLU, BN."""
    _check_size("unet", height, width)
    pools, c = vgg_features(b, "input", BLOCKS[16][:4], width_mult)
    skips = [(pools[2], _ch(256, width_mult)), (pools[1], _ch(128, width_mult)),
             (pools[0], _ch(64, width_mult))]
    x, h, w = pools[3], height // 16, width // 16
    x = b.conv(x, "decoder/conv1", c, _ch(512, width_mult), 3)
    c = _ch(512, width_mult)
    x = b.batchnorm(b.relu(x, "decoder/relu1"), "decoder/bn1", c)
    for i, ((skip, cs), cout) in enumerate(zip(skips, (256, 128, 64)), start=2):
        h, w = 2 * h, 2 * w
        x = b.upsample(x, f"decoder/up{i}", (h, w))
        x = b.node("Concat", [x, skip], f"decoder/concat{i}", axis=1)
        x = b.conv(x, f"decoder/conv{i}", c + cs, _ch(cout, width_mult), 3)
        c = _ch(cout, width_mult)
        x = b.batchnorm(b.relu(x, f"decoder/relu{i}"), f"decoder/bn{i}", c)
    return _score(b, x, "unet", c, batch, num_classes, height, width, full_resolution)


def build_segnet(batch: int, b: GraphBuilder, *, height: int = 416, width: int = 608,
                 num_classes: int = NUM_CLASSES, width_mult: float = 1.0,
                 full_resolution: bool = True) -> onnx.ModelProto:
    """SegNet with a VGG16 encoder (blocks 1-4) and a decoder of upsample, conv, BN."""
    _check_size("segnet", height, width)
    pools, c = vgg_features(b, "input", BLOCKS[16][:4], width_mult)
    x, h, w = pools[3], height // 16, width // 16
    for i, cout in enumerate((512, 256, 128, 64), start=1):
        if i > 1:
            h, w = 2 * h, 2 * w
            x = b.upsample(x, f"decoder/up{i}", (h, w))
        x = b.conv(x, f"decoder/conv{i}", c, _ch(cout, width_mult), 3, gain=1.0)  # no ReLU follows
        c = _ch(cout, width_mult)
        x = b.batchnorm(x, f"decoder/bn{i}", c)
    return _score(b, x, "segnet", c, batch, num_classes, height, width, full_resolution)


def build_fcn8(batch: int, b: GraphBuilder, *, height: int = 416, width: int = 608,
               num_classes: int = NUM_CLASSES, width_mult: float = 1.0, fc_width: int = 4096,
               dropout: float = 0.5) -> onnx.ModelProto:
    """FCN8s with a VGG16 encoder: fc6 (7x7) / fc7 convs, score layers, 2x, 2x, 8x transposed convs
    and skip Adds from pool4 and pool3 scores."""
    _check_size("fcn8", height, width)
    pools, c = vgg_features(b, "input", BLOCKS[16], width_mult)
    x = pools[4]
    for name, k, cin in (("fc6", 7, c), ("fc7", 1, fc_width)):
        x = b.relu(b.conv(x, name, cin, fc_width, k), f"{name}/relu")
        if dropout > 0:
            x = b.dropout(x, f"{name}/dropout", dropout)
    x = b.conv(x, "score_fr", fc_width, num_classes, 1, gain=1.0)
    skips = (("upscore2", "score_pool4", "fuse_pool4", pools[3], _ch(512, width_mult)),
             ("upscore_pool4", "score_pool3", "fuse_pool3", pools[2], _ch(256, width_mult)))
    for up, score, fuse, pool, cp in skips:
        x = b.conv_transpose(x, up, num_classes, num_classes, 4, 2, (1, 1, 1, 1))
        s = b.conv(pool, score, cp, num_classes, 1, gain=1.0)
        x = b.node("Add", [x, s], fuse)
    b.conv_transpose(x, "upscore8", num_classes, num_classes, 16, 8, (4, 4, 4, 4), out="logits")
    return b.model("fcn8", [image_input(batch, 3, height, width)],
                   [logits_output([batch, num_classes, height, width])])
