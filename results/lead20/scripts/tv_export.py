import sys, torch
_orig = torch.library.register_fake
def _safe(name, *a, **k):
    dec = _orig(name, *a, **k)
    def wrap(f):
        try:
            return dec(f)
        except Exception:
            return f
    return wrap
torch.library.register_fake = _safe
import torchvision
name, batch, size = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
if hasattr(torchvision.models.segmentation, name):
    inner = getattr(torchvision.models.segmentation, name)(weights=None, weights_backbone=None, num_classes=5).eval()
    class Out(torch.nn.Module):
        def __init__(s, m): super().__init__(); s.m = m
        def forward(s, x): return s.m(x)["out"]
    m = Out(inner)
else:
    kw = {"aux_logits": False, "init_weights": True} if name == "inception_v3" else {}
    m = getattr(torchvision.models, name)(weights=None, **kw).eval()
x = torch.randn(batch, 3, size, size)
torch.onnx.export(m, (x,), f"{name}.onnx", input_names=["x"], output_names=["logits"], dynamo=False, opset_version=17)
print("ok", name)
