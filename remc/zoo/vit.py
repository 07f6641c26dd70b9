"""ViT (Dosovitskiy et al. 2021), the layout of torchvision's ``vit_b_16``.

Patch embedding by a strided Conv (``patch`` x ``patch``), flattened to tokens, a learned class token
prepended (Expand + Concat) and learned position embeddings added; ``n_layer`` pre-norm encoder blocks
(LayerNormalization -> multi-head self-attention without a mask, as GPT-2's in ``gpt2.py`` -> residual Add;
LayerNormalization -> MLP with exact Gelu -> residual Add); a final LayerNormalization, the class token's
row (Gather) and a linear head (Gemm). Dropout 0 by default (as torchvision's), which leaves the Dropout
nodes out. Input "input" float32 [N, 3, H, W]; output "logits" [N, classes]. ViT-B/16 (12 layers, 768
wide, 12 heads, MLP 3072, 1000 classes) has 86,567,656 weights at 224 x 224, as torchvision's.
"""
from __future__ import annotations

import numpy as np
import onnx

from remc.ir.errors import ModelError
from remc.zoo.builder import GraphBuilder, image_input, logits_output
from remc.zoo.gpt2 import _attention, _dense, _dropout, _layernorm


def build_vit(batch: int, b: GraphBuilder, *, height: int = 224, width: int = 224, num_classes: int = 1000,
              patch: int = 16, n_layer: int = 12, n_embd: int = 768, n_head: int = 12, mlp: int = 3072,
              dropout: float = 0.0) -> onnx.ModelProto:
    """ViT: input [batch, 3, height, width] -> logits [batch, num_classes]."""
    if height % patch or width % patch:
        raise ModelError(f"vit: the image {height}x{width} is not a multiple of the patch {patch}")
    if n_embd % n_head:
        raise ModelError(f"vit: n_embd {n_embd} is not a multiple of n_head {n_head}")
    n, d = batch, n_embd
    t = (height // patch) * (width // patch) + 1
    b.ints("attn.split", (d, d, d))
    b.ints("attn.heads_shape", (n, t, n_head, d // n_head))
    b.ints("attn.merge_shape", (n, t, d))
    b.const("attn.scale", np.array(1.0 / np.sqrt(d // n_head), dtype=np.float32))
    x = b.conv("input", "conv_proj", 3, d, patch, stride=patch, pad=0, gain=1.0)
    x = b.node("Reshape", [x, b.ints("tokens.shape", (n, d, t - 1))], "tokens/reshape")
    x = b.node("Transpose", [x], "tokens/transpose", perm=[0, 2, 1])
    cls = b.node("Expand", [b.param("class_token", (1, 1, d)), b.ints("class_token.shape", (n, 1, d))],
                 "class_token/expand")
    x = b.node("Concat", [cls, x], "tokens/concat", axis=1)
    x = b.node("Add", [x, b.param("pos_embedding", (1, t, d), std=0.02)], "embed/add_pos")
    x = _dropout(b, x, "embed/dropout", dropout)
    for i in range(n_layer):
        s = f"layers.{i}"
        a = _attention(b, _layernorm(b, x, f"{s}/ln_1", d), f"{s}/attn", n, t, d, n_head, dropout, 0.02,
                       causal=False)
        x = b.node("Add", [x, a], f"{s}/attn_residual")
        h = _dense(b, _layernorm(b, x, f"{s}/ln_2", d), f"{s}/mlp/fc1", d, mlp, 0.02)
        h = _dense(b, b.node("Gelu", [h], f"{s}/mlp/gelu"), f"{s}/mlp/fc2", mlp, d, 0.02)
        x = b.node("Add", [x, _dropout(b, h, f"{s}/mlp/dropout", dropout)], f"{s}/mlp_residual")
    x = _layernorm(b, x, "ln", d)
    x = b.node("Gather", [x, b.const("class_token.index", np.array(0, dtype=np.int64))], "class_token/select",
               axis=1)
    w = b.param("head.weight", (num_classes, d), std=float(np.sqrt(1.0 / d)))
    b.node("Gemm", [x, w, b.param("head.bias", (num_classes,))], "head", out="logits", transB=1)
    return b.model("vit", [image_input(n, 3, height, width)], [logits_output([n, num_classes])])
