"""The model zoo: forward ONNX builders with random weights."""
