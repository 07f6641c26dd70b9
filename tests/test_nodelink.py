"""Node-link JSON: both published dialects (Checkmate-extracted and Moccasin's random layered), the file's
topological order kept, Moccasin's memory accounting, and bad values refused with one line naming them."""
from __future__ import annotations

import json
import math
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from remc.ir.errors import ModelError
from remc.ir.nodelink import dag_from_nodelink, load_nodelink
from remc.ir.schedule import checkpoint_all


def moccasin_peak(succ: dict[Any, list[Any]], mem: dict[Any, int], order: list[Any]) -> int:
    """Moccasin's ``get_mem_from_schedule`` for a schedule computing each node once: at step j, the outputs
    computed before j that a node at j or later still uses, plus the output of the node at j."""
    at = {v: j for j, v in enumerate(order)}
    return max(sum(mem[u] for u in order[:j] if any(at[w] >= j for w in succ[u])) + mem[v]
               for j, v in enumerate(order))


def layered_doc() -> dict:
    """A small graph in the dialect of Moccasin's random_layered_*.json files (fields named by *_tag keys,
    nodes keyed by 'name', links by '0'/'1', topological order in graph.order)."""
    links = [(0, 2), (0, 3), (2, 4), (3, 4), (3, 5), (2, 5), (4, 1), (5, 1), (0, 5)]
    out = {0: 790, 1: 60, 2: 1950, 3: 300, 4: 2500, 5: 80}
    dur = {0: 0, 1: 0, 2: 514, 3: 20, 4: 700, 5: 33}
    return {
        "directed": True, "multigraph": False,
        "graph": {"name": "random_layered_tiny", "source_node": 0, "target_node": 1,
                  "node_output_cost_tag": "out_cost", "node_param_cost_tag": "param_cost",
                  "node_input_cost_tag": "input_cost", "node_duration_tag": "duration",
                  "pos": {str(v): [0, 0] for v in out}, "order": [0, 3, 2, 5, 4, 1]},
        "nodes": [{"out_cost": out[v], "param_cost": 0, "duration": dur[v], "name": v} for v in (0, 1, 2, 3, 4, 5)],
        "links": [{"0": a, "1": b} for a, b in links],
    }


def checkmate_doc() -> dict:
    """A small graph in the dialect of the Checkmate-extracted files (id, name, cost_cpu, cost_ram, backward)."""
    nodes = [("a", 10, 400, False), ("b", 20, 100, False), ("loss", 5, 8, False), ("gb", 20, 100, True),
             ("ga", 10, 400, True)]
    links = [(0, 1), (1, 2), (2, 3), (1, 3), (3, 4), (0, 4)]
    return {"directed": True, "multigraph": False, "graph": {"name": "tiny_train"},
            "nodes": [{"id": k, "name": nm, "cost_cpu": c, "cost_ram": m, "backward": bw}
                      for k, (nm, c, m, bw) in enumerate(nodes)],
            "links": [{"source": a, "target": b} for a, b in links]}


def test_random_layered_dialect_read_as_published() -> None:
    doc = layered_doc()
    dag = dag_from_nodelink(doc)
    order = doc["graph"]["order"]
    assert dag.names == tuple(str(v) for v in order)  # the file's order, not a re-sort (0, 2, 3, 5, 4, 1)
    assert dag.meta["order"] == "graph.order"
    by_name = {nd["name"]: nd for nd in doc["nodes"]}
    assert dag.cost.tolist() == [by_name[v]["duration"] for v in order]
    assert dag.mem.tolist() == [by_name[v]["out_cost"] for v in order]
    assert dag.constant == 0 and not dag.backward.any()
    rank = {v: r for r, v in enumerate(order)}
    assert sorted(map(tuple, dag.edges.tolist())) == sorted((rank[lk["0"]], rank[lk["1"]]) for lk in doc["links"])


def test_checkpoint_all_peak_is_moccasins_topo_mem_in_the_files_order() -> None:
    doc = layered_doc()
    succ: dict[Any, list[Any]] = {nd["name"]: [] for nd in doc["nodes"]}
    for lk in doc["links"]:
        succ[lk["0"]].append(lk["1"])
    mem = {nd["name"]: nd["out_cost"] for nd in doc["nodes"]}
    dag = dag_from_nodelink(doc)
    file_peak = moccasin_peak(succ, mem, doc["graph"]["order"])
    sorted_peak = moccasin_peak(succ, mem, [0, 2, 3, 4, 5, 1])  # another topological order
    assert file_peak != sorted_peak  # the test can tell the orders apart
    assert checkpoint_all(dag).peak(dag) == file_peak


def test_checkmate_dialect_keeps_listing_order() -> None:
    doc = checkmate_doc()
    dag = dag_from_nodelink(doc)
    assert dag.names == ("a", "b", "loss", "gb", "ga") and dag.meta["order"] == "file"
    assert dag.cost.tolist() == [10, 20, 5, 20, 10] and dag.mem.tolist() == [400, 100, 8, 100, 400]
    assert dag.backward.tolist() == [False, False, False, True, True]
    succ = {k: [b for a, b in dag.edges.tolist() if a == k] for k in range(dag.n)}
    assert checkpoint_all(dag).peak(dag) == moccasin_peak(succ, dict(enumerate(dag.mem.tolist())), list(range(5)))


def test_param_cost_is_resident() -> None:
    doc = layered_doc()
    doc["nodes"][2]["param_cost"] = 64
    doc["nodes"][3]["param_cost"] = 36
    assert dag_from_nodelink(doc).constant == 100


def test_same_file_through_the_cli(tmp_path: Path) -> None:
    path = tmp_path / "random_layered_tiny.json"
    path.write_text(json.dumps(layered_doc()))
    dag = load_nodelink(path)
    peak = checkpoint_all(dag).peak(dag)
    res = remc("solve", str(path), "--budget", str(peak), "--strategy", "checkpoint-all", "--json")
    assert res.returncode == 0, res.stderr
    rep = json.loads(res.stdout)
    assert rep["peak"] == peak and rep["cost"] == sum(nd["duration"] for nd in layered_doc()["nodes"])


@pytest.mark.parametrize("ratio", ["0.9999x", "1X", "1.5x"])
def test_budget_as_a_ratio_of_checkpoint_all(ratio: str, tmp_path: Path) -> None:
    """``--budget 0.8x`` is the protocol's budget, ceil(0.8 x checkpoint-all's peak in the file's order); the
    report gives the bytes, the ratio and the peak it multiplied."""
    path = tmp_path / "random_layered_tiny.json"
    path.write_text(json.dumps(layered_doc()))
    dag = load_nodelink(path)
    peak = checkpoint_all(dag).peak(dag)
    res = remc("solve", str(path), "--budget", ratio, "--strategy", "checkmate", "--json")
    assert res.returncode == 0, res.stderr
    rep = json.loads(res.stdout)
    r = float(ratio[:-1])
    assert rep["budget"] == math.ceil(r * peak) and rep["budget_ratio"] == r
    assert rep["checkpoint_all_peak"] == peak and rep["order"] == "graph.order" and rep["peak"] <= rep["budget"]
    text = remc("solve", str(path), "--budget", ratio, "--strategy", "checkmate")
    assert f"{r:g}x of checkpoint-all's" in text.stdout and "graph.order" in text.stdout


@pytest.mark.parametrize("bad", ["x", "abcx", "0x", "nanx", "infx", "0.0x"])
def test_bad_ratio_budget_is_one_line(bad: str, tmp_path: Path) -> None:
    path = tmp_path / "random_layered_tiny.json"
    path.write_text(json.dumps(layered_doc()))
    res = remc("solve", str(path), "--budget", bad)
    assert res.returncode == 2 and "Traceback" not in res.stderr
    assert "--budget" in res.stderr and "0.8x" in res.stderr


def remc(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "remc.cli", *args], capture_output=True, text=True, timeout=300)


def _node(doc: dict, name: Any) -> dict:
    return next(nd for nd in doc["nodes"] if nd.get("name") == name or nd.get("id") == name)


def _set(name: Any, field: str, value: Any, dialect: Callable[[], dict] = layered_doc) -> Callable[[], dict]:
    def make() -> dict:
        doc = dialect()
        _node(doc, name)[field] = value
        return doc
    return make


def _edit(fn: Callable[[dict], None], dialect: Callable[[], dict] = layered_doc) -> Callable[[], dict]:
    def make() -> dict:
        doc = dialect()
        fn(doc)
        return doc
    return make


BAD: list[tuple[str, Callable[[], Any], tuple[str, ...]]] = [
    ("negative memory", _set(3, "out_cost", -300), ("node 3", "out_cost", "-300")),
    ("negative cost_ram", _set("b", "cost_ram", -1, checkmate_doc), ("node 'b'", "cost_ram")),
    ("nan memory", _set(4, "out_cost", math.nan), ("node 4", "out_cost", "nan")),
    ("inf memory", _set("a", "cost_ram", math.inf, checkmate_doc), ("node 'a'", "cost_ram", "inf", "finite")),
    ("huge memory", _set("a", "cost_ram", 1e30, checkmate_doc), ("node 'a'", "cost_ram", "2^53")),
    ("fractional memory", _set("a", "cost_ram", 2.5, checkmate_doc), ("node 'a'", "cost_ram", "whole")),
    ("negative cost", _set(2, "duration", -5), ("node 2", "duration", "-5")),
    ("nan cost", _set("loss", "cost_cpu", math.nan, checkmate_doc), ("node 'loss'", "cost_cpu", "nan")),
    ("inf cost", _set(5, "duration", -math.inf), ("node 5", "duration", "inf")),
    ("text cost", _set(5, "duration", "fast"), ("node 5", "duration", "'fast'")),
    ("missing cost", _edit(lambda d: d["nodes"][1].pop("cost_cpu"), checkmate_doc), ("node 'b'", "cost_cpu")),
    ("negative constant", _edit(lambda d: d["graph"].update(constant=-8), checkmate_doc), ("graph", "constant")),
    ("nan constant", _edit(lambda d: d["graph"].update(constant=math.nan), checkmate_doc), ("graph", "constant")),
    ("negative param_cost", _set(2, "param_cost", -1), ("node 2", "param_cost")),
    ("no nodes", _edit(lambda d: d.update(nodes=[], links=[]), checkmate_doc), ("no nodes",)),
    ("unknown link target", _edit(lambda d: d["links"].append({"source": 0, "target": 42}), checkmate_doc),
     ("link #6", "unknown target node 42")),
    ("unknown link source", _edit(lambda d: d["links"].append({"0": 77, "1": 1})), ("link #9", "source node 77")),
    ("link without ends", _edit(lambda d: d["links"].append({"from": 0}), checkmate_doc), ("link #6",)),
    ("duplicate id", _edit(lambda d: d["nodes"][1].update(id=0), checkmate_doc), ("id 0", "twice")),
    ("cycle", _edit(lambda d: d["links"].append({"source": 4, "target": 0}), checkmate_doc), ("cycle",)),
    ("order not topological", _edit(lambda d: d["graph"].update(order=[0, 5, 3, 2, 4, 1])),
     ("order", "not topological")),
    ("order misses a node", _edit(lambda d: d["graph"].update(order=[0, 3, 2, 5, 1])), ("order", "every node")),
    ("order names unknown node", _edit(lambda d: d["graph"]["order"].append(9)), ("order", "unknown node 9")),
    ("not an object", lambda: [1, 2, 3], ("object",)),
    ("nodes not objects", _edit(lambda d: d.update(nodes=[1, 2]), checkmate_doc), ("nodes",)),
]


@pytest.mark.parametrize("make,needles", [(m, n) for _, m, n in BAD], ids=[b[0] for b in BAD])
def test_bad_values_refused_by_reader(make: Callable[[], Any], needles: tuple[str, ...]) -> None:
    with pytest.raises(ModelError) as err:
        dag_from_nodelink(make())
    for needle in needles:
        assert needle in str(err.value), str(err.value)


CLI_BAD = ["negative memory", "nan cost", "huge memory", "no nodes", "unknown link target", "negative constant",
           "order not topological"]


@pytest.mark.parametrize("case", CLI_BAD)
def test_bad_values_refused_by_cli(tmp_path: Path, case: str) -> None:
    make, needles = next((m, n) for name, m, n in BAD if name == case)
    path = tmp_path / "g.json"
    path.write_text(json.dumps(make()))  # NaN and Infinity as Python's json writes them
    plan = tmp_path / "g.plan"
    res = remc("solve", str(path), "--budget", "1MiB", "--strategy", "checkpoint-all", "--plan", str(plan))
    assert res.returncode != 0
    assert "Traceback" not in res.stderr, res.stderr
    lines = [ln for ln in res.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1, res.stderr
    assert all(n in lines[0] for n in needles), lines[0]
    assert not plan.exists()


@pytest.mark.parametrize("text,needle", [("{not json", "not node-link JSON"), ("", "not node-link JSON"),
                                         ('{"links": []}', "lacks field 'nodes'")])
def test_unreadable_file(tmp_path: Path, text: str, needle: str) -> None:
    path = tmp_path / "g.json"
    path.write_text(text)
    with pytest.raises(ModelError, match=needle):
        load_nodelink(path)


def test_lexicographic_order_is_networkx_s() -> None:
    """The reader's own topological sort (smallest ready index first) is networkx's
    ``lexicographical_topological_sort``; a cycle gives None."""
    import random

    import networkx as nx

    from remc.ir.nodelink import _lexicographic_order

    rng = random.Random(3)
    for _ in range(200):
        n = rng.randrange(1, 25)
        perm = list(range(n))
        rng.shuffle(perm)  # edges forward in a random order, so that the file's order is not topological
        edges = [(perm[a], perm[b]) for a in range(n) for b in range(a + 1, n) if rng.random() < 0.2]
        g = nx.DiGraph()
        g.add_nodes_from(range(n))
        g.add_edges_from(edges)
        assert _lexicographic_order(n, edges) == list(nx.lexicographical_topological_sort(g))
        if edges:
            a, b = edges[0]
            assert _lexicographic_order(n, edges + [(b, a)]) is None


def test_onnx_model_given_to_solve_points_to_compile(tmp_path: Path) -> None:
    path = tmp_path / "model.onnx"
    path.write_bytes(b"\x08\x07\x12\x07pytorch\xd1\xff\x00")  # protobuf bytes, not UTF-8
    with pytest.raises(ModelError, match="remc compile"):
        load_nodelink(path)
