"""remc's static tensor placement (passes/placement.py) and its allocator (backends/placement.py), the latter
driven through its ctypes callbacks over a host buffer standing in for the device."""
from __future__ import annotations

import ctypes
import dataclasses
import random
import re
from pathlib import Path

import pytest

from remc.backends.placement import ALIGN, from_layout
from remc.passes.arena import GraphEvents, NodeEvents, graph_events
from remc.passes.placement import Block, blocks_of, layout, live_peak, overlaps

ROOT = Path(__file__).resolve().parent.parent


def chain(sizes: list[int]) -> GraphEvents:
    """A chain a0 -> a1 -> ...: node i allocates a_i and frees a_{i-1}."""
    nodes = [NodeEvents(f"n{i}", ((f"a{i}", s),), (), ((f"a{i - 1}",) if i else ())) for i, s in enumerate(sizes)]
    return GraphEvents(tuple(nodes), 0)


def random_events(rng: random.Random, n: int) -> GraphEvents:
    """Random nodes: each allocates 1-2 outputs, maybe scratch, and frees a random subset of the live values."""
    live: list[str] = []
    nodes = []
    for i in range(n):
        allocs = tuple((f"v{i}_{k}", rng.choice([1, 100, 256, 300, 1000, 4096, 10000])) for k in range(rng.randint(1, 2)))
        scratch = (rng.choice([256, 5000]),) if rng.random() < 0.3 else ()
        live += [a for a, _ in allocs]
        frees = tuple(v for v in list(live) if rng.random() < 0.4)
        for v in frees:
            live.remove(v)
        nodes.append(NodeEvents(f"n{i}", allocs, scratch, frees, rng.choice([0, 0, 0, 512])))
    return GraphEvents(tuple(nodes), 0, tuple(rng.choice([256, 1024]) for _ in range(rng.randint(0, 3))))


def test_chain_height_equals_live_lower_bound():
    lay = layout(chain([1000, 5000, 300, 7000, 256, 2048]))
    assert lay.height == lay.lower_bound
    assert not overlaps(lay)
    assert all(o % ALIGN == 0 for o in lay.offsets)


@pytest.mark.parametrize("seed", range(25))
def test_random_layouts_valid_and_above_lower_bound(seed):
    ev = random_events(random.Random(seed), 60)
    lay = layout(ev)
    assert not overlaps(lay)
    assert lay.height >= lay.lower_bound == live_peak(blocks_of(ev))[0]
    assert all(o % ALIGN == 0 for o in lay.offsets)


def test_overlaps_detects_a_wrong_layout():
    lay = layout([Block(512, 0, 4, "run"), Block(512, 1, 3, "run")])
    assert not overlaps(lay)
    bad = type(lay)(lay.blocks, (0, 256), lay.height, lay.lower_bound)
    assert overlaps(bad) == [(0, 1)]


def test_zoo_lowered_graph_layout(small_lowered):
    for model in small_lowered.values():
        lay = layout(graph_events(model, "cuda"))
        assert not overlaps(lay)
        assert lay.lower_bound <= lay.height <= 1.1 * lay.lower_bound


@pytest.fixture(scope="module")
def small_lowered():
    from remc import zoo
    from remc.pipeline import State, compile_pipeline, run
    out = {}
    for name in ("resnet50", "unet"):
        cfg = {k: v for k, v in zoo.small_config(name).items() if k != "batch"}
        train = zoo.export(name, 2, train=True, **cfg)
        out[name] = run(compile_pipeline(strategy="checkpoint-all", device="cuda"),
                        State(model=train, budget=1 << 60)).lowered
    return out


# -- the allocator, through its C callbacks, over a host buffer


class HostDevice:
    """A bytearray standing in for the device buffer, and the C functions ONNX Runtime would call."""

    def __init__(self, capacity: int, lay=None) -> None:
        self.mem = (ctypes.c_ubyte * capacity)()
        self.base = ctypes.addressof(self.mem)
        self.alloc = from_layout(self.base, capacity, lay)
        opts = self.alloc.provider_options()
        self.c_alloc = ctypes.CFUNCTYPE(ctypes.c_void_p, ctypes.c_size_t)(int(opts["gpu_external_alloc"]))
        self.c_free = ctypes.CFUNCTYPE(None, ctypes.c_void_p)(int(opts["gpu_external_free"]))

    def replay(self, ev: GraphEvents, runs: int = 2) -> dict[str, int]:
        """Drive the callbacks with ``ev``'s requests as ONNX Runtime makes them; each buffer is filled with
        its own tag and checked before it is freed (a corrupted tensor fails)."""
        tags: dict[int, tuple[int, int]] = {}

        def get(n: int) -> int | None:
            p = self.c_alloc(n)
            if p:
                tag = len(tags) % 251 + 1
                ctypes.memset(p, tag, n)
                tags[p] = (n, tag)
            return p

        def put(p: int | None) -> None:
            if p:
                n, tag = tags.pop(p)
                assert bytes(ctypes.string_at(p, n)) == bytes([tag]) * n, "a live tensor was overwritten"
                self.c_free(p)

        for s in ev.initializer_sizes:
            get(s)
        for r in range(runs):
            self.alloc.begin_run()
            live: dict[str, int | None] = {}
            for ne in ev.nodes:
                for key, size in ne.allocs:
                    live[key] = get(size)
                if r == 0 and ne.persistent:
                    get(ne.persistent)
                for s in ne.scratch:
                    put(get(s))
                for key in ne.frees:
                    put(live.pop(key))
            for p in list(live.values()):
                put(p)
        st = self.alloc.stats
        return {"planned": st.planned, "fallback": st.fallback, "rejected": st.rejected, "failures": len(st.failures),
                "in_scratch": st.in_scratch}


def test_allocator_follows_the_layout():
    ev = random_events(random.Random(1), 80)
    lay = layout(ev)
    dev = HostDevice(lay.height, lay)
    got = dev.replay(ev)
    assert got["fallback"] == 0 and got["failures"] == 0 and got["rejected"] == 0
    assert dev.alloc.stats.high_water == lay.height


def test_allocator_falls_back_when_the_sequence_deviates():
    ev = random_events(random.Random(2), 80)
    lay = layout(ev)
    # ONNX Runtime makes a request the prediction lacks (a 768-byte buffer at node 10): it gets a best-fit place,
    # and the requests after it still find their planned offsets
    nodes = list(ev.nodes)
    nodes[10] = NodeEvents(nodes[10].node, nodes[10].allocs, nodes[10].scratch + (768,), nodes[10].frees,
                           nodes[10].persistent)
    dev = HostDevice(2 * lay.height, lay)
    got = dev.replay(GraphEvents(tuple(nodes), 0, ev.initializer_sizes), runs=1)
    assert got["fallback"] + got["in_scratch"] >= 1 and got["failures"] == 0
    assert got["planned"] >= 0.9 * len(lay.sequence("run")) + len(lay.sequence("create"))


def test_allocator_returns_null_when_full():
    ev = chain([4096, 4096, 4096])
    lay = layout(ev)
    dev = HostDevice(lay.height - ALIGN, lay)  # one block less than the layout needs
    got = dev.replay(ev, runs=1)
    assert got["failures"] >= 1
    req, gap = dev.alloc.stats.failures[0]
    assert req == 4096 and gap < 4096


def test_wrong_layout_is_rejected_not_corrupting():
    ev = chain([1000, 2000, 3000, 1000])
    lay = layout(ev)
    wrong = type(lay)(lay.blocks, tuple(0 for _ in lay.offsets), lay.height, lay.lower_bound)  # all at offset 0
    assert overlaps(wrong)
    dev = HostDevice(4 * lay.height, wrong)
    got = dev.replay(ev)  # the tags check that no live buffer was overwritten
    assert got["rejected"] >= 1 and got["failures"] == 0
    assert not dev.alloc.starts  # everything freed


def test_alloc_exception_is_null_not_a_crash():
    dev = HostDevice(4096)
    assert dev.c_alloc(1 << 40) is None
    assert dev.alloc.stats.failures


# -- typed settings instead of module-level switches


def test_no_module_level_device_switches():
    for rel in ("backends/runtime.py", "backends/profile.py", "backends/scratch.py", "backends/trainer.py",
                "remc/fit.py", "tools/gpu_arena_evidence.py", "tools/gpu_arena_probe.py"):
        text = (ROOT / rel).read_text()
        assert not re.search(r"\b(CUDNN_CONV_ALGO_SEARCH|CUDA_ONE_REGION|CUDA_ARENA_EXTEND)\b", text), rel


def test_device_settings():
    from remc.backends import capi
    from remc.backends.runtime import DeviceSettings
    assert DeviceSettings().placed("cuda") and DeviceSettings().placed("cpu") == capi.available()
    assert not DeviceSettings().placed_loop("cpu") and DeviceSettings().placed_loop("cuda")
    assert not DeviceSettings(placement="arena").placed("cuda:0")
    with pytest.raises(ValueError):
        DeviceSettings(placement="bogus")
    with pytest.raises(dataclasses.FrozenInstanceError):
        DeviceSettings().placement = "arena"  # type: ignore[misc]


def _cuda() -> bool:
    try:
        from remc.backends.runtime import cuda_available
        return cuda_available()
    except Exception:  # noqa: BLE001
        return False


@pytest.mark.skipif(not _cuda(), reason="needs the CUDA execution provider")
def test_placed_session_on_cuda(small_lowered):
    from remc.backends import runtime
    from remc.backends.placement import model_layout
    model = small_lowered["resnet50"]
    lay = model_layout(model, "cuda")
    feeds = runtime.random_inputs(model, 0)
    res = runtime.measure(model, "cuda", feeds=feeds, iters=2, mem_limit=lay.height, layout=lay)
    ref = runtime.measure(model, "cuda", feeds=feeds, iters=1, mem_method=None)
    assert res.measured_peak <= lay.height
    assert res.placement["planned"] > 0.9 * res.placement["calls"]
    assert runtime.compare_outputs(res.outputs, ref.outputs, rtol=runtime.CUDA_RTOL)[0]


def test_kernel_temporaries_share_its_scratch_region():
    # node n1's kernel requests three temporaries (1000, 3000, 900 bytes; the first freed before the third)
    # where the prediction has one scratch block of their measured peak (1024 + 3072 = 4096 bytes)
    ev = GraphEvents((NodeEvents("n0", (("a", 8192),), (), ()), NodeEvents("n1", (("b", 8192),), (4096,), ("a",)),
                      NodeEvents("n2", (("c", 4096),), (), ("b",))), 0)
    lay = layout(ev)
    dev = HostDevice(lay.height, lay)
    dev.alloc.begin_run()
    a, b = dev.c_alloc(8192), dev.c_alloc(8192)
    t1, t2 = dev.c_alloc(1000), dev.c_alloc(3000)
    dev.c_free(t1)
    t3 = dev.c_alloc(900)
    assert None not in (a, b, t1, t2, t3)
    st = dev.alloc.stats
    assert st.in_scratch == 3 and st.fallback == 0 and not st.failures
    assert dev.alloc.stats.high_water <= lay.height
