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
m = getattr(torchvision.models, name)(weights=None).eval()
x = torch.randn(batch, 3, size, size)
torch.onnx.export(m, (x,), f"{name}.onnx", input_names=["x"], output_names=["logits"], dynamo=False, opset_version=17)
print("ok", name)
