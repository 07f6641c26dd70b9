"""Export a torchvision classification model in training mode with ``torch.onnx.export`` (the legacy
exporter: BatchNormalization with training_mode=1, Dropout kept), for ``remc grad`` / ``remc train``.

    python tools/export_torchvision.py mobilenet_v2 --batch 8 --size 96 --classes 10 -o mnv2.onnx

Needs torch and a torchvision that imports with it (pyproject extra ``torchvision``).
"""
from __future__ import annotations

import argparse
import sys


def main(argv: list[str] | None = None) -> int:
    import torch
    import torchvision
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("model", help="a torchvision.models builder, e.g. resnet18, mobilenet_v2, vit_b_16")
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--size", type=int, default=96, help="image height and width")
    ap.add_argument("--classes", type=int, default=10)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("-o", "--output", required=True)
    args = ap.parse_args(argv)
    torch.manual_seed(args.seed)
    net = getattr(torchvision.models, args.model)(num_classes=args.classes).train()
    x = torch.randn(args.batch, 3, args.size, args.size)
    torch.onnx.export(net, (x,), args.output, dynamo=False, training=torch.onnx.TrainingMode.TRAINING,
                      do_constant_folding=False, input_names=["x"], output_names=["y"])
    print(f"wrote {args.output}: torchvision {args.model}, batch {args.batch}, {args.size}x{args.size}, "
          f"{sum(p.numel() for p in net.parameters())} parameters")
    return 0


if __name__ == "__main__":
    sys.exit(main())
