"""remc: a rematerialization compiler for ONNX training graphs."""
__version__ = "0.1.0"
