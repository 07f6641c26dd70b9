"""Training steps of a step graph (``remc.passes.optimizer``) on ONNX Runtime, state kept on the device.

A ``Trainer`` holds one session of the step graph, made like every remc session (``runtime.make_session``:
file order, optimizations off, under ``mem_limit`` when given) with the carried inputs' initializers
removed from the model, so the weights are not also held by the session. Each step binds with IOBinding:
the data feeds (copied to the device), the carried state (``x`` for each output ``x.updated``: weights,
optimizer state, running statistics) as the OrtValues the previous step produced, and every output to
the device, allocated by ONNX Runtime from its arena, which ``mem_limit`` caps. Only the loss (a scalar)
is copied to the host each step. From the second step on, the carried state lives in that arena, so the
cap covers weights, gradients, optimizer state and activations, as remc's budget does. ``mem_limit`` is
the whole budget: the arena gets it less the bytes held outside (``outside``: the data feeds, and on CPU
the initializers ONNX Runtime uses in place). The arena's traffic is replayed exactly by
``passes.arena.replay`` with ``carried`` (each step's outputs ``x.updated`` stay in the arena as the next
step's inputs), which ``train_events`` prepares.

With ``fixed_buffers`` every bound value has a fixed address instead: the state lives in two buffer sets
A and B allocated once, outside the session's arena; even steps read A and write B, odd steps read B and
write A (two IOBindings); data feeds are copied into fixed buffers (``OrtValue.update_inplace``) and
every other output goes to a fixed buffer. This is what CUDA graph capture needs: with ``cuda_graph``
the session is made with ``enable_cuda_graph`` and each parity is its own graph (run option
``gpu_graph_id`` 0 or 1), captured after ONNX Runtime's warm-up runs and replayed from then on. The
buffers outside the arena (``fixed_bytes``: both state sets, the data, the other outputs) count
against the cap: the session's arena gets ``mem_limit - fixed_bytes``.

With remc's placement (``DeviceSettings.placed_loop``: CUDA, and CPU where ``backends.capi`` can drive ONNX
Runtime's C library; the default) a capped trainer always uses fixed buffers, and the session allocates from
remc's buffer of ``mem_limit - fixed_bytes`` at the offsets of the stripped step graph's layout (its graph
outputs bound, so not in the layout: ``backends.placement.model_layout(bound_outputs=True)``); ``peak`` is
then ``fixed_bytes`` plus the buffer's high-water mark. On CPU the fixed buffers are numpy arrays
(``host_buffers``): the C-API session reads the state and data from them and writes every output into them
(``capi.Binding.bind_cpu_input``, ``bind_output_buffer``).
"""
from __future__ import annotations

import json
import os
import shutil
import tempfile
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass

import numpy as np
import onnx
import onnxruntime as ort
from onnx import helper, numpy_helper

from remc.ir.device import parse_device
from remc.ir.errors import ModelError
from remc.ir.onnx_types import copy_model, static_types
from remc.passes.optimizer import UPDATED_SUFFIX, state_inputs

from .runtime import DEFAULT_SETTINGS, DeviceSettings, _failure, capped_session, make_session

Feeds = Callable[[int], Mapping[str, np.ndarray]]
"""The data feeds (inputs and labels) of step k."""


@dataclass(frozen=True)
class TrainResult:
    """What ``train`` measured."""

    losses: tuple[float, ...]
    """The loss of every step."""
    step_seconds: tuple[float, ...]
    """Wall time of every step (including the host copy of the loss)."""
    arena_peak: int | None = None
    """Arena high-water mark over the profiled steps (profiler ``mem_in_use_peak``), bytes."""
    state_bytes: int = 0
    """Bytes of the carried state (weights, optimizer state, statistics)."""
    placed_peak: int | None = None
    """With remc's allocator: fixed buffers plus the buffer's high-water mark, bytes (exact)."""
    placement: dict | None = None
    """With remc's allocator: its requests ('calls'), those at their planned offset ('planned'), 'fallback',
    'rejected', the buffer ('buffer') and its high-water mark ('high_water')."""

    @property
    def steps_per_second(self) -> float:
        """Steps per second over all steps."""
        total = sum(self.step_seconds)
        return len(self.step_seconds) / total if total else float("inf")


def split_state(model: onnx.ModelProto) -> tuple[onnx.ModelProto, dict[str, np.ndarray]]:
    """(the model without the carried inputs' initializers, their initial values). Carried inputs without
    an initializer (optimizer state) start at zero."""
    carried = state_inputs(model)
    if not carried:
        raise ModelError("the model carries no state between steps (no input x with an output x.updated); "
                         "append an optimizer first")
    types = static_types(model)
    init = {t.name: t for t in model.graph.initializer}
    values: dict[str, np.ndarray] = {}
    for name in carried:
        if name in init:
            values[name] = numpy_helper.to_array(init[name])
        elif name in types:
            t = types[name]
            values[name] = np.zeros(t.shape, dtype=helper.tensor_dtype_to_np_dtype(t.elem_type))
        else:
            raise ModelError(f"carried input {name!r} has no static shape")
    return copy_model(model, drop=lambda t: t.name in values), values


def loop_outside_bytes(stripped: onnx.ModelProto, initial: Mapping[str, np.ndarray], device: str) -> int:
    """Bytes a training loop of ``stripped`` (``split_state``) holds outside the session's arena: the data
    feeds, and on CPU the initializers used in place (``runtime.outside_bytes``); not the carried state,
    which from the second step on is the arena's (the previous step's outputs)."""
    from .runtime import outside_bytes
    return outside_bytes(stripped, device) - int(sum(v.nbytes for v in initial.values()))


def fixed_outside_bytes(stripped: onnx.ModelProto, initial: Mapping[str, np.ndarray], device: str) -> int:
    """Bytes a fixed-buffer loop (``Trainer(fixed_buffers=True)``) holds outside the session's arena: two
    sets of the carried state, the data and every other output's buffer, and on CPU the initializers used
    in place."""
    types = static_types(stripped)
    carried = {n + UPDATED_SUFFIX for n in initial}
    data = sum(types[i.name].nbytes for i in stripped.graph.input if i.name not in initial and i.name in types)
    other = sum(types[o.name].nbytes for o in stripped.graph.output if o.name not in carried and o.name in types)
    in_place = loop_outside_bytes(stripped, initial, device) - data
    return int(2 * sum(v.nbytes for v in initial.values()) + data + other + in_place)


def train_events(model: onnx.ModelProto, device: str = "cpu", *, measure_kernels: bool = True,
                 fixed_buffers: bool = True, settings: DeviceSettings = DEFAULT_SETTINGS):  # noqa: ANN201
    """(the arena events of a training loop of step graph ``model``, the carried output keys, the bytes
    outside the arena): what ``passes.arena.replay`` replays. With ``fixed_buffers`` every graph output is
    written into a bound buffer outside the arena and every step's arena traffic is the same (no carried
    keys: a plain replay); without, the carried outputs stay in the arena as the next step's inputs
    (``replay(..., carried=...)``). Kernel memory is measured on the stripped graph, whose carried weights
    are inputs (so not pre-packed)."""
    from remc.passes.arena import graph_events

    from .scratch import kernel_memory
    stripped, initial = split_state(model)
    km = kernel_memory(stripped, device, settings=settings) if measure_kernels else None
    if fixed_buffers:
        return (graph_events(stripped, device, km, bound_outputs=True), None,
                fixed_outside_bytes(stripped, initial, device))
    carried = tuple(n + UPDATED_SUFFIX for n in initial)
    return graph_events(stripped, device, km), carried, loop_outside_bytes(stripped, initial, device)


class Trainer:
    """Runs training steps of one step graph with its state on the device (module docstring)."""

    def __init__(self, model: onnx.ModelProto, device: str = "cpu", *, mem_limit: int | None = None,
                 profile_dir: str | None = None, threads: int | None = None, fixed_buffers: bool = False,
                 cuda_graph: bool = False, settings: DeviceSettings = DEFAULT_SETTINGS) -> None:
        stripped, initial = split_state(model)
        self.kind, self.device_id = parse_device(device)
        placed = mem_limit is not None and settings.placed_loop(device) and profile_dir is None
        fixed_buffers = fixed_buffers or placed
        if cuda_graph and self.kind != "cuda":
            raise ModelError("CUDA graph capture needs --device cuda")
        self.fixed = fixed_buffers or cuda_graph
        self.cuda_graph = cuda_graph
        self.host_buffers = placed and self.kind == "cpu"
        """remc's CPU placement (``backends.capi``): the state, data and outputs are numpy arrays the C-API
        session reads and writes in place (no ``OrtValue``)."""
        self.device, self.mem_limit = device, mem_limit
        self.state = {k: self._to_device(v) for k, v in initial.items()}
        self.state_bytes = int(sum(v.nbytes for v in initial.values()))
        types = static_types(stripped)
        outputs = [o.name for o in stripped.graph.output]
        if "loss" not in outputs:
            raise ModelError("the step graph has no 'loss' output")
        self.fixed_bytes = 0
        if self.fixed:
            self.fixed_bytes = fixed_outside_bytes(stripped, initial, device)
            if mem_limit is not None and mem_limit <= self.fixed_bytes:
                from .runtime import OutOfMemory
                raise OutOfMemory(f"out of memory on {device}: a cap of {mem_limit} bytes does not hold the "
                                  f"fixed buffers ({self.fixed_bytes} bytes: two sets of state, data, outputs)",
                                  limit=mem_limit)
        self.outside = loop_outside_bytes(stripped, initial, device)
        held = self.fixed_bytes if self.fixed else self.outside
        if mem_limit is not None and not self.fixed and mem_limit <= held:
            from .runtime import OutOfMemory
            raise OutOfMemory(f"out of memory on {device}: a cap of {mem_limit} bytes does not hold the data and "
                              f"parameters outside the arena ({held} bytes)", limit=mem_limit)
        arena_limit = mem_limit - held if mem_limit is not None else None
        self.allocator = None
        if placed:
            from .placement import model_layout
            lay = model_layout(stripped, device, settings, bound_outputs=True)
            self.session, self.allocator = capped_session(stripped, device, arena_limit, settings, layout=lay,
                                                          cuda_graph=cuda_graph, threads=threads)
        else:
            self.session = make_session(stripped, device, mem_limit=arena_limit, threads=threads, log_level=4,
                                        profile=profile_dir is not None, cuda_graph=cuda_graph, settings=settings,
                                        profile_prefix=os.path.join(profile_dir, "ort") if profile_dir else None)
        self.output_names = [o.name for o in self.session.get_outputs()]
        self.data_names = [i.name for i in self.session.get_inputs() if i.name not in initial]
        self.steps_done = 0
        if self.fixed:
            self._make_bindings(types)

    def _empty(self, shape, dtype) -> ort.OrtValue | np.ndarray:
        if self.host_buffers:
            return np.zeros(shape, dtype=dtype)
        if self.kind == "cpu":
            return ort.OrtValue.ortvalue_from_numpy(np.zeros(shape, dtype=dtype))
        return ort.OrtValue.ortvalue_from_shape_and_type(list(shape), dtype, "cuda", self.device_id)

    def _make_bindings(self, types: dict) -> None:
        """Two state sets, fixed data and output buffers, and one IOBinding per step parity."""
        other = {n: self.state[n] for n in self.state}
        second = {n: self._to_device(np.zeros_like(_host(v))) for n, v in other.items()}
        self.sets = [other, second]
        self.data_bufs: dict[str, ort.OrtValue] = {}
        for name in self.data_names:
            t = types.get(name)
            if t is None:
                raise ModelError(f"graph input {name!r} has no static shape (needed for fixed buffers)")
            self.data_bufs[name] = self._empty(t.shape, helper.tensor_dtype_to_np_dtype(t.elem_type))
        self.out_bufs: dict[str, ort.OrtValue] = {}
        for name in self.output_names:
            if name.endswith(UPDATED_SUFFIX) and name[: -len(UPDATED_SUFFIX)] in self.state:
                continue
            t = types.get(name)
            if t is None:
                raise ModelError(f"graph output {name!r} has no static shape (needed for fixed buffers)")
            self.out_bufs[name] = self._empty(t.shape, helper.tensor_dtype_to_np_dtype(t.elem_type))
        self.bindings = []
        for parity in (0, 1):
            b = self.session.io_binding()
            bind_in = b.bind_cpu_input if self.host_buffers else b.bind_ortvalue_input
            bind_out = b.bind_output_buffer if self.host_buffers else b.bind_ortvalue_output
            for name, ov in self.data_bufs.items():
                bind_in(name, ov)
            for name, ov in self.sets[parity].items():
                bind_in(name, ov)
            for name in self.output_names:
                base = name[: -len(UPDATED_SUFFIX)] if name.endswith(UPDATED_SUFFIX) else None
                ov = self.sets[1 - parity][base] if base in self.state else self.out_bufs[name]
                bind_out(name, ov)
            self.bindings.append(b)

    def _to_device(self, arr: np.ndarray) -> ort.OrtValue | np.ndarray:
        arr = np.ascontiguousarray(arr)
        if self.host_buffers:
            return arr.copy()
        if self.kind == "cpu":
            return ort.OrtValue.ortvalue_from_numpy(arr.copy())
        return ort.OrtValue.ortvalue_from_numpy(arr, "cuda", self.device_id)

    def step(self, feeds: Mapping[str, np.ndarray]) -> float:
        """One training step on ``feeds`` (the data inputs); the state advances; returns the loss."""
        if self.fixed:
            return self._fixed_step(feeds)
        binding = self.session.io_binding()
        keep = []
        for name in self.data_names:
            if name not in feeds:
                raise ModelError(f"no feed for graph input {name!r}")
            ov = self._to_device(feeds[name])
            keep.append(ov)
            binding.bind_ortvalue_input(name, ov)
        for name, ov in self.state.items():
            binding.bind_ortvalue_input(name, ov)
        for name in self.output_names:
            binding.bind_output(name, self.kind, self.device_id)
        try:
            self.session.run_with_iobinding(binding)
        except Exception as exc:
            raise _failure(exc, self.device, self.mem_limit, "running a training step") from exc
        outs = dict(zip(self.output_names, binding.get_outputs()))
        binding.clear_binding_inputs()
        binding.clear_binding_outputs()
        for name in self.state:
            self.state[name] = outs[name + UPDATED_SUFFIX]
        return float(outs["loss"].numpy())

    def _fixed_step(self, feeds: Mapping[str, np.ndarray]) -> float:
        parity = self.steps_done % 2
        for name, ov in self.data_bufs.items():
            if name not in feeds:
                raise ModelError(f"no feed for graph input {name!r}")
            if self.host_buffers:
                data = np.asarray(feeds[name])
                if data.shape != ov.shape or data.dtype != ov.dtype:
                    raise ModelError(f"feed {name!r} is {data.dtype}{list(data.shape)}, the graph takes "
                                     f"{ov.dtype}{list(ov.shape)}")
                np.copyto(ov, data)
            else:
                ov.update_inplace(np.ascontiguousarray(feeds[name]))
        opts = None
        if self.cuda_graph:
            opts = ort.RunOptions()
            opts.add_run_config_entry("gpu_graph_id", str(parity))
        failed = 0
        if self.allocator is not None:
            self.allocator.begin_run()
            failed = len(self.allocator.stats.failures)
        try:
            self.session.run_with_iobinding(self.bindings[parity], opts)
        except Exception as exc:
            raise _failure(exc, self.device, self.mem_limit, "running a training step", self.allocator,
                           failed) from exc
        self.bindings[parity].synchronize_outputs()
        self.steps_done += 1
        self.state = self.sets[1 - parity]
        return float(_host(self.out_bufs["loss"]).reshape(-1)[0])

    @property
    def placed_peak(self) -> int | None:
        """With remc's allocator: the bytes the steps so far needed in all (fixed buffers plus its high-water mark)."""
        return None if self.allocator is None else self.fixed_bytes + self.allocator.stats.high_water

    @property
    def placement_stats(self) -> dict | None:
        """With remc's allocator: what it saw (``TrainResult.placement``)."""
        a = self.allocator
        if a is None:
            return None
        st = a.stats
        return {"calls": st.calls, "planned": st.planned, "fallback": st.fallback, "rejected": st.rejected,
                "buffer": a.capacity, "high_water": st.high_water, "fixed_bytes": self.fixed_bytes}

    def state_numpy(self) -> dict[str, np.ndarray]:
        """The carried state, copied to the host."""
        return {k: _host(v).copy() for k, v in self.state.items()}


def _host(value: ort.OrtValue | np.ndarray) -> np.ndarray:
    """A host array of ``value`` (the array itself for a numpy buffer, a copy of an ``OrtValue``)."""
    return value if isinstance(value, np.ndarray) else value.numpy()


def train(model: onnx.ModelProto, feeds: Feeds, steps: int, device: str = "cpu", *,
          mem_limit: int | None = None, threads: int | None = None,
          on_step: Callable[[int, float, float], None] | None = None, fixed_buffers: bool = False,
          cuda_graph: bool = False, settings: DeviceSettings = DEFAULT_SETTINGS) -> TrainResult:
    """Run ``steps`` training steps; ``on_step(k, loss, seconds)`` after each (progress). ``fixed_buffers``
    and ``cuda_graph``: see the module docstring."""
    trainer = Trainer(model, device, mem_limit=mem_limit, threads=threads, fixed_buffers=fixed_buffers,
                      cuda_graph=cuda_graph, settings=settings)
    losses, times = [], []
    for k in range(steps):
        data = feeds(k)
        t0 = time.perf_counter()
        loss = trainer.step(data)
        times.append(time.perf_counter() - t0)
        losses.append(loss)
        if on_step is not None:
            on_step(k, loss, times[-1])
    return TrainResult(tuple(losses), tuple(times), None, trainer.state_bytes, trainer.placed_peak,
                       trainer.placement_stats)


def measure_train_peak(model: onnx.ModelProto, feeds: Feeds, device: str = "cpu", *, steps: int = 2,
                       mem_limit: int | None = None, threads: int | None = None,
                       fixed_buffers: bool = False) -> int | None:
    """Arena high-water mark over ``steps`` profiled steps (at least 2: from the second step on the
    carried state is in the arena); None where this build's profile has no arena stats."""
    tmp = tempfile.mkdtemp(prefix="remc-train-prof-")
    try:
        trainer = Trainer(model, device, mem_limit=mem_limit, profile_dir=tmp, threads=threads,
                          fixed_buffers=fixed_buffers)
        for k in range(max(steps, 2)):
            trainer.step(feeds(k))
        path = trainer.session.end_profiling()
        with open(path) as f:
            events = json.load(f)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    peaks = [int(e["args"]["mem_in_use_peak"]) for e in events
             if e.get("cat") == "Node" and "mem_in_use_peak" in e.get("args", {})]
    return max(peaks) if peaks else None


def least_cap(model: onnx.ModelProto, feeds: Feeds, device: str = "cpu", *, steps: int = 2,
              resolution: int = 256, fixed_buffers: bool = True, settings: DeviceSettings = DEFAULT_SETTINGS) -> int:
    """The least budget (arena limit plus the bytes outside it) under which ``steps`` training steps run,
    found by ``passes.arena.bisect_least`` on the arena limit (a fresh session per probe): the search the
    replay (``remc.fit.predict`` with ``steps``) runs, so both probe the same caps. With remc's placement
    (``settings.placed_loop``) the limit is remc's buffer (fixed buffers)."""
    from remc.passes.arena import bisect_least

    from .runtime import OutOfMemory
    stripped, initial = split_state(model)
    fixed_buffers = fixed_buffers or settings.placed_loop(device)
    outside = (fixed_outside_bytes if fixed_buffers else loop_outside_bytes)(stripped, initial, device)

    def fits(cap: int) -> bool:
        try:
            trainer = Trainer(model, device, mem_limit=cap + outside, fixed_buffers=fixed_buffers,
                              settings=settings)
            for k in range(max(steps, 2)):
                trainer.step(feeds(k))
            return True
        except OutOfMemory:
            return False

    need = bisect_least(fits, resolution=resolution)
    if need is None:
        raise ModelError(f"no arena cap runs the training step on {device}")
    return need + outside
