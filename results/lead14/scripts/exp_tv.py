"""Export a torchvision model (random weights) as a forward ONNX model in training mode: NAME BATCH SIZE OUT."""
import sys
sys.path.insert(0, "/work/wt/lead/tools")
from torchvision_grads import import_torchvision
import torch
tv = import_torchvision(True)
name, batch, size, out = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
torch.manual_seed(0)
net = getattr(tv.models, name)(num_classes=10).train()
x = torch.randn(batch, 3, size, size)
torch.onnx.export(net, (x,), out, dynamo=False, training=torch.onnx.TrainingMode.TRAINING, opset_version=17,
                  input_names=["input"], output_names=["logits"], do_constant_folding=False)
print("wrote", out)
