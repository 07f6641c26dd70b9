"""Reverse-mode differentiation of a prepared forward model: the training graph driver."""
from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from remc.ir.errors import ModelError, UnsupportedOpError

from ..random_ops import seed_random_ops
from . import rules_elementwise, rules_nn, rules_shape  # noqa: F401  (register the rules)
from .emit import FLOAT_TYPES, Emitter, Names
from .forward import LOSSES, FwdOp, Loss, RunningUpdate, build_loss, lower_forward, seed_gradient
from .prepare import Prepared, infer, prepare, static_types
from .registry import NON_DIFFERENTIABLE, RULES, RuleContext

NON_TRAINABLE_ROLES = frozenset({"constant", "buffer"})
"""Initializer doc_strings that mark an initializer as not trainable (remc.zoo writes them)."""
MAX_IR_VERSION = 10


def trainable_candidates(model: onnx.ModelProto, trainable: Iterable[str] | None) -> list[str]:
    """Initializers that get gradients if they reach the loss, in initializer order.

    Default: the parameters a torch.export-based export lists (``torch_export_parameters``), else float
    initializers of rank >= 1 whose doc_string is not "constant" or "buffer". An explicit ``trainable`` list
    must name float initializers.
    """
    inits = {t.name: t for t in model.graph.initializer}
    if trainable is None:
        params = torch_export_parameters(model)
        if params is not None:
            return params
        return [t.name for t in model.graph.initializer
                if t.data_type in FLOAT_TYPES and len(t.dims) >= 1 and t.doc_string not in NON_TRAINABLE_ROLES]
    names = list(trainable)
    for n in names:
        if n not in inits:
            raise ModelError(f"trainable {n!r} is not an initializer of the model")
        if inits[n].data_type not in FLOAT_TYPES:
            raise ModelError(f"trainable {n!r} is not a float tensor")
    order = {t.name: k for k, t in enumerate(model.graph.initializer)}
    return sorted(set(names), key=order.__getitem__)


TORCH_SIGNATURE_KEY = "pkg.torch.export.ExportedProgram.graph_signature"
"""Graph metadata of ``torch.onnx.export(dynamo=True)``: the exported program's inputs, each a PARAMETER, BUFFER,
CONSTANT_TENSOR or USER_INPUT with its module path."""


def torch_export_parameters(model: onnx.ModelProto) -> list[str] | None:
    """The trainable initializers of a ``torch.onnx.export(dynamo=True)`` model: the PARAMETERs of its graph
    signature (its optimizer also makes constants initializers, e.g. InstanceNormalization's unit scale and zero
    bias under a GroupNorm, named ``val_<k>``: those are not the model's parameters). None without a signature.
    ModelError when a parameter is not an initializer: the exporter's optimizer folded it into a constant (a
    Linear weight transposed, a BatchNormalization into the Conv before it), and the file is then not the
    model to train."""
    sig = next((p.value for p in model.graph.metadata_props if p.key == TORCH_SIGNATURE_KEY), None)
    if sig is None:
        return None
    import re
    targets = re.findall(r"^\s*\S+: PARAMETER target='([^']+)'", sig, flags=re.M)
    inits = {t.name: t for t in model.graph.initializer}
    missing = [t for t in targets if t not in inits]
    if missing:
        raise ModelError(f"{len(missing)} of the model's {len(targets)} parameters ({', '.join(missing[:3])}"
                         f"{', ...' if len(missing) > 3 else ''}) are not initializers of this file: "
                         f"torch.onnx.export(dynamo=True) with its optimizer on folded them into constants "
                         f"(a Linear weight transposed, a BatchNormalization into the Conv before it), so the file "
                         f"is not the model to train; export with optimize=False, or with dynamo=False and "
                         f"training=torch.onnx.TrainingMode.TRAINING")
    wanted = set(targets)
    return [t.name for t in model.graph.initializer if t.name in wanted and t.data_type in FLOAT_TYPES]


def default_class_axis(model: onnx.ModelProto, prep: Prepared, logits: str) -> int:
    """1 ([N, C, ...] logits), or -1 for language models ([N, T, V] logits over int64 tokens [N, T])."""
    props = {p.key: p.value for p in model.metadata_props}
    if props.get("remc.zoo.task") == "language-model":
        return -1
    ys = prep.shapes[logits]
    for vi in prep.model.graph.input:
        if (len(ys) == 3 and prep.dtypes.get(vi.name) in (TensorProto.INT64, TensorProto.INT32)
                and prep.shapes.get(vi.name) == tuple(ys[:2])):
            return -1
    return 1


def requires_grad(ops: Sequence[FwdOp], params: Iterable[str], dtypes: dict[str, int]) -> set[str]:
    """Values that depend differentiably on a parameter (ops without a rule propagate to float outputs,
    so that the backward pass names them if a gradient must cross them)."""
    req = set(params)
    for op in ops:
        node = op.node
        if node.op_type in NON_DIFFERENTIABLE and node.domain in ("", "ai.onnx"):
            continue
        spec = RULES.get(node.op_type) if node.domain in ("", "ai.onnx") else None
        if not any(i in req and (spec is None or spec.diff_input(k)) for k, i in enumerate(node.input) if i):
            continue
        for k, o in enumerate(node.output):
            if o and dtypes.get(o) in FLOAT_TYPES and (spec is None or spec.diff_output(k)):
                req.add(o)
    return req


class Backward:
    """Reverse sweep over the forward ops, accumulating gradients per value."""

    def __init__(self, em: Emitter, shapes: dict[str, tuple[int, ...]], dtypes: dict[str, int],
                 consts: dict[str, np.ndarray], req: set[str]) -> None:
        self.em, self.shapes, self.dtypes, self.consts, self.req = em, shapes, dtypes, consts, req
        self.grads: dict[str, list[str]] = {}

    def add(self, value: str, grad: str) -> None:
        """Record one gradient contribution to ``value``."""
        self.grads.setdefault(value, []).append(grad)

    def total(self, value: str) -> str:
        """The accumulated gradient of ``value`` (a Sum node when it has several consumers)."""
        terms = self.grads[value]
        if len(terms) > 1:
            terms[:] = [self.em.sum(terms)]
        return terms[0]

    def run(self, ops: Sequence[FwdOp]) -> None:
        """Apply the rule of every forward op whose outputs received gradients, last op first."""
        for op in reversed(ops):
            node = op.node
            if not any(o in self.grads for o in node.output if o):
                continue
            spec = RULES.get(node.op_type) if node.domain in ("", "ai.onnx") else None
            if spec is None:
                raise UnsupportedOpError(node.op_type if not node.domain else f"{node.domain}.{node.op_type}",
                                         node.name)
            needs = [bool(i) and i in self.req and spec.diff_input(k) for k, i in enumerate(node.input)]
            if not any(needs):
                continue
            with self.em.scope(f"{node.name}/grad"):
                dys = [self.total(o) if o in self.grads else None for o in node.output]
                ctx = RuleContext(node, self.em, self.shapes, self.dtypes, self.consts, needs, op.saved)
                dxs = spec.fn(ctx, dys)
            if len(dxs) != len(node.input):
                raise AssertionError(f"rule for {node.op_type} returned {len(dxs)} gradients for "
                                     f"{len(node.input)} inputs")
            for i, dx, nd in zip(node.input, dxs, needs):
                if nd and dx is not None:
                    self.add(i, dx)


def _rename(nodes: list[onnx.NodeProto], mapping: dict[str, str]) -> None:
    """Rename values in the inputs and outputs of ``nodes`` (one pass)."""
    if not mapping:
        return
    for node in nodes:
        for field in (node.input, node.output):
            for k, v in enumerate(field):
                if v in mapping:
                    field[k] = mapping[v]


def _bind_outputs(em: Emitter, wanted: list[tuple[str, str, str]], fixed: set[str]) -> None:
    """Give value ``v`` the output name ``out`` for each (out, v, scope): rename it when a node of the
    emitter produces it and nothing else claims it, else add an Identity."""
    produced = {o for n in em.nodes for o in n.output}
    mapping: dict[str, str] = {}
    for out, v, scope in wanted:
        if v in produced and v not in fixed and v not in mapping:
            mapping[v] = out
        else:
            with em.scope(scope):
                em.op("Identity", mapping.get(v, v), out=out)
    _rename(em.nodes, mapping)


def _prune(nodes: list[onnx.NodeProto], outputs: Iterable[str]) -> list[onnx.NodeProto]:
    """Nodes that some output depends on, in their order."""
    live = set(outputs)
    keep = []
    for node in reversed(nodes):
        if any(o in live for o in node.output if o):
            keep.append(node)
            live.update(i for i in node.input if i)
    return keep[::-1]


def _only_output(model: onnx.ModelProto, name: str) -> onnx.ModelProto:
    """A copy of ``model`` whose one graph output is ``name``, without the nodes and initializers only the other
    outputs needed."""
    outs = [o.name for o in model.graph.output]
    if name not in outs:
        raise ModelError(f"--logits {name!r} is not an output of the model; its outputs are {', '.join(outs)}")
    m = onnx.ModelProto()
    m.CopyFrom(model)
    g = m.graph
    keep = [o for o in g.output if o.name == name]
    del g.output[:]
    g.output.extend(keep)
    needed, nodes = {name}, []
    for node in reversed(list(g.node)):
        if any(o in needed for o in node.output):
            nodes.append(node)
            needed.update(i for i in node.input if i)
    del g.node[:]
    g.node.extend(reversed(nodes))
    inits = [t for t in g.initializer if t.name in needed]
    del g.initializer[:]
    g.initializer.extend(inits)
    return m


def _model_output(prep: Prepared) -> str:
    outs = [o.name for o in prep.model.graph.output]
    if len(outs) != 1:
        raise ModelError(f"the model has {len(outs)} outputs ({', '.join(outs)}); remc differentiates a model "
                         f"with one output (the logits or prediction): name the one the loss reads with "
                         f"--logits (remc grad)")
    if prep.dtypes.get(outs[0]) not in FLOAT_TYPES:
        raise ModelError(f"model output {outs[0]!r} is not a float tensor")
    return outs[0]


def build_training_graph(model: onnx.ModelProto, loss: str = "cross-entropy", *, label_name: str = "labels",
                         batch: int | None = None, trainable: Iterable[str] | None = None,
                         class_axis: int | None = None, seed: int | None = None,
                         logits: str | None = None) -> onnx.ModelProto:
    """The training graph (forward + loss + backward) of a forward ONNX model; see the package docstring.

    ``logits``: the graph output the loss reads, where the model has several (torchvision's GoogLeNet and
    Inception v3 in training mode also return their auxiliary classifiers' logits); the others are dropped,
    and with them every node only they need.

    Every random node gets a fixed ``seed`` attribute (``remc.passes.random_ops``): nodes without one get
    a seed derived from ``seed`` (default 0) and their name; with ``seed`` given, every random node does.
    """
    if loss not in LOSSES:
        raise ModelError(f"unknown loss {loss!r}; choose one of {', '.join(LOSSES)}")
    if logits is not None:
        model = _only_output(model, logits)
    params = trainable_candidates(model, trainable)
    prep = prepare(model, batch, set(params))
    logits = _model_output(prep)
    g = prep.model.graph
    names = Names({n.name for n in g.node},
                  {v.name for v in list(g.input) + list(g.output) + list(g.initializer) + list(g.value_info)}
                  | {o for n in g.node for o in n.output})
    em = Emitter(prep.opset, names)
    ops, updates = lower_forward(em, list(g.node), prep.shapes, prep.dtypes)
    axis = default_class_axis(model, prep, logits) if class_axis is None else class_axis
    lossinfo = build_loss(em, loss, logits, prep.shapes, prep.dtypes, label_name, axis)
    shapes, dtypes = _forward_types(prep, em, lossinfo)
    consts = dict(prep.consts)
    consts.update({t.name: numpy_helper.to_array(t) for t in em.initializers})
    req = requires_grad(ops, params, dtypes)
    bw = Backward(em, shapes, dtypes, consts, req)
    if logits in req:
        bw.add(logits, seed_gradient(em, lossinfo, shapes, dtypes))
        bw.run(ops)
    out = _assemble(model, prep, em, bw, params, updates, lossinfo)
    seed_random_ops(out, 0 if seed is None else seed, override=seed is not None)
    return out


def _forward_types(prep: Prepared, em: Emitter, lossinfo: Loss) -> tuple[dict, dict]:
    """Static shapes and dtypes of the lowered forward graph and the loss."""
    g = prep.model.graph
    tmp = helper.make_graph(list(em.nodes), g.name, list(g.input) + [lossinfo.label],
                            [onnx.ValueInfoProto(name="loss")],
                            initializer=list(g.initializer) + list(em.initializers))
    m = helper.make_model(tmp, opset_imports=list(prep.model.opset_import))
    m.ir_version = prep.model.ir_version
    return static_types(infer(m))


def _assemble(model: onnx.ModelProto, prep: Prepared, em: Emitter, bw: Backward, params: list[str],
              updates: list[RunningUpdate], lossinfo: Loss) -> onnx.ModelProto:
    """The training ModelProto: outputs loss, grad.<param>... and <stat>.updated..., unused nodes pruned."""
    g = prep.model.graph
    fixed = {v.name for v in g.input} | {t.name for t in g.initializer} | {lossinfo.label.name, "loss"}
    trained = [p for p in params if p in bw.grads]
    wanted: list[tuple[str, str, str]] = []   # (output name, value, scope of an Identity if needed)
    sources: list[str] = []                   # the parameter or statistic each output is shaped like
    for p in trained:
        with em.scope(f"{p}/grad"):
            wanted.append((f"grad.{p}", bw.total(p), f"{p}/grad"))
        sources.append(p)
    last = {up.stat: up.value for up in updates}
    for stat, value in last.items():
        wanted.append((f"{stat}.updated", value, f"{stat}/update"))
        sources.append(stat)
    values = {v for _, v, _ in wanted}
    for out, _, _ in wanted:
        if out in em.names.values and out not in values:
            raise ModelError(f"the model already has a value named {out!r}")
    _bind_outputs(em, wanted, fixed)
    out_names = ["loss"] + [w[0] for w in wanted]
    nodes = _prune(em.nodes, out_names)
    used = {i for n in nodes for i in n.input}
    inits = [t for t in list(g.initializer) + list(em.initializers) if t.name in used]
    outputs = [helper.make_tensor_value_info("loss", prep.dtypes[lossinfo.logits], [])]
    outputs += [helper.make_tensor_value_info(w[0], prep.dtypes[src], list(prep.shapes[src]))
                for w, src in zip(wanted, sources)]
    graph = helper.make_graph(nodes, g.name or "training", list(g.input) + [lossinfo.label], outputs,
                              initializer=inits)
    ir = min(max(prep.model.ir_version, 8), MAX_IR_VERSION)
    out = helper.make_model(graph, opset_imports=list(prep.model.opset_import), producer_name="remc.grad",
                            ir_version=ir)
    out.doc_string = model.doc_string
    helper.set_model_props(out, {**{p.key: p.value for p in model.metadata_props}, "remc.grad.loss": lossinfo.kind})
    out = infer(out)
    _check_outputs(out, trained, prep)
    return out


def _check_outputs(model: onnx.ModelProto, trained: list[str], prep: Prepared) -> None:
    """Every output has a static shape; every gradient has its parameter's shape (internal check)."""
    shapes, _ = static_types(model)
    for o in model.graph.output:
        if o.name not in shapes and o.name not in {t.name for t in model.graph.initializer}:
            raise AssertionError(f"output {o.name!r} has no static shape")
    for p in trained:
        if shapes.get(f"grad.{p}") != prep.shapes[p]:
            raise AssertionError(f"gradient of {p!r} has shape {shapes.get(f'grad.{p}')}, "
                                 f"the parameter {prep.shapes[p]}")
