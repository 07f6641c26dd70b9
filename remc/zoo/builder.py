"""A small ONNX graph builder for the zoo: readable names, random or shape-only initializers.

Every initializer carries its role in ``TensorProto.doc_string``: ``param`` (trainable weight),
``buffer`` (BatchNormalization running mean/var: not trained) or ``constant`` (masks, scalars, shapes).
Shape-only builds store every param and buffer as external data at a location that does not exist
(:data:`SHAPE_ONLY_LOCATION`): dims and dtype are there, the bytes are not. Constants (Reshape shapes,
Split and Resize sizes, positions, dropout ratios, the attention scale and causal mask) always hold real
data, so shape inference and graph transformations see every value they need.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = 20
"""Opset of every zoo model (Gelu needs 20)."""
IR_VERSION = 10
SHAPE_ONLY_LOCATION = "remc-shape-only"
"""External-data location of shape-only initializers; no such file ever exists."""
ROLES = ("param", "buffer", "constant")
WEIGHTS = ("random", "shape-only")


def is_shape_only(tensor: TensorProto) -> bool:
    """True when ``tensor`` is a shape-only initializer (dims and dtype, no data)."""
    if tensor.data_location != TensorProto.EXTERNAL:
        return False
    return any(e.key == "location" and e.value == SHAPE_ONLY_LOCATION for e in tensor.external_data)


def _shape_only_tensor(name: str, shape: Sequence[int], dtype: np.dtype, role: str) -> TensorProto:
    tensor = TensorProto(name=name, data_type=helper.np_dtype_to_tensor_dtype(dtype),
                         dims=list(shape), doc_string=role)
    tensor.data_location = TensorProto.EXTERNAL
    nbytes = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    for key, value in (("location", SHAPE_ONLY_LOCATION), ("offset", "0"), ("length", str(nbytes))):
        entry = tensor.external_data.add()
        entry.key, entry.value = key, value
    return tensor


@dataclass
class GraphBuilder:
    """Accumulates nodes and initializers of one forward graph.

    Node names must be unique (a duplicate raises ``ValueError``); a single-output node's output value
    has the node's name unless ``out`` is given.
    """

    weights: str = "random"
    """'random' (float32 data drawn from ``RandomState(seed)``) or 'shape-only' (no data)."""
    seed: int = 0
    nodes: list[onnx.NodeProto] = field(default_factory=list)
    initializers: list[TensorProto] = field(default_factory=list)
    _names: set[str] = field(default_factory=set)
    _init_names: set[str] = field(default_factory=set)
    _dropouts: int = 0

    def __post_init__(self) -> None:
        if self.weights not in WEIGHTS:
            raise ValueError(f"weights must be one of {WEIGHTS}, got {self.weights!r}")
        self.rng = np.random.RandomState(self.seed)

    @property
    def shape_only(self) -> bool:
        return self.weights == "shape-only"

    # ---- initializers -------------------------------------------------------------------------
    def _add_init(self, tensor: TensorProto) -> str:
        if tensor.name in self._init_names:
            raise ValueError(f"duplicate initializer name {tensor.name!r}")
        self._init_names.add(tensor.name)
        self.initializers.append(tensor)
        return tensor.name

    def tensor(self, name: str, shape: Sequence[int], role: str, *, std: float = 0.0,
               mean: float = 0.0, uniform: tuple[float, float] | None = None) -> str:
        """Add a float32 weight: N(mean, std²), or U(uniform) when given; shape-only if so built."""
        if role not in ("param", "buffer"):
            raise ValueError(f"role must be 'param' or 'buffer', got {role!r}")
        shape = tuple(int(d) for d in shape)
        if self.shape_only:
            return self._add_init(_shape_only_tensor(name, shape, np.dtype(np.float32), role))
        if uniform is not None:
            data = self.rng.uniform(uniform[0], uniform[1], size=shape)
        elif std > 0.0:
            data = self.rng.standard_normal(size=shape).astype(np.float32)
            data *= np.float32(std)
            data += np.float32(mean)
        else:
            data = np.full(shape, mean)
        tensor = numpy_helper.from_array(np.asarray(data, dtype=np.float32), name)
        tensor.doc_string = role
        return self._add_init(tensor)

    def param(self, name: str, shape: Sequence[int], *, std: float = 0.0, mean: float = 0.0,
              uniform: tuple[float, float] | None = None) -> str:
        """A trainable weight (role 'param')."""
        return self.tensor(name, shape, "param", std=std, mean=mean, uniform=uniform)

    def const(self, name: str, value: np.ndarray) -> str:
        """A constant (role 'constant'): real data in every build."""
        value = np.asarray(value)
        tensor = numpy_helper.from_array(value, name)
        tensor.doc_string = "constant"
        return self._add_init(tensor)

    def ints(self, name: str, values: Sequence[int]) -> str:
        """An int64 1-D constant (shapes, sizes, axes): always real data."""
        return self.const(name, np.asarray(list(values), dtype=np.int64))

    # ---- nodes --------------------------------------------------------------------------------
    def node(self, op_type: str, inputs: Sequence[str], name: str, *, out: str | None = None,
             outputs: Sequence[str] | None = None, **attrs: object) -> str:
        """Add one node; returns its first output name (``out`` or the node name)."""
        if name in self._names:
            raise ValueError(f"duplicate node name {name!r}")
        self._names.add(name)
        outs = list(outputs) if outputs is not None else [out or name]
        self.nodes.append(helper.make_node(op_type, list(inputs), outs, name=name, **attrs))
        return outs[0]

    def node_multi(self, op_type: str, inputs: Sequence[str], name: str, n_out: int,
                   **attrs: object) -> list[str]:
        """Add a node with ``n_out`` outputs named ``name:0``, ``name:1``, ..."""
        outs = [f"{name}:{i}" for i in range(n_out)]
        self.node(op_type, inputs, name, outputs=outs, **attrs)
        return outs

    def dropout(self, x: str, name: str, ratio: float) -> str:
        """Dropout in training mode with a fixed per-node seed (ratio and training_mode as inputs)."""
        if "dropout.training_mode" not in self._init_names:
            self.const("dropout.training_mode", np.array(True))
        ratio_name = f"{name.replace('/', '.')}.ratio"
        self.const(ratio_name, np.array(ratio, dtype=np.float32))
        self._dropouts += 1
        return self.node("Dropout", [x, ratio_name, "dropout.training_mode"], name,
                         seed=self.seed * 1000 + self._dropouts)

    # ---- model --------------------------------------------------------------------------------
    def model(self, graph_name: str, inputs: Sequence[onnx.ValueInfoProto],
              outputs: Sequence[onnx.ValueInfoProto]) -> onnx.ModelProto:
        """Assemble the ModelProto (opset :data:`OPSET`, IR :data:`IR_VERSION`)."""
        graph = helper.make_graph(self.nodes, graph_name, list(inputs), list(outputs),
                                  initializer=self.initializers)
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)],
                                  producer_name="remc.zoo", ir_version=IR_VERSION)
        return model

    # ---- layers -------------------------------------------------------------------------------
    def conv(self, x: str, name: str, cin: int, cout: int, k: int, *, stride: int = 1,
             pad: int | Sequence[int] | None = None, groups: int = 1, bias: bool = True,
             gain: float = 2.0, out: str | None = None) -> str:
        """Conv2d with He-normal weights (std = sqrt(gain / fan_in)), zero bias.

        ``name`` is the node name ("layer1.0/conv1"); weights are "layer1.0.conv1.weight".
        ``pad`` defaults to k // 2 on every side; a 4-sequence is (top, left, bottom, right).
        """
        prefix = name.replace("/", ".")
        fan_in = cin // groups * k * k
        w = self.param(f"{prefix}.weight", (cout, cin // groups, k, k), std=float(np.sqrt(gain / fan_in)))
        ins = [x, w]
        if bias:
            ins.append(self.param(f"{prefix}.bias", (cout,)))
        pads = [k // 2] * 4 if pad is None else ([pad] * 4 if isinstance(pad, int) else list(pad))
        return self.node("Conv", ins, name, out=out, kernel_shape=[k, k], strides=[stride, stride],
                         pads=pads, group=groups, dilations=[1, 1])

    def conv_transpose(self, x: str, name: str, cin: int, cout: int, k: int, stride: int,
                       pads: Sequence[int], *, bias: bool = False, out: str | None = None) -> str:
        """ConvTranspose2d (weights [cin, cout, k, k]); ``pads`` crop (top, left, bottom, right)."""
        prefix = name.replace("/", ".")
        w = self.param(f"{prefix}.weight", (cin, cout, k, k), std=float(np.sqrt(1.0 / (cin * k * k / stride ** 2))))
        ins = [x, w] + ([self.param(f"{prefix}.bias", (cout,))] if bias else [])
        return self.node("ConvTranspose", ins, name, out=out, kernel_shape=[k, k], strides=[stride, stride],
                         pads=list(pads))

    def batchnorm(self, x: str, name: str, channels: int, eps: float = 1e-5,
                  gamma: tuple[float, float] = (0.8, 1.2)) -> str:
        """Inference-form BatchNormalization with mildly random running statistics and bias; the
        scale is U(gamma) (small for a residual branch's last BN, so random activations stay O(1))."""
        prefix = name.replace("/", ".")
        c = (channels,)
        ins = [x,
               self.param(f"{prefix}.weight", c, uniform=gamma),
               self.param(f"{prefix}.bias", c, std=0.05),
               self.tensor(f"{prefix}.running_mean", c, "buffer", std=0.05),
               self.tensor(f"{prefix}.running_var", c, "buffer", uniform=(0.8, 1.2))]
        return self.node("BatchNormalization", ins, name, epsilon=eps, momentum=0.9)

    def linear(self, x: str, name: str, fin: int, fout: int, *, gain: float = 2.0) -> str:
        """Gemm y = x Wᵀ + b with W [fout, fin] (He-normal for gain 2, LeCun for gain 1)."""
        prefix = name.replace("/", ".")
        w = self.param(f"{prefix}.weight", (fout, fin), std=float(np.sqrt(gain / fin)))
        b = self.param(f"{prefix}.bias", (fout,))
        return self.node("Gemm", [x, w, b], name, transB=1)

    def relu(self, x: str, name: str) -> str:
        return self.node("Relu", [x], name)

    def relu6(self, x: str, name: str) -> str:
        """ReLU6 as Clip(x, 0, 6) with shared scalar bound constants."""
        if "relu6.min" not in self._init_names:
            self.const("relu6.min", np.array(0.0, dtype=np.float32))
            self.const("relu6.max", np.array(6.0, dtype=np.float32))
        return self.node("Clip", [x, "relu6.min", "relu6.max"], name)

    def maxpool(self, x: str, name: str, k: int = 2, stride: int = 2, pad: int = 0) -> str:
        return self.node("MaxPool", [x], name, kernel_shape=[k, k], strides=[stride, stride],
                         pads=[pad] * 4)

    def upsample(self, x: str, name: str, out_hw: tuple[int, int], out: str | None = None) -> str:
        """Nearest-neighbour upsampling to ``out_hw`` (Resize with int64 sizes on axes 2, 3)."""
        sizes = self.ints(f"{name.replace('/', '.')}.sizes", out_hw)
        return self.node("Resize", [x, "", "", sizes], name, out=out, mode="nearest", axes=[2, 3],
                         coordinate_transformation_mode="asymmetric", nearest_mode="floor")

    def flatten_pool(self, x: str, prefix: str) -> str:
        """GlobalAveragePool then Flatten: [N, C, H, W] -> [N, C]."""
        x = self.node("GlobalAveragePool", [x], f"{prefix}/avgpool")
        return self.node("Flatten", [x], f"{prefix}/flatten", axis=1)


def image_input(batch: int, channels: int, height: int, width: int) -> onnx.ValueInfoProto:
    """The graph input "input": float32 [batch, channels, height, width]."""
    return helper.make_tensor_value_info("input", TensorProto.FLOAT, [batch, channels, height, width])


def logits_output(shape: Sequence[int]) -> onnx.ValueInfoProto:
    """The graph output "logits": float32 of ``shape``."""
    return helper.make_tensor_value_info("logits", TensorProto.FLOAT, list(shape))
