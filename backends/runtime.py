"""Run ONNX graphs on ONNX Runtime in the file's node order, with measured peak memory and time.

Sessions (``make_session``) run with ``ExecutionOrder.PRIORITY_BASED``, every graph optimization off
(they would merge recomputed duplicates), every node on one provider, no memory pattern and no
planner buffer reuse (below). What ONNX Runtime 1.32 (CPU) then runs, checked with its profiler:

- Kahn's order over the node list; among ready nodes, Shape and Size first, then the lowest node index
  (``ort_execution_order``). A topologically sorted file runs as listed except that Shape/Size nodes
  run as soon as their input exists (``order_for_ort`` moves them there in the file).
- Constant nodes become initializers and never run.
- Nodes without a kernel on the provider (1.32 CPU: SoftmaxCrossEntropyLoss, NegativeLogLikelihoodLoss,
  Mish, HardSwish, ...) are expanded into their function body, whose nodes get indices after all
  others: other ready nodes then overtake them and the file order is lost. ``inline_function_ops``
  expands them in the file first (``kernelless_nodes`` lists them).
- A buffer is freed after its last consumer in execution order, except outputs nobody consumes: they
  stay allocated until the run ends. Elementwise kernels still write in place into an input at its
  last use, and Reshape/Flatten/Squeeze/Unsqueeze/Identity alias their input (no allocation).
- With ``enable_mem_reuse`` on (ORT's default) the allocation planner hands a dead tensor's buffer to a
  later tensor of the same size and keeps it allocated in between, which would undo an early free of a
  rematerialized activation; remc's sessions turn it off.

Peak memory is ONNX Runtime's own accounting of its arena (``measure_peak``):

- ``method="profiler"``: each node event (``cat == "Node"``, ``name == "<node>_kernel_time"``) of the
  profile JSON carries the arena stats of the node's allocator (1.32 CPU): ``mem_bytes_in_use`` (after
  the node, before its dead inputs are released), ``mem_in_use_peak`` (high-water mark since the session
  was created, so allocations a kernel makes and frees inside its run count), ``mem_bytes_requested_in_use``
  (unrounded), ``mem_arena_held`` and ``mem_in_use_delta``, ``mem_requested_in_use_delta``,
  ``mem_arena_held_delta``. The measured peak is the largest ``mem_in_use_peak``.
- ``method="bisect"``: the least arena limit under which one run succeeds: on CPU a process-wide CPU
  arena registered with ``OrtArenaCfg`` (``register_cpu_arena``: one region of the whole limit) and the session entry
  ``session.use_env_allocators=1`` (re-registering in-process works: each probe is a new session); on
  CUDA ``gpu_mem_limit`` with ``arena_extend_strategy=kNextPowerOfTwo`` (``DeviceSettings.arena_extend``; the
  last region is cut to what the limit leaves). Exceeding the limit raises
  ``Available memory of N is smaller than requested bytes of M``. It also counts bytes the arena holds
  but cannot hand out (free space split across regions), so it is >= the profiler number.

What the measured number includes, to compare it with remc's predicted peak (constant + live): every
tensor a node allocates (outputs, graph outputs until the run returns, kernel scratch such as the Conv
im2col buffer), each allocation rounded up to 256 bytes, and the weight copies ORT pre-packs at session
creation (MatMul/Gemm with a constant B; ``baseline`` is what is in use before the first node). It
excludes graph inputs fed from caller buffers (numpy arrays on CPU, pre-bound device OrtValues on CUDA;
``RunResult.input_bytes`` gives their size), initializers on CPU (used in place, not arena allocations;
on CUDA they are copied into the arena and are part of ``baseline``), aliasing and in-place outputs
(which a live-bytes model counts twice), and memory outside the arena (thread pools, the CUDA context,
cuDNN/cuBLAS handles). ``RunResult.peak_with_constants`` restates the peak in remc's terms: arena bytes
above ``baseline`` plus inputs plus initializers.

How a session uses the device is one frozen ``DeviceSettings`` (cuDNN's algorithm search, the CUDA arena's
growth, and the placement), built once by the CLI or a tool and passed down; nothing here is a module-level
switch. Under a cap on CUDA with placement 'remc' (the default) a session has no arena at all:
``capped_session`` gives it remc's allocator (``backends/placement.py``) over one buffer of the cap, with the
tensors at the addresses of remc's static layout (``passes/placement.py``), and the measured peak is that
buffer's high-water mark (method 'placement:high_water').
"""
from __future__ import annotations

import functools
import json
import os
import re
import shutil
import statistics
import tempfile
import time
import zlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import onnx
from onnx import helper

from remc.ir.errors import ModelError, RemcError, RuntimeFailure

try:
    import onnxruntime as ort
except ImportError as _exc:
    _why = _exc.__cause__ or _exc.__context__
    if _why is not None and not isinstance(_why, Exception):
        raise _why from None  # a signal arrived while the runtime was loading: end as that signal says
    if not isinstance(_exc, ModuleNotFoundError):
        raise
    # neither build installed: remc needs one (pyproject extras cpu / gpu)
    raise RemcError("ONNX Runtime is not installed: pip install 'remc[cpu]', or 'remc[gpu]' for CUDA "
                    f"(never both; {_exc})") from None
from remc.ir.device import parse_device
from remc.ir.graph import Graph
from remc.ir.onnx_io import import_model as _import_model
from remc.ir.onnx_io import inline_function_ops as _inline_function_ops
from remc.ir.onnx_io import load_model
from remc.ir.onnx_types import TensorType, node_keys, static_types
from remc.passes.lower import order_for_ort, ort_execution_order  # noqa: F401 (part of this module's API)

ModelLike = onnx.ModelProto | str | Path

CPU_RTOL = 1e-6
"""Default relative tolerance of ``compare_outputs`` on CPU."""
CUDA_RTOL = 1e-4
"""Default relative tolerance of ``compare_outputs`` on CUDA (non-deterministic cuDNN algorithms)."""

_OOM_BFC = re.compile(r"Available memory of (\d+) is smaller than requested bytes of (\d+)")
_OOM_CUDA = re.compile(r"(?:Failed to allocate memory for requested buffer of size|"
                       r"requested bytes of|bytes=)\s*(\d+)")
_OOM_WORDS = ("out of memory", "CUDA_ERROR_OUT_OF_MEMORY", "cudaErrorMemoryAllocation", "Failed to allocate memory")
_NODE_IN_MSG = re.compile(r"running (\w+) node\. Name:'([^']*)'")
_IR_MSG = re.compile(r"Unsupported model IR version: (\d+), max supported IR version: (\d+)")


class OutOfMemory(RuntimeFailure):
    """The graph does not fit the device or the arena limit: carries needed and available bytes."""

    def __init__(self, message: str, requested: int | None = None, available: int | None = None,
                 limit: int | None = None, node: str | None = None) -> None:
        super().__init__(message)
        self.requested = requested
        self.available = available
        self.limit = limit
        self.node = node


@dataclass(frozen=True)
class RunResult:
    """Outputs, measured peak memory and time of running a graph (see the module docstring)."""

    outputs: dict[str, np.ndarray]
    measured_peak: int | None
    """Bytes, by ONNX Runtime's allocator accounting; None when memory was not measured."""
    median_seconds: float
    """Median wall time of one run (``iters`` runs after ``warmup``)."""
    method: str
    """How the peak was measured: 'profiler:mem_in_use_peak', 'bisect:cpu_arena', 'bisect:gpu_mem_limit' or 'none'."""
    times: tuple[float, ...] = ()
    """Every timed run, seconds."""
    input_bytes: int = 0
    """Bytes of the fed graph inputs, which the measured peak excludes."""
    baseline: int | None = None
    """Arena bytes in use before the first node ran (pre-packed weights); profiler method only."""
    node_in_use: dict[str, int] = field(default_factory=dict)
    """Arena bytes in use after each node, in execution order; profiler method only."""
    peak_node: str | None = None
    """The node during which the peak was reached; profiler method only."""
    initializer_bytes: int = 0
    """Bytes of the model's initializers (in the arena on CUDA, not on CPU: see the module docstring)."""
    held_peak: int | None = None
    """Largest arena bytes held (regions plus reserved: what a limit caps); profiler method only."""
    outside_bytes: int = 0
    """Bytes the graph holds outside the session's arena (``outside_bytes``)."""
    placement: dict | None = None
    """With remc's allocator (``capped_session``): its buffer, high-water mark, and how many requests
    followed the layout ('planned') or were placed by best fit ('fallback')."""

    @property
    def peak_with_constants(self) -> int | None:
        """The measured peak in remc's terms: arena bytes above ``baseline`` (activations, outputs,
        scratch) plus the fed inputs and the initializers, i.e. comparable to constant + live."""
        if self.measured_peak is None:
            return None
        return self.measured_peak - (self.baseline or 0) + self.input_bytes + self.initializer_bytes


# ---------------------------------------------------------------------------------------------------
# Devices and providers
# ---------------------------------------------------------------------------------------------------

@functools.lru_cache(maxsize=1)
def _preload_cuda_libraries() -> None:
    # onnxruntime-gpu finds CUDA/cuDNN from pip nvidia-* packages (e.g. PyTorch's) only after this.
    preload = getattr(ort, "preload_dlls", None)
    if preload is not None and "CUDAExecutionProvider" in ort.get_available_providers():
        try:
            preload()
        except Exception:  # libraries may be on the system path instead; session creation will tell
            pass


def cuda_available() -> bool:
    """True when this onnxruntime build has the CUDA execution provider."""
    return "CUDAExecutionProvider" in ort.get_available_providers()


def require_cuda() -> None:
    """Raise RuntimeFailure unless the CUDA execution provider is available; preload its libraries."""
    if not cuda_available():
        raise RuntimeFailure("CUDAExecutionProvider is not available: install onnxruntime-gpu (pip install 'remc[gpu]')")
    _preload_cuda_libraries()


PLACEMENTS = ("remc", "arena")


@dataclass(frozen=True)
class DeviceSettings:
    """How remc's sessions use a device, built once by the CLI or a tool and carried to every session,
    measurement and prediction (no module-level switches).

    - ``cudnn_conv_algo_search``: cuDNN's convolution algorithm search (with ``cudnn_conv_use_max_workspace=0``).
      HEURISTIC picks by cuDNN's heuristics without trial runs, so a signature's workspace is the same in
      every session (kernel memory measured once per signature holds); ``tools/gpu_arena_evidence.py
      --cudnn`` compares it with DEFAULT and EXHAUSTIVE. Part of the profile caches' key.
    - ``placement`` (CUDA): ``"remc"``: under a cap, tensors live at the addresses of remc's static layout
      in one buffer of the cap (``backends.placement``; the need is the layout's height, no arena);
      ``"arena"``: ONNX Runtime's BFC arena with ``gpu_mem_limit`` = the cap (its need is the replayed arena).
      On CPU ``"remc"`` drives ONNX Runtime's C library (``backends.capi``: remc's allocator registered as
      the environment's) where it loads, else the BFC arena.
    - ``arena_extend`` (CUDA arena): how it grows. Its regions never coalesce, so growing by exactly each
      request (``kSameAsRequested``) leaves a plan with recomputation unable to place a large tensor in the
      free space of many small regions (results/gpu_h100_e_arena_probe.json); power-of-two regions by default.
    - ``one_region`` (CUDA arena): under a cap, one region of the whole cap (``register_cuda_arena``), so frees
      coalesce; an experiment (``tools/gpu_arena_evidence.py --one-region``); ``arena_config`` replays it.
    """

    cudnn_conv_algo_search: str = "HEURISTIC"
    placement: str = "remc"
    arena_extend: str = "kNextPowerOfTwo"
    one_region: bool = False
    prepack: bool = True
    """False: ``session.disable_prepacking=1`` in every session (CPU: MLAS keeps no packed copy of a
    MatMul/Gemm weight or ConvTranspose filter; each run packs into scratch instead). Kernel memory is
    measured per setting (part of the cache key), so the prediction follows it."""

    def __post_init__(self) -> None:
        if self.placement not in PLACEMENTS:
            raise ValueError(f"placement must be one of {PLACEMENTS}, not {self.placement!r}")

    def placed(self, device: str) -> bool:
        """Whether capped sessions on ``device`` use remc's allocator: placement 'remc' on CUDA, and on CPU
        where ONNX Runtime's C library can be driven (``backends.capi``)."""
        if self.placement != "remc":
            return False
        if parse_device(device)[0] == "cuda":
            return True
        from .capi import available
        return available()

    def placed_loop(self, device: str) -> bool:
        """Whether ``remc train``'s loop (``backends.trainer``) runs on remc's allocator: wherever capped sessions
        do (``placed``). On CPU the C-API session reads the state and data from, and writes every output
        into, the trainer's numpy buffers (``capi.Binding.bind_output_buffer``), as IOBinding does on CUDA."""
        return self.placed(device)


DEFAULT_SETTINGS = DeviceSettings()


def _cuda_options(device_id: int, mem_limit: int | None, cuda_graph: bool, settings: DeviceSettings,
                  arena_extend: str | None = None) -> dict[str, str]:
    opts = {
        "device_id": str(device_id),
        "cudnn_conv_algo_search": settings.cudnn_conv_algo_search,
        "cudnn_conv_use_max_workspace": "0",
        "arena_extend_strategy": arena_extend or settings.arena_extend,
    }
    if mem_limit is not None:
        opts["gpu_mem_limit"] = str(int(mem_limit))
    if cuda_graph:
        opts["enable_cuda_graph"] = "1"
    return opts


def register_cuda_arena(limit: int, device_id: int = 0) -> None:
    """Register a process-wide CUDA arena for sessions made with ``session.use_env_allocators``: at most
    ``limit`` bytes, its first region ``min(limit, ONE_REGION_MAX)`` bytes, growing by powers of two."""
    from remc.passes.arena import ONE_REGION_MAX
    info = ort.OrtMemoryInfo("Cuda", ort.OrtAllocatorType.ORT_ARENA_ALLOCATOR, device_id, ort.OrtMemType.DEFAULT)
    first = min(int(limit), ONE_REGION_MAX) // 256 * 256
    cfg = ort.OrtArenaCfg({"max_mem": int(limit), "arena_extend_strategy": 0, "initial_chunk_size_bytes": first})
    ort.create_and_register_allocator_v2("CUDAExecutionProvider", info, {"device_id": str(device_id)}, cfg)


def register_cpu_arena(limit: int, *, one_region: bool = True) -> None:
    """Register the process-wide CPU arena used by sessions made with ``mem_limit`` on CPU, at most ``limit``
    bytes (the arena rounds it down to 256 bytes). Registering again replaces it for sessions created
    afterwards; existing sessions keep theirs.

    ``one_region``: ``kNextPowerOfTwo`` with ``initial_chunk_size_bytes`` = the limit (up to ``ONE_REGION_MAX``), so the first
    request takes one region of the whole limit and the arena never extends. Whether a run fits is then
    decided by the arena alone: with regions of the requested size (``kSameAsRequested``, ``one_region``
    False) a tie between equal free chunks goes to the lower of malloc's addresses, which vary from one
    session to the next (measured: ResNet50 and MobileNetV2 at test size needed different caps in sessions
    of one process, with 1 or 2 threads; one region: the same cap in every session).
    """
    from remc.passes.arena import ONE_REGION_MAX
    info = ort.OrtMemoryInfo("Cpu", ort.OrtAllocatorType.ORT_ARENA_ALLOCATOR, 0, ort.OrtMemType.DEFAULT)
    opts = {"max_mem": int(limit), "arena_extend_strategy": 1}
    if one_region:
        opts = {"max_mem": int(limit), "arena_extend_strategy": 0,
                "initial_chunk_size_bytes": min(int(limit), ONE_REGION_MAX) // 256 * 256}
    ort.create_and_register_allocator(info, ort.OrtArenaCfg(opts))


# ---------------------------------------------------------------------------------------------------
# Sessions
# ---------------------------------------------------------------------------------------------------

def make_session(model: ModelLike, device: str = "cpu", *, mem_limit: int | None = None, profile: bool = False,
                 cuda_graph: bool = False, profile_prefix: str | None = None, mem_pattern: bool = False,
                 mem_reuse: bool = False, prepack: bool = True, threads: int | None = None,
                 log_level: int = 4, arena_extend: str | None = None,
                 settings: DeviceSettings = DEFAULT_SETTINGS, allocator=None) -> ort.InferenceSession:
    """An InferenceSession that runs the graph's nodes in file order on one device.

    SessionOptions: ``execution_order=PRIORITY_BASED``, ``ORT_DISABLE_ALL``, ``enable_mem_pattern=
    mem_pattern`` and ``enable_mem_reuse=mem_reuse`` (both off: see the module docstring); on CUDA
    ``session.disable_cpu_ep_fallback=1`` and provider options
    ``cudnn_conv_algo_search`` (``settings``), ``cudnn_conv_use_max_workspace=0``,
    ``arena_extend_strategy`` (``settings``), ``gpu_mem_limit=mem_limit``, ``enable_cuda_graph``
    (then run it with ``Runner``, which binds inputs/outputs at fixed device addresses); with ``allocator``
    (a ``backends.placement.PlacedAllocator``) the session allocates through it instead of an arena
    (``gpu_external_alloc``/``gpu_external_free``; ``mem_limit`` is then its buffer: see ``capped_session``). On CPU a
    ``mem_limit`` registers a limited CPU arena (``register_cpu_arena``) and sets
    ``session.use_env_allocators=1``. ``prepack=False`` sets ``session.disable_prepacking=1`` (no packed
    weight copies in the arena, slower MatMul/Gemm). ``profile`` writes ORT's profile JSON under ``profile_prefix``
    (``session.end_profiling()`` returns its path). A model whose IR version the runtime rejects is
    retried with the highest IR version it names. Failures raise RuntimeFailure (OutOfMemory for a
    limit the initializers do not fit).
    """
    kind, device_id = parse_device(device)
    so = ort.SessionOptions()
    so.execution_order = ort.ExecutionOrder.PRIORITY_BASED
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    so.enable_mem_pattern = mem_pattern
    so.enable_mem_reuse = mem_reuse
    so.log_severity_level = log_level
    if not prepack or not settings.prepack:
        so.add_session_config_entry("session.disable_prepacking", "1")
    if threads is not None:
        so.intra_op_num_threads = threads
    if profile:
        so.enable_profiling = True
        so.profile_file_prefix = profile_prefix or os.path.join(tempfile.mkdtemp(prefix="remc-prof-"), "ort")
    if kind == "cuda":
        require_cuda()
        so.add_session_config_entry("session.disable_cpu_ep_fallback", "1")
        opts = _cuda_options(device_id, None if allocator is not None else mem_limit, cuda_graph, settings,
                             arena_extend)
        if allocator is not None:
            opts.update(allocator.provider_options())
        providers: list = [("CUDAExecutionProvider", opts)]
        if settings.one_region and allocator is None and mem_limit is not None and arena_extend is None:
            register_cuda_arena(mem_limit, device_id)
            so.add_session_config_entry("session.use_env_allocators", "1")
    else:
        if cuda_graph:
            raise ValueError("cuda_graph needs device 'cuda'")
        providers = ["CPUExecutionProvider"]
        if mem_limit is not None:
            register_cpu_arena(mem_limit, one_region=arena_extend != "kSameAsRequested")
            so.add_session_config_entry("session.use_env_allocators", "1")
    return _create_session(model, so, providers, device, mem_limit, allocator)


def capped_session(model: ModelLike, device: str, cap: int | None, settings: DeviceSettings = DEFAULT_SETTINGS, *,
                   layout=None, cuda_graph: bool = False, threads: int | None = None,
                   log_level: int = 4, native: bool | None = None) -> tuple[ort.InferenceSession, object | None]:
    """A session of ``model`` whose tensors on ``device`` may take at most ``cap`` bytes, and the allocator
    enforcing it (None where ONNX Runtime's arena does: CPU, placement 'arena', or no cap).

    With remc's placement (``settings.placed(device)``) the session allocates from one device buffer of
    exactly ``cap`` bytes, at the offsets of ``layout`` (``passes.placement.Layout``; computed from the
    model when None: ``backends.placement.model_layout``). The buffer is released once the session and its
    last tensor are gone. ``native`` (CPU): ``capi.placed_session``'s (False: no native hot path)."""
    if cap is None or not settings.placed(device):
        return make_session(model, device, mem_limit=cap, cuda_graph=cuda_graph, threads=threads,
                            log_level=log_level, settings=settings), None
    import weakref

    from . import placement
    if parse_device(device)[0] == "cpu":
        from . import capi
        if cuda_graph:
            raise ValueError("cuda_graph needs device 'cuda'")
        proto = load_model(model, with_data=True)
        if layout is None:
            layout = placement.model_layout(proto, device, settings)
        return capi.placed_session(proto, int(cap), layout, threads=threads, log_level=log_level,
                                   prepack=settings.prepack, native=native)
    require_cuda()
    _binding_cuda_allocator(parse_device(device)[1])
    if layout is None:
        layout = placement.model_layout(load_model(model, with_data=True), device, settings)
    try:
        alloc = placement.on_device(int(cap), layout, parse_device(device)[1])
    except MemoryError as exc:
        raise OutOfMemory(f"out of memory on {device}: the device cannot give remc's buffer of {cap} bytes ({exc})",
                          int(cap), None, cap) from exc
    try:
        sess = make_session(model, device, mem_limit=cap, cuda_graph=cuda_graph, threads=threads,
                            log_level=log_level, settings=settings, allocator=alloc)
    except BaseException:
        alloc.close()
        raise
    weakref.finalize(sess, alloc.close)
    return sess, alloc


@functools.cache
def _binding_cuda_allocator(device_id: int) -> None:
    """Make the Python binding's CUDA allocator (the one ``OrtValue.ortvalue_from_numpy(x, 'cuda')`` uses) now.
    The binding makes it once per process, from the CUDA provider options of the last session created: made
    after a session on remc's allocator it is remc's, and the caller's inputs landed in remc's buffer (seen on
    the H200: a cold process's first ``remc run`` had the 19267584 bytes of ResNet50 b32's input there, and
    1084 of 6282 requests fell off the layout). Made first, it is ONNX Runtime's default allocator."""
    ort.OrtValue.ortvalue_from_shape_and_type([1], np.float32, "cuda", device_id)


def _create_session(model: ModelLike, so: ort.SessionOptions, providers: list, device: str,
                    mem_limit: int | None, allocator=None) -> ort.InferenceSession:
    src: str | bytes = model.SerializeToString() if isinstance(model, onnx.ModelProto) else str(model)
    failed = len(allocator.stats.failures) if allocator is not None else 0
    try:
        return ort.InferenceSession(src, so, providers=providers)
    except Exception as exc:
        m = _IR_MSG.search(str(exc))
        if m is None:
            raise _failure(exc, device, mem_limit, "loading the model", allocator, failed) from exc
        lowered = onnx.ModelProto()
        lowered.CopyFrom(load_model(model, with_data=True))
        lowered.ir_version = int(m.group(2))
        try:
            return ort.InferenceSession(lowered.SerializeToString(), so, providers=providers)
        except Exception as exc2:
            raise _failure(exc2, device, mem_limit, "loading the model", allocator, failed) from exc2


def _failure(exc: BaseException, device: str, mem_limit: int | None, doing: str, allocator=None,
             failed_before: int = 0) -> RuntimeFailure:
    """Turn an onnxruntime exception into RuntimeFailure (OutOfMemory with bytes when it is one; with remc's
    ``allocator``, when it refused a request since it had ``failed_before`` failures)."""
    msg = str(exc).strip()
    node_m = _NODE_IN_MSG.search(msg)
    node = f" at node {node_m.group(2) or node_m.group(1)!r} ({node_m.group(1)})" if node_m else ""
    limit = f" under a limit of {mem_limit} bytes" if mem_limit is not None else ""
    if allocator is not None and len(allocator.stats.failures) > failed_before:
        req, gap = allocator.stats.failures[-1]
        where = node or (" at session creation" if "loading" in doing else "")
        st = allocator.stats
        return OutOfMemory(f"out of memory on {device}{where}: needed {req} bytes, the largest free range of "
                           f"remc's buffer ({allocator.capacity} bytes) is {gap} ({st.fallback} of {st.calls} "
                           f"requests so far off remc's layout)", req, gap, mem_limit,
                           node_m and (node_m.group(2) or node_m.group(1)))
    bfc = _OOM_BFC.search(msg)
    if bfc:
        avail, req = int(bfc.group(1)), int(bfc.group(2))
        return OutOfMemory(f"out of memory on {device}{node}: needed {req} bytes, {avail} available{limit}",
                           req, avail, mem_limit, node_m and (node_m.group(2) or node_m.group(1)))
    if any(w in msg for w in _OOM_WORDS):
        m = _OOM_CUDA.search(msg)
        req = int(m.group(1)) if m else None
        need = f"needed {req} bytes" if req is not None else "allocation failed"
        return OutOfMemory(f"out of memory on {device}{node}: {need}{limit}: {msg.splitlines()[0][:300]}",
                           req, None, mem_limit, node_m and (node_m.group(2) or node_m.group(1)))
    first = msg.splitlines()[0] if msg else ""
    if len(first) > 500:  # CUDA errors: a long C++ signature first, the error's name at the end
        first = first[:200] + " ... " + first[-300:]
    return RuntimeFailure(f"ONNX Runtime failed {doing} on {device}{node}: {first}")


# ---------------------------------------------------------------------------------------------------
# Execution order: what ONNX Runtime runs, and in which order
# ---------------------------------------------------------------------------------------------------

_PROVIDER = {"cpu": "CPUExecutionProvider", "cuda": "CUDAExecutionProvider"}


KNOWN_KERNELLESS = frozenset({"SoftmaxCrossEntropyLoss", "NegativeLogLikelihoodLoss", "Mish", "HardSwish"})
"""Function ops with no kernel in stock onnxruntime 1.31-1.32 (read off 1.32 CPU's kernel registry); used
where the registry cannot be read safely."""


@functools.lru_cache(maxsize=1)
def _kernel_table() -> dict[tuple[str, str, str], list[tuple[int, int]]] | None:
    """The kernel registry, or None on builds with the TensorRT provider, whose registry listing loads
    libnvinfer and crashes the process where TensorRT is not installed (seen with onnxruntime-gpu 1.31)."""
    if "TensorrtExecutionProvider" in ort.get_available_providers():
        return None
    from onnxruntime.capi import _pybind_state as C
    table: dict[tuple[str, str, str], list[tuple[int, int]]] = {}
    for k in C.get_all_opkernel_def():
        domain = "" if k.domain == "ai.onnx" else k.domain
        table.setdefault((k.provider, domain, k.op_name), []).append(tuple(k.version_range))
    return table


def _since_version(node: onnx.NodeProto, opset: int) -> int:
    try:
        return onnx.defs.get_schema(node.op_type, opset, node.domain).since_version
    except onnx.defs.SchemaError:
        return opset


def kernelless_nodes(model: onnx.ModelProto, device: str = "cpu") -> list[str]:
    """Nodes (``node_keys`` names) this onnxruntime build has no kernel for on ``device``.

    ONNX Runtime expands such nodes into their ONNX function body when it loads the graph (on 1.32 CPU:
    SoftmaxCrossEntropyLoss, NegativeLogLikelihoodLoss, Mish, HardSwish, ...). The expanded nodes get
    node indices after every node of the file, so PRIORITY_BASED runs them late and other ready nodes
    overtake them: the file order no longer holds (``inline_function_ops`` fixes that). Kernel type
    constraints are not checked (an op may have a float kernel only); Constant nodes never count.
    """
    provider = _PROVIDER[parse_device(device)[0]]
    table = _kernel_table()
    if table is None:
        return [key for key, node in zip(node_keys(model), model.graph.node)
                if node.op_type in KNOWN_KERNELLESS and node.domain in ("", "ai.onnx")]
    opsets = {("" if o.domain == "ai.onnx" else o.domain): o.version for o in model.opset_import}
    out = []
    for key, node in zip(node_keys(model), model.graph.node):
        domain = "" if node.domain == "ai.onnx" else node.domain
        if node.op_type == "Constant" and domain == "":
            continue
        since = _since_version(node, opsets.get(domain, 1))
        ranges = table.get((provider, domain, node.op_type), [])
        if not any(lo <= since <= hi for lo, hi in ranges):
            out.append(key)
    return out


def inline_function_ops(model: onnx.ModelProto, device: str = "cpu") -> onnx.ModelProto:
    """Expand the nodes this onnxruntime build has no kernel for on ``device`` into their ONNX function
    bodies, in place in the node list (``remc.ir.onnx_io.inline_function_ops``)."""
    return _inline_function_ops(model, functools.partial(kernelless_nodes, device=device), f"onnxruntime on {device}")


def import_model(source: str | os.PathLike | bytes | onnx.ModelProto, *, batch: int | None = None,
                 device: str = "cpu") -> Graph:
    """``remc.ir.onnx_io.import_model`` with the kernel-less ops of this onnxruntime build expanded, so
    the imported graph is what ONNX Runtime runs, node for node."""
    return _import_model(source, batch=batch, kernelless=functools.partial(kernelless_nodes, device=device))


# ---------------------------------------------------------------------------------------------------
# Running: inputs, IOBinding, outputs
# ---------------------------------------------------------------------------------------------------

class Runner:
    """Runs a session repeatedly with IOBinding: inputs bound once, outputs on the device.

    CPU: inputs bound from the numpy feeds (no copy), outputs allocated by ORT. CUDA: inputs copied to
    device once (``OrtValue.ortvalue_from_numpy(x, 'cuda', id)``); outputs either allocated by ORT on
    the device or, with ``cuda_graph``, preallocated at fixed addresses from their static shapes, as
    CUDA graph replay requires. ``__call__`` runs once and waits for the device.
    """

    def __init__(self, session: ort.InferenceSession, feeds: Mapping[str, np.ndarray], device: str = "cpu",
                 *, cuda_graph: bool = False, output_types: Mapping[str, TensorType] | None = None,
                 mem_limit: int | None = None, allocator=None) -> None:
        kind, device_id = parse_device(device)
        self.session, self.device, self.mem_limit = session, device, mem_limit
        self.allocator = allocator
        """remc's ``PlacedAllocator`` the session allocates through (``capped_session``), or None."""
        self.output_names = [o.name for o in session.get_outputs()]
        self.binding = session.io_binding()
        self._keep: list = []  # OrtValues that must outlive the binding
        for inp in session.get_inputs():
            if inp.name not in feeds:
                raise RuntimeFailure(f"no feed for graph input {inp.name!r}")
            arr = np.ascontiguousarray(feeds[inp.name])
            if kind == "cpu":
                self._keep.append(arr)
                self.binding.bind_cpu_input(inp.name, arr)
            else:
                ov = ort.OrtValue.ortvalue_from_numpy(arr, "cuda", device_id)
                self._keep.append(ov)
                self.binding.bind_ortvalue_input(inp.name, ov)
        self._fixed_outputs = cuda_graph
        self._kind, self._device_id = kind, device_id
        for name in self.output_names:
            if cuda_graph:
                t = (output_types or {}).get(name)
                if t is None:
                    raise RuntimeFailure(f"cuda_graph needs a static shape for graph output {name!r}")
                ov = ort.OrtValue.ortvalue_from_shape_and_type(
                    list(t.shape), helper.tensor_dtype_to_np_dtype(t.elem_type), "cuda", device_id)
                self._keep.append(ov)
                self.binding.bind_ortvalue_output(name, ov)
        self._bind_fresh_outputs()

    def _bind_fresh_outputs(self) -> None:
        # Drop the last run's outputs first: held by the binding, they would occupy the arena during
        # the next run (a run under a limit would then need one more set of outputs).
        if self._fixed_outputs:
            return
        self.binding.clear_binding_outputs()
        for name in self.output_names:
            self.binding.bind_output(name, self._kind, self._device_id)

    def __call__(self, run_options: ort.RunOptions | None = None) -> None:
        """Run once (with ``run_options`` if given) and wait for the device; raises RuntimeFailure."""
        self._bind_fresh_outputs()
        failed = 0
        if self.allocator is not None:  # the last run's outputs are freed: a new run of the layout begins
            self.allocator.begin_run()
            failed = len(self.allocator.stats.failures)
        try:
            self.session.run_with_iobinding(self.binding, run_options)
        except Exception as exc:
            raise _failure(exc, self.device, self.mem_limit, "running the model", self.allocator, failed) from exc
        self.binding.synchronize_outputs()

    def outputs(self) -> dict[str, np.ndarray]:
        """The last run's outputs, copied to host numpy arrays."""
        return dict(zip(self.output_names, self.binding.copy_outputs_to_cpu()))


def _consumers(model: onnx.ModelProto) -> dict[str, list[tuple[onnx.NodeProto, int]]]:
    uses: dict[str, list[tuple[onnx.NodeProto, int]]] = {}
    for node in model.graph.node:
        for i, name in enumerate(node.input):
            if name:
                uses.setdefault(name, []).append((node, i))
    return uses


_PASS_THROUGH = frozenset("Cast Reshape Identity Squeeze Unsqueeze Flatten".split())


def _index_bound(name: str, uses: dict, types: dict[str, TensorType]) -> int | None:
    """Least exclusive upper bound that consumers impose on an integer value (labels, indices)."""
    bounds: list[int] = []
    for node, i in uses.get(name, []):
        op = node.op_type
        if op in ("SoftmaxCrossEntropyLoss", "NegativeLogLikelihoodLoss") and i == 1 and node.input[0] in types:
            bounds.append(types[node.input[0]].shape[1])
        elif op in ("Gather", "GatherElements") and i == 1 and node.input[0] in types:
            axis = next((a.i for a in node.attribute if a.name == "axis"), 0)
            bounds.append(types[node.input[0]].shape[axis])
        elif op in _PASS_THROUGH and i == 0:
            b = _index_bound(node.output[0], uses, types)
            if b is not None:
                bounds.append(b)
    return min(bounds) if bounds else None


def random_inputs(model: onnx.ModelProto, seed: int = 0, *, feeds: Mapping[str, np.ndarray] | None = None,
                  num_classes: int | None = None) -> dict[str, np.ndarray]:
    """Random feeds for every graph input that is not an initializer and not in ``feeds``.

    Each input draws from its own generator seeded by (seed, name). Floats: standard normal. Bools:
    fair coins. Integers (labels, indices): uniform in
    [0, bound) where bound is read from the consumers (SoftmaxCrossEntropyLoss and
    NegativeLogLikelihoodLoss: the class dimension of the scores; Gather/GatherElements: the indexed
    dimension; through Cast/Reshape/Identity/(Un)Squeeze/Flatten), else ``num_classes``; with neither
    a ModelError asks for explicit feeds. Every input needs a static shape.
    """
    feeds = dict(feeds or {})
    types = static_types(model)
    inits = {i.name for i in model.graph.initializer}
    uses = _consumers(model)
    for vi in model.graph.input:
        if vi.name in inits or vi.name in feeds:
            continue
        t = types.get(vi.name)
        if t is None:
            raise ModelError(f"graph input {vi.name!r} has no static shape; bind its dimensions or pass feeds")
        dtype = np.dtype(helper.tensor_dtype_to_np_dtype(t.elem_type))
        rng = np.random.default_rng([seed, zlib.crc32(vi.name.encode())])  # per input: same data whatever else is fed
        if dtype.kind == "f":
            feeds[vi.name] = rng.standard_normal(t.shape).astype(dtype)
        elif dtype.kind == "b":
            feeds[vi.name] = rng.random(t.shape) < 0.5
        elif dtype.kind in "iu":
            bound = _index_bound(vi.name, uses, types) or num_classes
            if bound is None:
                raise ModelError(f"cannot tell the value range of integer input {vi.name!r}; "
                                 "pass num_classes or explicit feeds")
            feeds[vi.name] = rng.integers(0, bound, size=t.shape).astype(dtype)
        else:
            raise ModelError(f"graph input {vi.name!r} has unsupported dtype {dtype}; pass explicit feeds")
    return feeds


def _input_bytes(feeds: Mapping[str, np.ndarray]) -> int:
    return int(sum(np.asarray(v).nbytes for v in feeds.values()))


# ---------------------------------------------------------------------------------------------------
# Profiles: execution order and memory
# ---------------------------------------------------------------------------------------------------

def _profile_events(model: ModelLike, device: str, feeds: Mapping[str, np.ndarray], *,
                    mem_limit: int | None = None, threads: int | None = None,
                    arena_extend: str | None = None, settings: DeviceSettings = DEFAULT_SETTINGS) -> list[dict]:
    """Node kernel events ('<node>_kernel_time') of one profiled run, in execution (timestamp) order; always
    on ONNX Runtime's arena (its stats are what the profiler writes)."""
    tmp = tempfile.mkdtemp(prefix="remc-prof-")
    try:
        sess = make_session(model, device, mem_limit=mem_limit, profile=True, settings=settings,
                            profile_prefix=os.path.join(tmp, "ort"), threads=threads, arena_extend=arena_extend)
        Runner(sess, feeds, device, mem_limit=mem_limit)()
        path = sess.end_profiling()
        with open(path) as f:
            events = json.load(f)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    nodes = [e for e in events if e.get("cat") == "Node" and str(e.get("name", "")).endswith("_kernel_time")]
    return sorted(nodes, key=lambda e: e["ts"])


def _event_node(e: dict) -> str:
    return e["name"][: -len("_kernel_time")]


def executed_order(model: ModelLike, device: str = "cpu", *, feeds: Mapping[str, np.ndarray] | None = None,
                   seed: int = 0) -> list[str]:
    """Node names in the order ONNX Runtime ran them (from its profiler), for one run.

    Unnamed nodes appear as ``<op_type>_<index>``, as ``remc.passes.costs.node_keys`` names them.
    """
    proto = load_model(model, with_data=True)
    feeds = random_inputs(proto, seed, feeds=feeds)
    return [_event_node(e) for e in _profile_events(model, device, feeds)]


@dataclass(frozen=True)
class PeakMeasurement:
    """A measured peak and how it was measured."""

    peak: int
    method: str
    baseline: int | None = None
    """Arena bytes in use before the first node (pre-packed weights); profiler only."""
    node_in_use: dict[str, int] = field(default_factory=dict)
    """Arena bytes in use after each node, in execution order; profiler only."""
    peak_node: str | None = None
    """The node during which the peak was reached; profiler only."""
    held: int | None = None
    """Largest ``mem_arena_held`` (regions plus reserved bytes: what the limit caps); profiler only."""


class NoProfilerStats(RuntimeFailure):
    """The profile has no usable arena stats for the device (method 'auto' then bisects)."""


def profiler_peak(model: ModelLike, device: str = "cpu", *, feeds: Mapping[str, np.ndarray],
                  mem_limit: int | None = None, threads: int | None = None,
                  settings: DeviceSettings = DEFAULT_SETTINGS) -> PeakMeasurement:
    """Peak from the profiler's ``mem_in_use_peak`` over one run (see the module docstring).

    NoProfilerStats when the node events carry no arena stats, or when the stats cannot be those of
    the arena holding the outputs (the peak is below some non-aliasing node's output bytes).
    """
    from remc.passes.costs import ALIASING
    events = _profile_events(model, device, feeds, mem_limit=mem_limit, threads=threads, settings=settings)
    stats = [e for e in events if "mem_in_use_peak" in e.get("args", {})]
    if not stats:
        raise NoProfilerStats(f"onnxruntime {ort.__version__} on {device} writes no mem_in_use_peak in its "
                              "profile; measure with method='bisect'")
    peaks = [int(e["args"]["mem_in_use_peak"]) for e in stats]
    top = max(peaks)
    biggest = max((int(e["args"].get("output_size", 0)) for e in stats
                   if e["args"].get("op_name") not in ALIASING), default=0)
    if top < biggest:
        raise NoProfilerStats(f"the profile's arena stats on {device} (peak {top} bytes) do not cover a node "
                              f"output of {biggest} bytes: they are not the device arena's; use method='bisect'")
    first = stats[0]["args"]
    baseline = int(first["mem_bytes_in_use"]) - int(first.get("mem_in_use_delta", 0))
    held = max((int(e["args"]["mem_arena_held"]) for e in stats if "mem_arena_held" in e["args"]), default=None)
    return PeakMeasurement(top, "profiler:mem_in_use_peak", baseline,
                           {_event_node(e): int(e["args"]["mem_bytes_in_use"]) for e in stats},
                           _event_node(stats[peaks.index(top)]), held)


def _fits(model: ModelLike, device: str, feeds: Mapping[str, np.ndarray], limit: int,
          threads: int | None = None, runs: int = 1, settings: DeviceSettings = DEFAULT_SETTINGS) -> bool:
    try:
        sess = make_session(model, device, mem_limit=limit, log_level=4, threads=threads, settings=settings)
        runner = Runner(sess, feeds, device, mem_limit=limit)
        for _ in range(runs):
            runner()
        return True
    except OutOfMemory:
        return False


def bisect_peak(model: ModelLike, device: str = "cpu", *, feeds: Mapping[str, np.ndarray],
                resolution: int = 256, start: int = 1 << 20, max_bytes: int = 1 << 40,
                threads: int | None = None, runs: int = 1,
                settings: DeviceSettings = DEFAULT_SETTINGS) -> PeakMeasurement:
    """The least arena limit under which one run succeeds, within ``resolution`` bytes (ONNX Runtime's arena).

    Doubles the limit from ``start`` until a run fits, then bisects. Each probe is a fresh session
    (a CPU probe re-registers the process-wide CPU arena). Failures other than out-of-memory raise.
    """
    lo, hi = 0, max(int(start), resolution)
    while not _fits(model, device, feeds, hi, threads, runs, settings):
        lo, hi = hi, hi * 2
        if hi > max_bytes:
            raise OutOfMemory(f"no arena limit up to {max_bytes} bytes runs the model on {device}", limit=max_bytes)
    while hi - lo > resolution:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if _fits(model, device, feeds, mid, threads, runs, settings) else (mid, hi)
    kind = "cpu_arena" if parse_device(device)[0] == "cpu" else "gpu_mem_limit"
    return PeakMeasurement(hi, f"bisect:{kind}", held=hi)


PEAK_METHODS = ("auto", "profiler", "bisect")


def measure_peak(model: ModelLike, device: str = "cpu", *, feeds: Mapping[str, np.ndarray] | None = None,
                 method: str = "auto", mem_limit: int | None = None, seed: int = 0,
                 threads: int | None = None, settings: DeviceSettings = DEFAULT_SETTINGS) -> PeakMeasurement:
    """Measured peak bytes of one run (module docstring): ``method`` 'profiler', 'bisect', or 'auto'
    (the profiler's stats where this build writes usable ones for the device, else bisection; the
    result's ``method`` says which). ``mem_limit`` applies to the profiled session, not to bisection."""
    proto = load_model(model, with_data=True)
    feeds = random_inputs(proto, seed, feeds=feeds)
    if method not in PEAK_METHODS:
        raise ValueError(f"unknown peak method {method!r}: expected one of {PEAK_METHODS}")
    if method in ("auto", "profiler"):
        try:
            return profiler_peak(model, device, feeds=feeds, mem_limit=mem_limit, threads=threads,
                                 settings=settings)
        except NoProfilerStats:
            if method == "profiler":
                raise
    return bisect_peak(model, device, feeds=feeds, settings=settings)


# ---------------------------------------------------------------------------------------------------
# measure: outputs, peak, time
# ---------------------------------------------------------------------------------------------------

def measure(model: ModelLike, device: str = "cpu", *, feeds: Mapping[str, np.ndarray] | None = None,
            warmup: int = 2, iters: int = 10, mem_method: str | None = "auto", mem_limit: int | None = None,
            cuda_graph: bool = False, seed: int = 0, threads: int | None = None,
            settings: DeviceSettings = DEFAULT_SETTINGS, layout=None) -> RunResult:
    """Run the graph: its outputs, measured peak (``mem_method``: see ``measure_peak``; None: skip) and
    the median of ``iters`` timed runs after ``warmup`` runs (at least 2 with ``cuda_graph``: the first
    run allocates, the second captures).

    Memory is measured in its own profiled session (profiling slows kernels); the timed session has the
    same options, ``mem_limit`` included. Feeds default to ``random_inputs(model, seed)``. Under a
    ``mem_limit`` with remc's placement (``capped_session``) the timed session allocates from remc's buffer
    and the peak is its high-water mark (method 'placement:high_water', exact: initializers included).
    """
    proto = load_model(model, with_data=True)
    feeds = random_inputs(proto, seed, feeds=feeds)
    placed = mem_limit is not None and settings.placed(device)
    peak = None if mem_method is None or placed else measure_peak(
        model, device, feeds=feeds, method=mem_method, mem_limit=mem_limit, threads=threads, settings=settings)
    sess, alloc = capped_session(model, device, mem_limit, settings, layout=layout, cuda_graph=cuda_graph,
                                 threads=threads)
    out_types = static_types(proto) if cuda_graph else None
    runner = Runner(sess, feeds, device, cuda_graph=cuda_graph, output_types=out_types, mem_limit=mem_limit,
                    allocator=alloc)
    for _ in range(max(warmup, 2 if cuda_graph else 0)):
        runner()
    timed = runner
    if alloc is not None and parse_device(device)[0] == "cpu":
        # remc's CPU allocator runs in Python callbacks (~20 us a request): time an arena session of the same
        # graph instead, as the reference is timed. The placed session makes as many runs as the reference
        # (seeded random nodes draw anew each run), which give memory and outputs.
        for _ in range(max(iters, 1)):
            runner()
        timed = Runner(make_session(model, device, threads=threads, settings=settings), feeds, device)
        for _ in range(warmup):
            timed()
    times = []
    for _ in range(max(iters, 1)):
        t0 = time.perf_counter()
        timed()
        times.append(time.perf_counter() - t0)
    if alloc is not None and mem_method is not None:
        st = alloc.stats
        peak = PeakMeasurement(st.high_water, "placement:high_water", 0, {}, None, st.high_water)
    return RunResult(
        outputs=runner.outputs(), measured_peak=peak.peak if peak else None,
        median_seconds=statistics.median(times), method=peak.method if peak else "none", times=tuple(times),
        input_bytes=_input_bytes({i.name: feeds[i.name] for i in sess.get_inputs()}),
        baseline=peak.baseline if peak else None, node_in_use=dict(peak.node_in_use) if peak else {},
        peak_node=peak.peak_node if peak else None, held_peak=peak.held if peak else None,
        outside_bytes=outside_bytes(proto, device),
        initializer_bytes=sum(t.nbytes for n, t in static_types(proto).items() if n in _initializer_names(proto)),
        placement=None if alloc is None else {
            "buffer": alloc.capacity, "high_water": alloc.stats.high_water, "peak_in_use": alloc.stats.peak_in_use,
            "planned": alloc.stats.planned, "fallback": alloc.stats.fallback, "rejected": alloc.stats.rejected,
            "in_scratch": alloc.stats.in_scratch,
            "calls": alloc.stats.calls, "runs": alloc.runs})


def outside_bytes(model: onnx.ModelProto, device: str = "cpu") -> int:
    """Bytes a graph holds outside its session's arena: the graph inputs the caller feeds (numpy arrays on
    CPU, device buffers bound by ``Runner`` on CUDA), and on CPU the initializers ONNX Runtime uses in place
    from the model (all but the small ones: ``passes.arena.initializer_in_arena``). The budget covers them
    too, so a run under budget B caps the arena at B minus these (``arena_cap``)."""
    from remc.passes.arena import initializer_in_arena
    types = static_types(model)
    inits = _initializer_names(model)
    fed = sum(types[i.name].nbytes for i in model.graph.input if i.name not in inits and i.name in types)
    kept = sum(types[n].nbytes for n in inits if n in types and not initializer_in_arena(types[n].nbytes, device))
    return fed + kept


def arena_cap(model: onnx.ModelProto, device: str, budget: int) -> int:
    """The arena limit that holds a run of ``model`` to ``budget`` bytes in all: the budget less
    ``outside_bytes``. OutOfMemory when the budget does not even hold those."""
    out = outside_bytes(model, device)
    if budget <= out:
        raise OutOfMemory(f"out of memory on {device}: a budget of {budget} bytes does not hold the graph's inputs "
                          f"and parameters ({out} bytes outside the arena)", limit=budget)
    return budget - out


def arena_config(device: str, limit: int | None = None, settings: DeviceSettings = DEFAULT_SETTINGS):
    """``passes.arena.ArenaConfig`` of the arena remc's sessions use on ``device`` (``make_session``)."""
    from remc.passes.arena import ArenaConfig
    kind, _ = parse_device(device)
    if kind == "cuda":
        return ArenaConfig(extend=settings.arena_extend, limit=limit, stream_aware=True,
                           one_region=settings.one_region)
    # register_cpu_arena: one region of the whole limit, so malloc's addresses never break a tie
    return ArenaConfig(extend="kNextPowerOfTwo", limit=limit, one_region=True)


def _initializer_names(model: onnx.ModelProto) -> set[str]:
    return {i.name for i in model.graph.initializer}


# ---------------------------------------------------------------------------------------------------
# Reference accounting and output comparison
# ---------------------------------------------------------------------------------------------------

def live_bytes_peak(model: onnx.ModelProto, *, include_inputs: bool = False) -> int:
    """Peak of plain live-bytes accounting over the file's node order.

    Initializers are resident throughout; each node output is allocated when its node runs and freed
    after its last consumer in file order (graph outputs stay to the end); while a node runs, its
    inputs and outputs are all live. No aliasing or in-place reuse, no kernel scratch: the accounting
    remc's memory model starts from, to compare with ``measure_peak``. Graph inputs count only with
    ``include_inputs`` (the measured peak excludes them).
    """
    types = static_types(model)
    nodes = list(model.graph.node)
    graph_outputs = {o.name for o in model.graph.output}
    last: dict[str, int] = {}
    for k, node in enumerate(nodes):
        for name in node.input:
            if name:
                last[name] = k
    constant = sum(types[i.name].nbytes for i in model.graph.initializer)
    inits = {i.name for i in model.graph.initializer}
    if include_inputs:
        constant += sum(types[i.name].nbytes for i in model.graph.input if i.name not in inits)
    live: dict[str, int] = {}
    peak = constant
    for k, node in enumerate(nodes):
        for name in node.output:
            if name:
                if name not in types:
                    raise ModelError(f"value {name!r} has no static shape")
                live[name] = types[name].nbytes
        peak = max(peak, constant + sum(live.values()))
        for name in [n for n in live if last.get(n, k) <= k and n not in graph_outputs]:
            del live[name]
    return peak


def default_rtol(device: str) -> float:
    """CPU_RTOL on CPU, CUDA_RTOL on CUDA."""
    return CPU_RTOL if parse_device(device)[0] == "cpu" else CUDA_RTOL


def gradient_groups(names: Iterable[str]) -> dict[str, str]:
    """Output name -> its group: parameter gradients (``grad.<layer>.<param>``) group by layer, so a bias
    gradient is judged against the scale of its layer's weight gradient; every other output is its own."""
    out = {}
    for n in names:
        out[n] = n.rsplit(".", 1)[0] if n.startswith("grad.") and n.count(".") >= 2 else n
    return out


def compare_outputs(a: Mapping[str, np.ndarray], b: Mapping[str, np.ndarray], rtol: float = CPU_RTOL,
                    atol: float | None = None) -> tuple[bool, str]:
    """Compare two runs' outputs (``b`` the reference): (all match, the worst output and its error).

    Each float output is judged by its norm-relative error ``||a - b|| / max(||b||, scale)``, which must be
    ``<= rtol``; ``scale`` is the largest reference norm in the output's gradient group
    (``gradient_groups``: a layer's parameter gradients), which keeps a tensor that is numerically zero (a convolution bias before BatchNorm, ~1e-8 on both sides) from failing on rounding
    noise: its error is measured against its group's scale. ``atol`` (when given) is an absolute bound on
    ``||a - b||`` that also passes. NaN must match NaN; integer and bool outputs must be equal; missing
    outputs or differing shapes fail.
    """
    names = sorted(set(a) | set(b))
    for name in names:
        if name not in a or name not in b:
            return False, f"output {name!r} is missing from {'the first' if name not in a else 'the second'} run"
        if np.asarray(a[name]).shape != np.asarray(b[name]).shape:
            return False, f"output {name!r}: shape {np.asarray(a[name]).shape} vs {np.asarray(b[name]).shape}"
    groups = gradient_groups(names)
    norms: dict[str, float] = {}
    for name in names:
        y = np.asarray(b[name])
        if y.dtype.kind in "fc" and y.size:
            y64 = np.nan_to_num(y.astype(np.float64), nan=0.0, posinf=0.0, neginf=0.0)
            norms[name] = float(np.linalg.norm(y64.ravel()))
    group_scale: dict[str, float] = {}
    for name, nrm in norms.items():
        group_scale[groups[name]] = max(group_scale.get(groups[name], 0.0), nrm)
    worst, worst_err, ok = "all outputs match", -1.0, True
    for name in names:
        x, y = np.asarray(a[name]), np.asarray(b[name])
        if x.size == 0:
            continue
        if x.dtype.kind not in "fc" or y.dtype.kind not in "fc":
            bad = int(np.count_nonzero(x != y))
            if bad:
                return False, f"output {name!r}: {bad} of {x.size} elements differ"
            continue
        x64, y64 = x.astype(np.float64), y.astype(np.float64)
        if (np.isnan(x64) != np.isnan(y64)).any():
            return False, f"output {name!r}: NaN where the reference has none (or the reverse)"
        diff = np.where(np.isnan(x64) & np.isnan(y64), 0.0, x64 - y64)
        err_norm = float(np.linalg.norm(diff.ravel()))
        denom = max(norms.get(name, 0.0), group_scale.get(groups[name], 0.0), np.finfo(np.float64).tiny)
        err = err_norm / denom
        passed = err <= rtol or (atol is not None and err_norm <= atol)
        if err > worst_err:
            worst_err = err
            worst = (f"worst output {name!r}: norm-relative error {err:.3g} (||a-b|| {err_norm:.3g}, "
                     f"scale {denom:.3g}; tolerance {rtol:g})")
        ok = ok and passed
    return ok, worst
