"""Append the optimizer update to a training graph: one ONNX graph per training step.

Input: a training graph of ``remc.passes.grad`` (outputs ``loss``, ``grad.<p>`` per trainable parameter,
``<stat>.updated`` per BatchNormalization running statistic). Output, the *step graph*:

- every trained parameter ``p`` and running statistic is a graph input that keeps its initializer as the
  default value (a plain ONNX Runtime run from the file takes one step from the initial weights);
- the optimizer state is graph inputs without defaults, zero at the first step: ``<p>.momentum`` (SGD
  with momentum), ``<p>.exp_avg`` and ``<p>.exp_avg_sq`` plus the scalar ``optimizer.step`` (AdamW);
- outputs: ``loss``, then ``<x>.updated`` for every such input ``x`` (parameters, state, statistics),
  so a training loop feeds each step's ``<x>.updated`` back as the next step's ``x``;
- the gradients are no longer outputs: each is read by its parameter's update and freed after it. The
  update nodes (named ``<p>/grad/optimizer/<k>``: backward nodes, by the ``/grad/`` convention) follow the
  node that completes their gradient in the node list (the shared step counter first), and are ordinary
  nodes that the scheduler places, so the budget accounts for the new weights and state.

Updates, in standard ONNX ops (float32 scalars as constants), as PyTorch defines them:

- SGD (``torch.optim.SGD``, dampening 0, not Nesterov): g = grad + wd * p; m = momentum * m + g
  (m = g at the first step, as PyTorch's empty buffer); p = p - lr * m. Without momentum no state.
- AdamW (``torch.optim.AdamW``): t = t + 1; p = p * (1 - lr * wd); m = b1 * m + (1 - b1) * g;
  v = b2 * v + (1 - b2) * g^2; p = p - lr / (1 - b1^t) * m / (sqrt(v) / sqrt(1 - b2^t) + eps).
"""
from __future__ import annotations

from dataclasses import dataclass

import onnx
from onnx import TensorProto, helper

from ..ir.errors import ModelError
from .grad.emit import Emitter, Names
from .options import OPTIMIZERS

GRAD_PREFIX = "grad."
UPDATED_SUFFIX = ".updated"
STEP_INPUT = "optimizer.step"


@dataclass(frozen=True)
class OptimizerOptions:
    """Which optimizer and its hyperparameters."""

    kind: str = "adamw"
    """'sgd' (with momentum) or 'adamw'."""
    lr: float = 1e-3
    """Learning rate."""
    momentum: float = 0.9
    """SGD momentum (0: plain SGD, no state)."""
    betas: tuple[float, float] = (0.9, 0.999)
    """AdamW's decay rates of the first and second moments."""
    eps: float = 1e-8
    """AdamW's denominator term."""
    weight_decay: float = 0.0
    """SGD: L2 term added to the gradient; AdamW: decoupled decay of the weights."""


@dataclass(frozen=True)
class AppendOptimizer:
    """Pass: training graph -> step graph (see the module docstring). Functional: returns a new model."""

    name = "optimizer"
    options: OptimizerOptions = OptimizerOptions()
    """The optimizer."""

    def apply(self, model: onnx.ModelProto) -> onnx.ModelProto:
        """The step graph of ``model``."""
        return append_optimizer(model, self.options)


def trained_parameters(model: onnx.ModelProto) -> list[str]:
    """Parameters with a ``grad.<p>`` output, in output order."""
    inits = {t.name for t in model.graph.initializer}
    out = []
    for o in model.graph.output:
        if o.name.startswith(GRAD_PREFIX):
            p = o.name[len(GRAD_PREFIX):]
            if p not in inits:
                raise ModelError(f"gradient output {o.name!r} names {p!r}, which is not an initializer")
            out.append(p)
    return out


def state_inputs(model: onnx.ModelProto) -> list[str]:
    """Graph inputs ``x`` that have an output ``x.updated``: what a training loop carries between steps."""
    outs = {o.name for o in model.graph.output}
    return [i.name for i in model.graph.input if i.name + UPDATED_SUFFIX in outs]


def append_optimizer(model: onnx.ModelProto, opts: OptimizerOptions) -> onnx.ModelProto:
    """The step graph of training graph ``model`` with optimizer ``opts`` (module docstring)."""
    _check_options(opts)
    if state_inputs(model):
        raise ModelError("the model already has an optimizer (it carries state: inputs x with outputs x.updated)")
    params = trained_parameters(model)
    if not params:
        raise ModelError("the model has no grad.<parameter> outputs: build a training graph with remc grad first")
    m = onnx.ModelProto()
    m.CopyFrom(model)
    g = m.graph
    types = {t.name: (t.data_type, list(t.dims)) for t in g.initializer}
    for p in params:
        if types[p][0] != TensorProto.FLOAT:
            raise ModelError(f"parameter {p!r} is not float32; the optimizer pass updates float32 parameters")
    names = Names({n.name for n in g.node}, {v.name for v in list(g.input) + list(g.output) + list(g.initializer)}
                  | {o for n in g.node for o in n.output})
    em = Emitter(_opset(m), names, const_prefix="optimizer.const")
    new_inputs: list[onnx.ValueInfoProto] = []
    new_outputs: list[onnx.ValueInfoProto] = []
    step = _step(em, opts, new_inputs, new_outputs) if opts.kind == "adamw" else None
    groups: dict[str, tuple[int, int]] = {}  # parameter -> its update nodes em.nodes[a:b]
    for p in params:
        start = len(em.nodes)
        dtype, dims = types[p]
        with em.scope(f"{p}/grad/optimizer"):
            state = [f"{p}.{s}" for s in _state_names(opts)]
            for s in state:
                names.values.add(s)
                new_inputs.append(helper.make_tensor_value_info(s, dtype, dims))
            if opts.kind == "sgd":
                outs = _sgd(em, p, f"{GRAD_PREFIX}{p}", state, opts, step)
            else:
                outs = _adamw(em, p, f"{GRAD_PREFIX}{p}", state, opts, step)
        for name, val in zip([p] + state, outs):
            new_outputs.append(helper.make_tensor_value_info(name + UPDATED_SUFFIX, dtype, dims))
            _rename_output(em, val, name + UPDATED_SUFFIX)
        groups[p] = (start, len(em.nodes))
    stats = [o.name[: -len(UPDATED_SUFFIX)] for o in g.output if o.name.endswith(UPDATED_SUFFIX)]
    kept = [o for o in g.output if not o.name.startswith(GRAD_PREFIX)]
    param_inputs = [helper.make_tensor_value_info(x, *types[x]) for x in params + stats
                    if x not in {i.name for i in g.input}]
    _set(g.node, _interleave(list(g.node), em.nodes, groups))
    g.initializer.extend(em.initializers)
    _set(g.input, list(g.input) + param_inputs + new_inputs)
    _set(g.output, kept[:1] + new_outputs + kept[1:])
    helper.set_model_props(m, {**{p.key: p.value for p in m.metadata_props}, "remc.optimizer": _describe(opts)})
    return m


def _interleave(nodes: list[onnx.NodeProto], update: list[onnx.NodeProto], groups: dict[str, tuple[int, int]]
                ) -> list[onnx.NodeProto]:
    """The node list with each parameter's update right after the node that completes its gradient, and
    the shared step nodes first: the order the scheduler starts from (its stages follow the node list), so
    each gradient can be freed as soon as its parameter is updated, not at the end of the step."""
    after: dict[int, list[tuple[int, int]]] = {}
    producer = {o: k for k, n in enumerate(nodes) for o in n.output if o}
    for p, span in groups.items():
        after.setdefault(producer.get(f"{GRAD_PREFIX}{p}", len(nodes) - 1), []).append(span)
    first = min((a for a, _ in groups.values()), default=len(update))
    out = list(update[:first])
    for k, n in enumerate(nodes):
        out.append(n)
        for a, b in after.get(k, []):
            out.extend(update[a:b])
    return out


def _check_options(opts: OptimizerOptions) -> None:
    if opts.kind not in OPTIMIZERS:
        raise ModelError(f"unknown optimizer {opts.kind!r}; choose one of {', '.join(OPTIMIZERS)}")
    if not opts.lr > 0:
        raise ModelError(f"learning rate must be > 0, got {opts.lr}")
    if not (0 <= opts.momentum < 1 and all(0 <= b < 1 for b in opts.betas) and opts.eps > 0
            and opts.weight_decay >= 0):
        raise ModelError("optimizer options out of range: 0 <= momentum, betas < 1; eps > 0; weight decay >= 0")


def _describe(opts: OptimizerOptions) -> str:
    if opts.kind == "sgd":
        return f"sgd lr={opts.lr} momentum={opts.momentum} weight_decay={opts.weight_decay}"
    return f"adamw lr={opts.lr} betas={opts.betas[0]},{opts.betas[1]} eps={opts.eps} weight_decay={opts.weight_decay}"


def _opset(m: onnx.ModelProto) -> int:
    return next(o.version for o in m.opset_import if o.domain in ("", "ai.onnx"))


def _state_names(opts: OptimizerOptions) -> list[str]:
    if opts.kind == "sgd":
        return ["momentum"] if opts.momentum else []
    return ["exp_avg", "exp_avg_sq"]


def _set(field, values: list) -> None:  # noqa: ANN001 (a repeated protobuf field)
    items = list(values)
    del field[:]
    field.extend(items)


def _rename_output(em: Emitter, value: str, out: str) -> None:
    """Make the node that produces ``value`` write ``out`` instead (or add an Identity when ``value`` is
    not produced by an update node: a graph input passed through)."""
    for node in em.nodes:
        for k, o in enumerate(node.output):
            if o == value:
                node.output[k] = out
                for n in em.nodes:
                    for j, i in enumerate(n.input):
                        if i == value:
                            n.input[j] = out
                return
    em.op("Identity", value, out=out)


def _step(em: Emitter, o: OptimizerOptions, inputs: list, outputs: list) -> dict[str, str]:
    """t = step + 1, and from it AdamW's step size lr / (1 - b1^t) and sqrt(1 - b2^t), shared by all
    parameters."""
    f = TensorProto.FLOAT
    em.names.values.add(STEP_INPUT)
    inputs.append(helper.make_tensor_value_info(STEP_INPUT, f, []))
    outputs.append(helper.make_tensor_value_info(STEP_INPUT + UPDATED_SUFFIX, f, []))
    with em.scope("optimizer/grad/step"):
        t = em.op("Add", STEP_INPUT, em.scalar(1.0, f), out=STEP_INPUT + UPDATED_SUFFIX)
        one = em.scalar(1.0, f)
        bc1 = em.op("Sub", one, em.op("Pow", em.scalar(o.betas[0], f), t))
        bc2 = em.op("Sqrt", em.op("Sub", one, em.op("Pow", em.scalar(o.betas[1], f), t)))
        step_size = em.op("Div", em.scalar(o.lr, f), bc1)
    return {"step_size": step_size, "bc2": bc2}


def _sgd(em: Emitter, p: str, g: str, state: list[str], o: OptimizerOptions, step: dict | None) -> list[str]:
    """New p (and momentum) of SGD; ``step`` is unused (no bias correction)."""
    f = TensorProto.FLOAT
    if o.weight_decay:
        g = em.op("Add", g, em.op("Mul", p, em.scalar(o.weight_decay, f)))
    outs = []
    if state:
        m = em.op("Add", em.op("Mul", state[0], em.scalar(o.momentum, f)), g)
        g = m
        outs.append(m)
    new_p = em.op("Sub", p, em.op("Mul", g, em.scalar(o.lr, f)))
    return [new_p] + outs


def _adamw(em: Emitter, p: str, g: str, state: list[str], o: OptimizerOptions, step: dict | None) -> list[str]:
    """New p, first and second moments of AdamW."""
    if step is None:
        raise AssertionError("AdamW needs the step counter")
    f = TensorProto.FLOAT
    b1, b2 = o.betas
    decayed = em.op("Mul", p, em.scalar(1.0 - o.lr * o.weight_decay, f)) if o.weight_decay else p
    m = em.op("Add", em.op("Mul", state[0], em.scalar(b1, f)), em.op("Mul", g, em.scalar(1.0 - b1, f)))
    v = em.op("Add", em.op("Mul", state[1], em.scalar(b2, f)),
              em.op("Mul", em.op("Mul", g, g), em.scalar(1.0 - b2, f)))
    denom = em.op("Add", em.op("Div", em.op("Sqrt", v), step["bc2"]), em.scalar(o.eps, f))
    new_p = em.op("Sub", decayed, em.op("Mul", em.op("Div", m, denom), step["step_size"]))
    return [new_p, m, v]


def memory_parts(model: onnx.ModelProto) -> dict[str, int]:
    """Bytes of what a step graph holds for the whole step, by part: ``weights`` (trained parameters and
    running statistics), ``optimizer_state`` (momentum, moments, step), ``updated`` (their new values,
    graph outputs), ``gradients`` (one per trained parameter; each is freed after its update) and ``data``
    (the other graph inputs). No schedule of the step needs less than weights + optimizer_state +
    updated + data, plus the largest gradient."""
    from ..ir.onnx_types import static_types
    types = static_types(model)
    carried = set(state_inputs(model))
    params = {o.name[: -len(UPDATED_SUFFIX)] for o in model.graph.output if o.name.endswith(UPDATED_SUFFIX)}
    inits = {t.name for t in model.graph.initializer}
    size = lambda n: types[n].nbytes if n in types else 0  # noqa: E731
    weights = [n for n in carried if n in inits]
    state = [n for n in carried if n not in inits]
    grads = [f"{GRAD_PREFIX}{p}" for p in params if any(f"{GRAD_PREFIX}{p}" in n.output for n in model.graph.node)]
    data = [i.name for i in model.graph.input if i.name not in carried and i.name not in inits]
    return {"weights": sum(map(size, weights)), "optimizer_state": sum(map(size, state)),
            "updated": sum(size(o.name) for o in model.graph.output if o.name.endswith(UPDATED_SUFFIX)),
            "gradients": sum(map(size, grads)), "largest_gradient": max(map(size, grads), default=0),
            "data": sum(map(size, data))}
