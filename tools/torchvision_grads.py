"""remc grad on torchvision classification models, checked against torch autograd.

Each model is exported in training mode (legacy exporter, dropout and stochastic depth off so both sides
compute the same function), differentiated by remc (``build_training_graph``) and run on ONNX Runtime CPU. Its
loss and parameter gradients are compared with torch's in float32 and with torch's in float64 (the reference):
for each parameter, ||g - g64|| / max(||g64||, 1e-4 x the whole gradient's norm) (the floor keeps gradients that
are zero up to rounding, such as a convolution bias before BatchNorm, from dominating). Small images make
BatchNorm normalize over few values, so one ReLU whose input is within float32 rounding of 0 can flip on either
side: the float64 column says which side is off.

    python tools/torchvision_grads.py --models resnet18,swin_t --size 64 --out results/torchvision_grads.json

Where torchvision's C extension does not load with the installed torch (``operator torchvision::nms does not
exist``: the wheels pair torchvision 0.28 with another torch build), ``--no-ops`` imports torchvision without
its operator registrations (detection ops, unused by the classification models, then raise).
"""
from __future__ import annotations

import argparse
import copy
import io
import json
import sys
import time
import types


def import_torchvision(no_ops: bool):  # noqa: ANN201
    if no_ops:
        sys.modules["torchvision._meta_registrations"] = types.ModuleType("torchvision._meta_registrations")
    import torchvision
    return torchvision


def check(name: str, size: int, torchvision) -> dict:  # noqa: ANN001
    import numpy as np
    import onnx
    import onnxruntime as ort
    import torch
    import torch.nn.functional as F

    from remc.passes.grad import build_training_graph
    torch.manual_seed(0)
    kw = {"image_size": size} if name.startswith("vit") else {}
    net = getattr(torchvision.models, name)(num_classes=10, **kw).train()
    for mod in net.modules():  # Dropout and StochasticDepth: p = 0 (random masks cannot match across runtimes)
        if isinstance(getattr(mod, "p", None), float):
            mod.p = 0.0
    x = torch.randn(2, 3, size, size)
    buf = io.BytesIO()
    t0 = time.perf_counter()
    torch.onnx.export(net, (x,), buf, dynamo=False, training=torch.onnx.TrainingMode.TRAINING,
                      do_constant_folding=False, input_names=["x"], output_names=["y"])
    model = onnx.load_from_string(buf.getvalue())
    inits = {t.name: onnx.numpy_helper.to_array(t) for t in model.graph.initializer}
    with torch.no_grad():  # the export ran a training forward: start both sides from its running statistics
        for k, b in net.named_buffers():
            if k in inits and b.dtype.is_floating_point:
                b.copy_(torch.from_numpy(inits[k].copy()))
    net64 = copy.deepcopy(net).double()
    t1 = time.perf_counter()
    train = build_training_graph(model, "cross-entropy")
    t2 = time.perf_counter()
    labels = torch.tensor([1, 7])
    net.zero_grad()
    loss32 = F.cross_entropy(net(x), labels)
    loss32.backward()
    loss64 = F.cross_entropy(net64(x.double()), labels)
    loss64.backward()
    so = ort.SessionOptions()
    so.log_severity_level = 3
    sess = ort.InferenceSession(train.SerializeToString(), so, providers=["CPUExecutionProvider"])
    out = dict(zip([o.name for o in train.graph.output], sess.run(None, {"x": x.numpy(), "labels": labels.numpy()})))
    g64 = {k: p.grad.numpy() for k, p in net64.named_parameters()}
    floor = 1e-4 * float(np.sqrt(sum(float(np.linalg.norm(g)) ** 2 for g in g64.values())))

    def err(g, k):  # noqa: ANN001, ANN202
        return float(np.linalg.norm(g - g64[k]) / max(float(np.linalg.norm(g64[k])), floor))

    missing = [k for k in g64 if f"grad.{k}" not in out]
    e_t = {k: err(p.grad.numpy(), k) for k, p in net.named_parameters()}
    e_r = {k: err(out[f"grad.{k}"], k) for k in g64 if k not in missing}
    worst = max(e_r, key=e_r.get)
    return {"model": name, "size": size, "nodes": len(model.graph.node), "training_nodes": len(train.graph.node),
            "parameters": len(g64), "missing": missing, "loss_remc": float(out["loss"]), "loss_torch32": float(loss32),
            "loss_torch64": float(loss64), "worst_torch32": max(e_t.values()), "worst_remc": e_r[worst],
            "worst_param": worst, "export_s": round(t1 - t0, 2), "grad_s": round(t2 - t1, 2)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", required=True, help="comma-separated torchvision.models builders")
    ap.add_argument("--size", type=int, default=64)
    ap.add_argument("--no-ops", action="store_true", help="import torchvision without its operator registrations")
    ap.add_argument("--out", required=True, help="JSON lines, one per model")
    args = ap.parse_args(argv)
    torchvision = import_torchvision(args.no_ops)
    with open(args.out, "a") as f:
        for name in args.models.split(","):
            try:
                row = check(name, args.size, torchvision)
            except Exception as exc:  # noqa: BLE001 - recorded as the model's row
                row = {"model": name, "size": args.size, "error": f"{type(exc).__name__}: {str(exc).splitlines()[0]}"}
            f.write(json.dumps(row) + "\n")
            f.flush()
            print(" | ".join(f"{k}={v:.2e}" if isinstance(v, float) and k.startswith("worst") else f"{k}={v}"
                             for k, v in row.items() if k not in ("missing",)), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
