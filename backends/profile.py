"""``node_costs(model, "profile", device=...)`` instead times each distinct node signature (op type,
domain, attributes, input and output shapes and dtypes, which inputs are constants) alone on the
device through ONNX Runtime and returns seconds (median of ``repeats`` runs after a warm-up, per
signature capped by ``time_cap`` seconds). Results are cached on disk as JSON, keyed by a hash of the
signature, the device (with the host CPU or GPU name) and the onnxruntime version.

With a ``deadline`` (``remc compile --time-limit`` covers profiling too: remc/timebudget.py) the signatures
not in the cache are timed smallest FLOPs first, each only when two runs at the most seconds per FLOP seen
so far fit before the deadline; those left are priced by FLOPs times the measured seconds per FLOP of their
op type
(``ProfileSummary`` counts them; the compile report says so). Only timed signatures enter the cache.
"""
from __future__ import annotations

import functools
import hashlib
import json
import math
import os
import platform
import shutil
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import onnx
from onnx import helper, numpy_helper

from ..ir.device import parse_device
from ..ir.errors import ModelError, RuntimeFailure, UnsupportedOpError
from ..ir.onnx_types import TensorType, node_keys, static_types
from ..passes.costs import flop_costs
from . import runtime
from .bounded import run_bounded

MIN_SECONDS = 1e-9
"""Least measured cost of a node."""


SMALL_CONSTANT = 4096
"""Constant inputs with at most this many elements keep their real values in one-node models."""


def _opset(model: onnx.ModelProto, domain: str) -> int:
    domain = "" if domain == "ai.onnx" else domain
    return next((o.version for o in model.opset_import if o.domain == domain), 0)


def _attr_digest(node: onnx.NodeProto) -> str:
    h = hashlib.sha256()
    for a in sorted(node.attribute, key=lambda a: a.name):
        h.update(a.SerializeToString(deterministic=True))
    return h.hexdigest()[:16]


def signature(model: onnx.ModelProto, node: onnx.NodeProto, types: dict[str, TensorType],
              constants: set[str]) -> dict:
    """What determines a node's time: op, domain and opset, attributes, input and output types, and
    which inputs are constants (ORT pre-packs constant weights)."""
    def tt(name: str) -> list | None:
        t = types.get(name) if name else None
        return None if t is None else [list(t.shape), t.elem_type]
    return {
        "op": node.op_type, "domain": node.domain, "opset": _opset(model, node.domain), "attrs": _attr_digest(node),
        "inputs": [None if not i else [tt(i), i in constants] for i in node.input],
        "outputs": [tt(o) for o in node.output],
    }


@functools.lru_cache(maxsize=4)
def device_tag(device: str) -> str:
    """The device a timing belongs to: CPU model and core count, or the GPU's name."""
    kind, idx = parse_device(device)
    if kind == "cpu":
        name = platform.processor() or platform.machine()
        try:
            with open("/proc/cpuinfo") as f:
                name = next((ln.split(":", 1)[1].strip() for ln in f if ln.startswith("model name")), name)
        except OSError:
            pass
        return f"cpu/{name}/{os.cpu_count()}"
    smi = shutil.which("nvidia-smi")
    name = "unknown-gpu"
    if smi:
        r = subprocess.run([smi, "--query-gpu=name", "--format=csv,noheader", "-i", str(idx)],
                           capture_output=True, text=True, timeout=30)
        name = r.stdout.strip() or name
    return f"cuda/{name}"


def _cache_key(sig: dict, device: str, settings: runtime.DeviceSettings = runtime.DEFAULT_SETTINGS,
               tag: str | None = None) -> str:
    """The cache key of signature ``sig`` on ``device``; ``tag``: ``device_tag(device)`` where the caller has it (it
    reads /proc/cpuinfo, or runs nvidia-smi)."""
    import onnxruntime
    tag = device_tag(device) if tag is None else tag
    if not device.startswith("cpu") and settings.cudnn_conv_algo_search != "HEURISTIC":
        tag += f"/cudnn={settings.cudnn_conv_algo_search}"  # another algorithm: other times and workspaces
    if not settings.prepack:
        tag += "/no-prepack"  # no packed weight copies: other kernel memory and times
    blob = json.dumps({"sig": sig, "device": tag, "ort": onnxruntime.__version__}, sort_keys=True)
    return hashlib.sha256(blob.encode()).hexdigest()


class JsonCache:
    """An on-disk table of measurements by signature key: ``<dir>/<name>.json``, {"version", "entries"}.
    New entries are merged into the file on ``save`` (re-read first, so parallel writers keep theirs)."""

    def __init__(self, name: str, cache_dir: str | Path | None = None) -> None:
        self.name = name
        self.path = Path(cache_dir or Path.home() / ".cache" / "remc" / "costs") / f"{name}.json"
        self.entries: dict[str, dict] = self._read()
        self.new: dict[str, dict] = {}

    def _read(self) -> dict[str, dict]:
        try:
            with open(self.path) as f:
                return dict(json.load(f).get("entries", {}))
        except FileNotFoundError:
            return {}
        except (OSError, ValueError) as exc:
            raise RuntimeFailure(f"{self.name} cache {str(self.path)!r} is unreadable ({exc}); delete it") from exc

    def entry(self, key: str) -> dict | None:
        return self.entries.get(key) or self.new.get(key)

    def save(self) -> None:
        if not self.new:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        merged = {**self._read(), **self.new}
        fd, tmp = tempfile.mkstemp(dir=self.path.parent, prefix=f".{self.name}-", suffix=".json")
        with os.fdopen(fd, "w") as f:
            json.dump({"version": 1, "entries": merged}, f, indent=0, sort_keys=True)
        os.replace(tmp, self.path)
        self.entries, self.new = merged, {}


class CostCache(JsonCache):
    """Measured seconds: ``<dir>/profile.json``, {key: {"seconds", "op", "runs"}}."""

    def __init__(self, cache_dir: str | Path | None = None) -> None:
        super().__init__("profile", cache_dir)

    def get(self, key: str) -> float | None:
        e = self.entry(key)
        return None if e is None else float(e["seconds"])

    def put(self, key: str, seconds: float, op: str, runs: int) -> None:
        self.new[key] = {"seconds": seconds, "op": op, "runs": runs}


class _Constants(Mapping[str, "np.ndarray | None"]):
    """Initializer and Constant-node values by name, each read into an array at its first lookup: the names
    alone make the signatures, and a compile whose signatures are all cached reads no value (swin_t from
    torchvision: 4004 weight reads took 3.7 s of a loaded compile's grouping and measuring)."""

    def __init__(self, sources: dict[str, Callable[[], np.ndarray | None]]) -> None:
        self._sources = sources
        self._values: dict[str, np.ndarray | None] = {}

    def __getitem__(self, name: str) -> np.ndarray | None:
        if name not in self._values:
            self._values[name] = self._sources[name]()
        return self._values[name]

    def __contains__(self, name: object) -> bool:
        return name in self._sources

    def __iter__(self) -> Iterator[str]:
        return iter(self._sources)

    def __len__(self) -> int:
        return len(self._sources)


def _constant_values(model: onnx.ModelProto, base_dir: str | None) -> Mapping[str, np.ndarray | None]:
    """Initializer and Constant-node values by name (read at first lookup, ``_Constants``); None for data that
    is not available (shape-only). An initializer that is also a graph input (a step graph's weights,
    ``passes/optimizer.py``) is not a constant: the caller may feed it, so ONNX Runtime neither pre-packs nor
    folds it (``Graph::GetConstantInitializer`` skips overridable initializers from IR version 4 on)."""
    out: dict[str, Callable[[], np.ndarray | None]] = {}
    inputs = {i.name for i in model.graph.input} if model.ir_version >= 4 else set()
    for init in model.graph.initializer:
        if init.name not in inputs:
            out[init.name] = functools.partial(_tensor_or_none, init, base_dir)
    for node in model.graph.node:
        if node.op_type == "Constant" and node.domain in ("", "ai.onnx"):
            a = node.attribute[0]
            if a.name == "value":
                out[node.output[0]] = functools.partial(_tensor_or_none, a.t, base_dir)
            else:
                out[node.output[0]] = functools.partial(_attribute_array, a)
    return _Constants(out)


def _attribute_array(a: onnx.AttributeProto) -> np.ndarray:
    """A Constant node's ``value_*`` attribute (other than ``value``) as an array."""
    return np.array(helper.get_attribute_value(a), dtype=np.float32 if "float" in a.name else np.int64)


def _tensor_or_none(t: onnx.TensorProto, base_dir: str | None) -> np.ndarray | None:
    if t.data_location == onnx.TensorProto.EXTERNAL:
        if base_dir is None:
            return None
        try:
            return numpy_helper.to_array(t, base_dir)
        except Exception:  # shape-only external tensor: its file or bytes do not exist
            return None
    try:
        return numpy_helper.to_array(t)
    except Exception:
        return None


def _path_to(model: onnx.ModelProto, values: list[str]) -> onnx.ModelProto:
    """A copy of ``model`` with only the nodes that ``values`` depend on (and the inputs and initializers
    those read), its outputs ``values``: the forward path to a training graph's indices, not the whole
    step. ``model`` itself when a node has a subgraph (its outer-scope reads are not followed)."""
    if any(a.type in (onnx.AttributeProto.GRAPH, onnx.AttributeProto.GRAPHS)
           for n in model.graph.node for a in n.attribute):
        return model
    producer = {o: i for i, n in enumerate(model.graph.node) for o in n.output if o}
    keep: set[int] = set()
    stack = [producer[v] for v in values if v in producer]
    while stack:
        i = stack.pop()
        if i in keep:
            continue
        keep.add(i)
        stack.extend(producer[x] for x in model.graph.node[i].input if x in producer)
    nodes = [n for i, n in enumerate(model.graph.node) if i in keep]
    read = {x for n in nodes for x in n.input} | set(values)
    graph = helper.make_graph(nodes, model.graph.name, [i for i in model.graph.input if i.name in read], [],
                              [t for t in model.graph.initializer if t.name in read],
                              value_info=[v for v in model.graph.value_info if v.name in read])
    out = helper.make_model(graph, opset_imports=list(model.opset_import), ir_version=model.ir_version)
    out.functions.extend(model.functions)
    return out


def _random_like(t: TensorType, rng: np.random.Generator) -> np.ndarray:
    dtype = np.dtype(helper.tensor_dtype_to_np_dtype(t.elem_type))
    if dtype in (np.float32, np.float64):  # positive, away from 0: no NaN from Log/Sqrt/Div
        v = rng.random(t.shape, dtype=dtype)  # drawn in its own type: no float64 copy to convert
        v += 0.5
        return v
    if dtype.kind == "f":
        return rng.uniform(0.5, 1.5, size=t.shape).astype(dtype)
    if dtype.kind == "b":  # any mask is valid: half true, like a ReLU's
        return rng.random(t.shape) < 0.5
    return np.zeros(t.shape, dtype=dtype)  # zeros are valid indices, shapes come from the original


class RandomPool:
    """Random data for one-node models, drawn once per dtype and handed out as views of its first elements:
    drawing every input of every probe anew took 8.8 of the 9.0 s spent measuring 292 kernels of ResNet50 b32
    on a cold cache (400 tensors of up to 100 MB). The values are what ``_random_like`` draws (floats in
    [0.5, 1.5), masks half true); inputs share them, which no measurement of time or memory can tell. The
    views are read-only: a kernel that wrote into its input would fail instead of changing the next probe's."""

    def __init__(self, seed: int) -> None:
        self.rng = np.random.default_rng([seed, 0x5EED])
        self.pools: dict[np.dtype, np.ndarray] = {}

    def like(self, t: TensorType) -> np.ndarray:
        """Random data of ``t``'s shape and type (integers: zeros, valid indices; ``_random_like``)."""
        dtype = np.dtype(helper.tensor_dtype_to_np_dtype(t.elem_type))
        if dtype.kind not in "fb":
            return np.zeros(t.shape, dtype=dtype)
        n = math.prod(t.shape)
        pool = self.pools.get(dtype)
        if pool is None or pool.size < n:
            pool = _random_like(TensorType((max(n, 1 << 16),), t.elem_type), self.rng)
            pool.flags.writeable = False
            self.pools[dtype] = pool
        return pool[:n].reshape(t.shape)


def _needs_original(t: TensorType) -> bool:
    """Whether a non-constant input of this type must hold the value the original graph computes: integers
    (indices, shapes) must; floats and booleans (masks: any value is valid) get random data instead, so the
    graph is not run for them (a training graph's ReLU masks would need its whole forward pass)."""
    return np.dtype(helper.tensor_dtype_to_np_dtype(t.elem_type)).kind not in "fb"


def _work(p: _Probe, fl: dict[str, float], types: dict[str, TensorType]) -> float:
    """What timing ``p`` scales with: its FLOPs or the elements of its inputs and outputs (random data drawn,
    bytes moved), whichever is larger."""
    elems = sum(math.prod(types[x].shape) for x in list(p.node.input) + list(p.node.output) if x and x in types)
    return max(fl[p.name], float(elems), 1.0)


def run_groups(model: onnx.ModelProto, probes: list[_Probe], types: dict[str, TensorType],
               consts: Mapping) -> list[list[_Probe]]:
    """``probes`` in two groups, order kept: those whose one-node models need no value the graph computes
    (random data and graph inputs do), then those that do (``_original_values`` runs the path to them: at
    batch 256 a ResNet50 forward to its MaxPool, 20 s on a loaded machine), so that a deadline spends its
    time on timing first."""
    first = [p for p in probes if not needs_run(model, p, types, consts)]
    return [g for g in (first, [p for p in probes if needs_run(model, p, types, consts)]) if g]


def needs_run(model: onnx.ModelProto, p: _Probe, types: dict[str, TensorType], consts: Mapping) -> bool:
    """Whether the one-node model of ``p`` needs a value the graph computes (an integer input that is neither
    a constant nor a graph input)."""
    graph_inputs = {i.name for i in model.graph.input}
    return any(i and i not in consts and i not in graph_inputs and i in types and _needs_original(types[i])
               for i in p.node.input)


class Predictor:
    """How long a one-node measurement will take, from its work (FLOPs or bytes): the least whole measurement
    seen (session creation, data, runs: what every one pays) plus the work times the largest rate above that
    seen so far. Was the largest seconds per unit of work, which a tiny op's session overhead made so large
    that every big kernel was predicted past any deadline (ResNet50 b256 with a 3000 s limit: 205 of 285
    signatures skipped in 0.7 s). The rate comes only from the measurements whose work is within
    ``RATE_WINDOW`` of the largest seen: the first measurement pays a one-time start-up (a 36-FLOP node took
    64 ms on CPU, ten times the next ones), which over a tiny op's work made a 20 MFLOP convolution look like
    23 s and left 47 of 60 signatures of a small torch export unprofiled with 7 s to spare. Measurements under
    a deadline run in a child killed at it (``bounded.run_bounded``), so a prediction that is too low costs at
    most the time left."""

    RATE_WINDOW = 4.0
    """The rate is the largest over measurements of at least 1/RATE_WINDOW of the largest work seen."""

    def __init__(self) -> None:
        self.fixed: float | None = None
        self.rate = 0.0
        self._seen: list[tuple[float, float]] = []

    def add(self, work: float, seconds: float) -> None:
        """Record one measurement of ``work`` that took ``seconds``."""
        self._seen.append((max(float(work), 1.0), float(seconds)))
        self.fixed = min(s for _, s in self._seen)
        top = max(w for w, _ in self._seen) / self.RATE_WINDOW
        self.rate = max(max(s - self.fixed, 0.0) / w for w, s in self._seen if w >= top)

    def __call__(self, work: float) -> float:
        """Predicted seconds for ``work`` (0 before any measurement)."""
        return 0.0 if self.fixed is None else self.fixed + self.rate * max(float(work), 1.0)


@dataclass
class _Probe:
    """One signature to time: its first node and what is needed to build its one-node model."""

    key: str
    node: onnx.NodeProto
    name: str


class ProfileCosts:
    """Times each distinct node signature alone on ``device`` (see the module docstring)."""

    def __init__(self, device: str = "cpu", *, cache_dir: str | Path | None = None, repeats: int = 10,
                 warmup: int = 2, time_cap: float = 1.0, seed: int = 0, base_dir: str | None = None,
                 settings: runtime.DeviceSettings = runtime.DEFAULT_SETTINGS, deadline: float | None = None) -> None:
        self.device, self.repeats, self.warmup, self.time_cap = device, repeats, warmup, time_cap
        self.settings = settings
        self.seed, self.base_dir = seed, base_dir
        self.deadline = deadline
        """``time.perf_counter()`` value after which no signature is timed (None: time them all)."""
        self.cache = CostCache(cache_dir)
        self.pool = RandomPool(seed)
        """Random data every one-node model's inputs are views of."""
        self.sessions_built = 0
        self.summary = ProfileSummary()

    def apply(self, model: onnx.ModelProto) -> dict[str, float]:
        """Seconds per node, keyed like ``node_keys``. Signatures are timed smallest first while they fit
        before ``deadline``; the rest are priced by ``_estimate`` (``summary``)."""
        types = static_types(model)
        keys = node_keys(model)
        consts = _constant_values(model, self.base_dir)
        fl = flop_costs(model)
        node_key: dict[str, str] = {}
        probes: dict[str, _Probe] = {}
        weight: dict[str, float] = {}
        for name, node in zip(keys, model.graph.node):
            for o in node.output:
                if o and o not in types:
                    raise ModelError(f"value {o!r} (output of node {name!r}) has no static shape")
            k = _cache_key(signature(model, node, types, set(consts)), self.device, self.settings)
            node_key[name] = k
            weight[k] = weight.get(k, 0.0) + fl[name]
            if self.cache.get(k) is None and k not in probes:
                probes[k] = _Probe(k, node, name)
        # smallest first, so that a deadline never waits on one huge kernel (GPT-2's LM head at batch 8: 70 s
        # a run on a loaded machine); each is started only when its predicted time fits what is left
        order = sorted(probes.values(), key=lambda p: fl[p.name])
        total = sum(fl.values())

        def work(emit) -> None:
            pred = Predictor()  # a timing's seconds from its work: fixed cost plus the largest rate seen
            for gi, group in enumerate(run_groups(model, order, types, consts)):
                # the second group needs a run of the graph up to its inputs: at most the whole graph's FLOPs
                if self._out_of_time() or (gi and needs_run(model, group[0], types, consts)
                                           and not self._fits(pred(0.5 * total))):
                    break
                if all(not self._fits(pred(_work(p, fl, types))) for p in group):
                    continue  # none of the group fits the time left: no values drawn for it
                values = self._original_values(model, group, types, consts)
                for p in group:
                    work_ = _work(p, fl, types)
                    if self._out_of_time() or not self._fits(pred(work_)):
                        continue
                    t0 = time.perf_counter()
                    secs, runs = self._time(model, p, types, consts, values)
                    emit((p.key, secs, p.node.op_type, runs, self.sessions_built))
                    pred.add(work_, time.perf_counter() - t0)  # the whole timing: data, session, runs

        timed = 0

        def put(item: tuple) -> None:
            nonlocal timed
            key, secs, op, runs, built = item
            self.cache.put(key, secs, op, runs)
            self.sessions_built = max(self.sessions_built, built)
            timed += 1

        try:
            # under a deadline on CPU in a child process that is killed at it: one batch-256 run cannot be
            # stopped. CUDA does not survive fork() once initialized: there the deadline is checked between nodes.
            if probes:
                run_bounded(work, put, None if runtime.parse_device(self.device)[0] == "cuda" else self.deadline)
        finally:
            self.cache.save()
        missing = {k for k in probes if self.cache.get(k) is None}
        signatures = set(node_key.values())
        self.summary = ProfileSummary(len(signatures), len(signatures) - len(probes), timed, len(missing),
                                      sum(weight[k] for k in missing) / max(sum(weight.values()), 1.0))
        measured = {name: max(self.cache.get(k), MIN_SECONDS) for name, k in node_key.items() if k not in missing}
        if not missing:
            return measured
        return {**measured, **_estimate(model, fl, measured, {n for n, k in node_key.items() if k in missing})}

    def _out_of_time(self) -> bool:
        return self.deadline is not None and time.perf_counter() >= self.deadline

    def _fits(self, seconds: float) -> bool:
        """Whether a timing predicted to take ``seconds`` (all of it: input data, session, runs) ends before
        the deadline."""
        return self.deadline is None or time.perf_counter() + seconds <= self.deadline

    def _original_values(self, model: onnx.ModelProto, probes: list[_Probe], types: dict[str, TensorType],
                         consts: Mapping) -> dict[str, np.ndarray]:
        """Graph-input feeds, plus the non-float values the original graph computes for probed nodes.

        Runs only the path to those values (``_path_to``, and ``only_execute_path_to_fetches``) on the
        profiling device; initializers without data (shape-only) get random values first.
        """
        graph_inputs = {i.name for i in model.graph.input}
        wanted = sorted({i for p in probes for i in p.node.input
                         if i and i not in consts and i not in graph_inputs and i in types
                         and _needs_original(types[i])})
        if not wanted:  # the one-node models draw their own floats and masks: only integer inputs (labels)
            skip = {i: None for i in graph_inputs if i in types and not _needs_original(types[i])}
            return {k: v for k, v in runtime.random_inputs(model, self.seed, feeds=skip).items() if v is not None}
        feeds = runtime.random_inputs(model, self.seed)
        probe_model = self._with_data(_path_to(model, wanted), consts)
        have = {o.name for o in probe_model.graph.output}
        probe_model.graph.output.extend(
            helper.make_tensor_value_info(v, types[v].elem_type, types[v].shape) for v in wanted if v not in have)
        import onnxruntime
        opts = onnxruntime.RunOptions()
        opts.only_execute_path_to_fetches = True
        try:
            sess = runtime.make_session(probe_model, self.device, settings=self.settings)
            self.sessions_built += 1
            got = sess.run(wanted, {i.name: feeds[i.name] for i in sess.get_inputs()}, opts)
        except Exception as exc:
            raise RuntimeFailure(f"profiling needs integer values the original graph computes ({wanted[0]!r}, ...), "
                                 f"but the graph failed to run on {self.device}: {exc}") from exc
        return {**feeds, **dict(zip(wanted, got))}

    def _with_data(self, model: onnx.ModelProto, consts: Mapping) -> onnx.ModelProto:
        """A copy of ``model`` whose data-less initializers hold random data of their shape."""
        rng = np.random.default_rng(self.seed)
        out = onnx.ModelProto()
        out.CopyFrom(model)
        for i, init in enumerate(out.graph.initializer):
            if consts.get(init.name) is None:
                t = TensorType(tuple(int(d) for d in init.dims), int(init.data_type))
                dtype = np.dtype(helper.tensor_dtype_to_np_dtype(t.elem_type))
                v = (rng.standard_normal(t.shape) * 0.1).astype(dtype) if dtype.kind == "f" else _random_like(t, rng)
                out.graph.initializer[i].CopyFrom(numpy_helper.from_array(v, init.name))
        return out

    def _one_node_model(self, model: onnx.ModelProto, p: _Probe, types: dict[str, TensorType], consts: Mapping,
                        values: dict[str, np.ndarray], rng: np.random.Generator
                        ) -> tuple[onnx.ModelProto, dict[str, np.ndarray]]:
        node = p.node
        if any(a.type in (onnx.AttributeProto.GRAPH, onnx.AttributeProto.GRAPHS) for a in node.attribute):
            raise UnsupportedOpError(node.op_type, p.name, "cost profile (subgraph attribute)")
        inits, inputs, feeds = [], [], {}
        for name in dict.fromkeys(i for i in node.input if i):
            t = types.get(name)
            if t is None:
                raise ModelError(f"input {name!r} of node {p.name!r} has no static shape")
            if name in consts:
                v = consts[name]
                if v is None or (v.size > SMALL_CONSTANT and v.dtype.kind == "f"):
                    v = self.pool.like(t)
                inits.append(numpy_helper.from_array(np.asarray(v), name))
                continue
            dtype = np.dtype(helper.tensor_dtype_to_np_dtype(t.elem_type))
            v = values.get(name) if _needs_original(t) else None  # floats, masks: random data
            if v is None:
                if _needs_original(t):
                    raise ModelError(f"no value for integer input {name!r} of node {p.name!r}")
                v = self.pool.like(t)
            feeds[name] = np.asarray(v, dtype=dtype)
            inputs.append(helper.make_tensor_value_info(name, t.elem_type, t.shape))
        outputs = [helper.make_tensor_value_info(o, types[o].elem_type, None) for o in node.output if o]
        graph = helper.make_graph([node], f"profile_{node.op_type}", inputs, outputs, inits)
        one = helper.make_model(graph, opset_imports=list(model.opset_import), ir_version=model.ir_version)
        one.functions.extend(model.functions)
        return one, feeds

    def _time(self, model: onnx.ModelProto, p: _Probe, types: dict[str, TensorType], consts: Mapping,
              values: dict[str, np.ndarray]) -> tuple[float, int]:
        rng = np.random.default_rng(self.seed)
        one, feeds = self._one_node_model(model, p, types, consts, values, rng)
        try:
            sess = runtime.make_session(one, self.device, settings=self.settings)
            self.sessions_built += 1
            run = runtime.Runner(sess, feeds, self.device)
            for _ in range(self.warmup):
                t0 = time.perf_counter()
                run()
                if time.perf_counter() - t0 > self.time_cap:
                    break  # one run is past its first-run costs; a longer warm-up only repeats the timed run
            times: list[float] = []
            stop = time.perf_counter() + self.time_cap
            for _ in range(max(self.repeats, 1)):
                t0 = time.perf_counter()
                run()
                times.append(time.perf_counter() - t0)
                if time.perf_counter() > stop:
                    break
        except RuntimeFailure as exc:
            raise RuntimeFailure(f"profiling node {p.name!r} ({p.node.op_type}) on {self.device}: {exc}") from exc
        return float(np.median(times)), len(times)



def profile_costs(model: onnx.ModelProto, *, device: str = "cpu",
               cache_dir: str | Path | None = None, repeats: int = 10, time_cap: float = 1.0,
               base_dir: str | None = None, settings: runtime.DeviceSettings = runtime.DEFAULT_SETTINGS,
               deadline: float | None = None) -> dict[str, float]:
    """Seconds of every node measured alone on ``device``, keyed by node name (``node_keys``), every one
    > 0. See the module docstring.

    ``repeats``: timed runs per signature (median), stopped early once ``time_cap`` seconds are spent;
    ``cache_dir``: where the profile table lives (default ``~/.cache/remc/costs``); ``base_dir``: where
    external-data initializers live, for the real values of small constants; ``deadline``: a
    ``time.perf_counter()`` value after which signatures are priced by FLOPs (``ProfileCosts.apply``).
    """
    return ProfileCosts(device, cache_dir=cache_dir, repeats=repeats, time_cap=time_cap,
                        base_dir=base_dir, settings=settings, deadline=deadline).apply(model)


@dataclass(frozen=True)
class ProfileSummary:
    """What ``ProfileCosts.apply`` did: signatures in the model, found in the cache, timed now, and priced
    by FLOPs because the deadline came first (with their share of the model's FLOPs)."""

    signatures: int = 0
    cached: int = 0
    timed: int = 0
    estimated: int = 0
    estimated_flop_share: float = 0.0

    def note(self) -> str:
        """One sentence for the report (empty when every signature was measured)."""
        if not self.estimated:
            return ""
        return (f"costs: {self.signatures - self.estimated} of {self.signatures} op signatures measured "
                f"({self.cached} cached, {self.timed} timed now, smallest first); the time limit "
                f"left {self.estimated} unprofiled ({100 * self.estimated_flop_share:.1f}% of the FLOPs), "
                "priced by FLOPs x the measured seconds per FLOP of their op type (of all ops where none "
                "was timed); the profile is cached, so a later compile times more")


def _estimate(model: onnx.ModelProto, fl: dict[str, float], measured: dict[str, float],
              names: set[str]) -> dict[str, float]:
    """Seconds for the nodes ``names`` not profiled: their FLOPs times the median seconds per FLOP of the
    measured nodes of the same op type, else of all measured nodes; their FLOPs alone (every cost in
    FLOPs, a consistent scale) when nothing was measured."""
    if not measured:
        return dict(fl)
    op = {k: n.op_type for k, n in zip(node_keys(model), model.graph.node)}
    ratios: dict[str, list[float]] = {}
    for n, secs in measured.items():
        ratios.setdefault(op[n], []).append(secs / fl[n])
    overall = float(np.median([r for rs in ratios.values() for r in rs]))
    per_op = {o: float(np.median(rs)) for o, rs in ratios.items()}
    return {n: max(fl[n] * per_op.get(op[n], overall), MIN_SECONDS) for n in names}
