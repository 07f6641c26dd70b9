"""Export ViT-B/16 (Dosovitskiy et al.; the layout of torchvision's ``vit_b_16``: 16x16 patches by a
strided Conv, a class token, learned position embeddings, 12 pre-norm encoder blocks of
``nn.MultiheadAttention`` with 12 heads and a 3072-wide GELU MLP, a final LayerNorm and a linear head on
the class token; 86M parameters at 1000 classes) with ``torch.onnx.export`` in training mode (the legacy
exporter, as ``tools/export_torchvision.py``), for ``remc grad`` / ``remc train``. Needs torch only
(``pip install torch==2.13.0``), where torchvision's wheels need torch >= 2.14.

    python tools/export_vit.py --batch 1 --size 224 -o vit.onnx
"""
from __future__ import annotations

import argparse
import sys


def vit(image: int = 224, patch: int = 16, layers: int = 12, width: int = 768, heads: int = 12, mlp: int = 3072,
        classes: int = 1000):  # noqa: ANN201
    """The ViT-B/16 module (torch)."""
    import torch
    from torch import nn

    class Block(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.ln_1 = nn.LayerNorm(width, eps=1e-6)
            self.self_attention = nn.MultiheadAttention(width, heads, batch_first=True)
            self.ln_2 = nn.LayerNorm(width, eps=1e-6)
            self.mlp = nn.Sequential(nn.Linear(width, mlp), nn.GELU(), nn.Linear(mlp, width))

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            y = self.ln_1(x)
            y, _ = self.self_attention(y, y, y, need_weights=False)
            x = x + y
            return x + self.mlp(self.ln_2(x))

    class ViT(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.conv_proj = nn.Conv2d(3, width, patch, stride=patch)
            n = (image // patch) ** 2 + 1
            self.class_token = nn.Parameter(torch.zeros(1, 1, width))
            self.pos_embedding = nn.Parameter(torch.empty(1, n, width).normal_(std=0.02))
            self.layers = nn.Sequential(*[Block() for _ in range(layers)])
            self.ln = nn.LayerNorm(width, eps=1e-6)
            self.head = nn.Linear(width, classes)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            x = self.conv_proj(x).flatten(2).transpose(1, 2)
            x = torch.cat([self.class_token.expand(x.shape[0], -1, -1), x], dim=1) + self.pos_embedding
            return self.head(self.ln(self.layers(x))[:, 0])

    return ViT()


def main(argv: list[str] | None = None) -> int:
    import torch
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--batch", type=int, default=1)
    ap.add_argument("--size", type=int, default=224, help="image height and width")
    ap.add_argument("--classes", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("-o", "--output", required=True)
    args = ap.parse_args(argv)
    torch.manual_seed(args.seed)
    net = vit(args.size, classes=args.classes).train()
    x = torch.randn(args.batch, 3, args.size, args.size)
    torch.onnx.export(net, (x,), args.output, dynamo=False, training=torch.onnx.TrainingMode.TRAINING,
                      do_constant_folding=False, input_names=["x"], output_names=["y"])
    print(f"wrote {args.output}: ViT-B/16, batch {args.batch}, {args.size}x{args.size}, "
          f"{sum(p.numel() for p in net.parameters())} parameters")
    return 0


if __name__ == "__main__":
    sys.exit(main())
