"""The node-link JSON graph format of the published Checkmate/Moccasin graph sets (networkx ``node_link_data``).

Two dialects are read as published, with Moccasin's accounting (Bartan et al. 2023, ``main.py`` and
``util.get_mem_from_schedule``): a node's memory is the bytes of its output, held from its computation to
its last use; there is no parameter or workspace term unless the file gives one.

* Checkmate-extracted graphs: ``{"graph": {"name"}, "nodes": [{"id", "name", "cost_cpu", "cost_ram",
  "backward"}], "links": [{"source", "target"}]}``. ``cost_cpu`` is C_v, ``cost_ram`` is M_v in bytes.
* Random layered graphs (``random_layered_n{N}_w…_nlv…_ed…_scd….json``): nodes carry ``name`` (the node's
  key), ``out_cost``, ``param_cost`` and ``duration``; the ``graph`` dict names the fields through its
  ``*_tag`` keys (``node_output_cost_tag`` -> M_v, ``node_duration_tag`` -> C_v, ``node_param_cost_tag``)
  and gives a topological order in ``graph["order"]``; links name their ends by the keys ``"0"`` (source)
  and ``"1"`` (target), as Moccasin reads them (``graph["source_node"]``/``["target_node"]`` are the
  graph's entry and exit nodes, not link keys). Parameter bytes are always resident, so remc adds them to
  the constant overhead; they are 0 in every published file, and Moccasin ignores them.

remc also writes (and reads when present) ``workspace``, ``no_recompute`` and ``kept`` (bytes of graph outputs
held from the node's first computation) per node and ``constant`` (bytes of the constant overhead) in ``graph``;
they default to 0 / false.

Order: remc's units are numbered in one topological order, which fixes the stages of the Checkmate
formulation and the checkpoint-all peak that the benchmark protocol scales into a budget. remc keeps the
file's order: ``graph["order"]`` when given, else the order the nodes are listed in when that is
topological (every published Checkmate graph), else the topological order closest to the listing (Kahn's
algorithm taking the earliest-listed ready node). ``DAG.meta["order"]`` says which one was used.

Every value is checked where it enters: a malformed file is one :class:`ModelError` naming the node (or
link) and the field.
"""
from __future__ import annotations

import heapq
import json
import math
import os
from pathlib import Path
from typing import Any

import numpy as np

from .dag import DAG
from .errors import ModelError

MAX_BYTES = 2 ** 53
"""Largest memory value accepted for one node (8 PiB), so that sums stay exact in int64 and float64."""

_LINK_KEYS = (("source", "target"), ("0", "1"))


def load_nodelink(source: str | os.PathLike) -> DAG:
    """Read a node-link JSON graph in the file's own topological order (see the module docstring)."""
    path = Path(source)
    try:
        text = path.read_text()
    except FileNotFoundError:
        raise ModelError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise ModelError(f"{path} is a directory, not a node-link JSON file") from None
    except PermissionError:
        raise ModelError(f"{path}: permission denied") from None
    except UnicodeDecodeError as e:
        hint = ("; it looks like an ONNX model: 'remc compile' takes those ('remc solve' reads node-link JSON "
                "graphs)" if path.suffix.lower() == ".onnx" else "")
        raise ModelError(f"{path} is not node-link JSON: {e}{hint}") from None
    except OSError as e:
        raise ModelError(f"{path}: cannot read: {e.strerror or e}") from None
    try:
        data = json.loads(text)  # NaN and Infinity become floats, rejected below with the field named
    except json.JSONDecodeError as e:
        raise ModelError(f"{path} is not node-link JSON: {e}") from None
    return dag_from_nodelink(data, str(path))


class _Fields:
    """Which node keys carry the id, C_v, M_v and parameter bytes in this file."""

    def __init__(self, meta: dict, nodes: list[dict], where: str) -> None:
        tagged = "node_output_cost_tag" in meta or "node_duration_tag" in meta
        self.mem = str(meta.get("node_output_cost_tag", "out_cost")) if tagged else "cost_ram"
        self.cost = str(meta.get("node_duration_tag", "duration")) if tagged else "cost_cpu"
        self.param = str(meta["node_param_cost_tag"]) if tagged and "node_param_cost_tag" in meta else None
        has_id = all("id" in nd for nd in nodes)
        self.id = "id" if has_id or not all("name" in nd for nd in nodes) else "name"
        self.where = where


def dag_from_nodelink(data: Any, where: str = "graph") -> DAG:
    """Build the DAG of a parsed node-link document; raise ModelError naming the first bad value."""
    if not isinstance(data, dict):
        raise ModelError(f"{where}: node-link JSON must be an object with 'nodes' and 'links'")
    nodes = data.get("nodes")
    if nodes is None:
        raise ModelError(f"{where}: node-link JSON lacks field 'nodes'")
    if not isinstance(nodes, list) or not all(isinstance(nd, dict) for nd in nodes):
        raise ModelError(f"{where}: 'nodes' must be a list of objects")
    if not nodes:
        raise ModelError(f"{where}: the graph has no nodes")
    links = data.get("links", data.get("edges"))
    if links is None:
        raise ModelError(f"{where}: node-link JSON lacks field 'links'")
    if not isinstance(links, list) or not all(isinstance(lk, dict) for lk in links):
        raise ModelError(f"{where}: 'links' must be a list of objects")
    meta = data.get("graph") or {}
    if not isinstance(meta, dict):
        raise ModelError(f"{where}: 'graph' must be an object")

    f = _Fields(meta, nodes, where)
    ids = [_node_id(nd, k, f) for k, nd in enumerate(nodes)]
    pos: dict[Any, int] = {}
    for k, i in enumerate(ids):
        if i in pos:
            raise ModelError(f"{where}: node id {i!r} appears twice (nodes #{pos[i]} and #{k})")
        pos[i] = k
    edges = [_link(lk, j, pos, where) for j, lk in enumerate(links)]
    order, how = _order(meta, ids, pos, edges, where)
    rank = {k: r for r, k in enumerate(order)}

    labels = [_label(nodes[k], ids[k]) for k in order]
    names = tuple(labels) if len(set(labels)) == len(labels) else \
        tuple(f"{lb}#{ids[k]}" for lb, k in zip(labels, order))
    who = [_who(nodes[k], ids[k]) for k in order]
    cost = [_number(nodes[k], f.cost, who[r], where) for r, k in enumerate(order)]
    mem = [_bytes(nodes[k], f.mem, who[r], where) for r, k in enumerate(order)]
    workspace = [_bytes(nodes[k], "workspace", who[r], where, default=0) for r, k in enumerate(order)]
    kept = [_bytes(nodes[k], "kept", who[r], where, default=0) for r, k in enumerate(order)]
    kept_first = [min(_bytes(nodes[k], "kept_first", who[r], where, default=kept[r]), kept[r])
                  for r, k in enumerate(order)]
    params = sum(_bytes(nodes[k], f.param, who[r], where, default=0) for r, k in enumerate(order)) if f.param else 0
    constant = _bytes(meta, "constant", None, where, default=0) + params
    if not math.isfinite(sum(cost)):
        raise ModelError(f"{where}: the graph's costs add up to more than a float can hold")
    total = sum(mem) + sum(workspace) + sum(kept) + constant
    if total >= 2 ** 62:
        raise ModelError(f"{where}: the graph's memory adds up to {total:.3g} bytes, more than remc can count "
                         f"(2^62)")
    return DAG(
        names=names, cost=np.asarray(cost, dtype=np.float64), mem=np.asarray(mem, dtype=np.int64),
        edges=np.asarray(sorted({(rank[a], rank[b]) for a, b in edges}), dtype=np.int64).reshape(-1, 2),
        constant=constant, workspace=np.asarray(workspace, dtype=np.int64), kept=np.asarray(kept, dtype=np.int64),
        kept_first=np.asarray(kept_first, dtype=np.int64),
        backward=np.asarray([_flag(nodes[k], "backward", who[r], where) for r, k in enumerate(order)], dtype=bool),
        no_recompute=np.asarray([_flag(nodes[k], "no_recompute", who[r], where) for r, k in enumerate(order)],
                                dtype=bool),
        meta={"graph": str(meta.get("name", where)), "order": how},
    )


def _node_id(nd: dict, k: int, f: _Fields) -> Any:
    if f.id not in nd:
        raise ModelError(f"{f.where}: node #{k} lacks field 'id'")
    i = nd[f.id]
    if not isinstance(i, (str, int)) or isinstance(i, bool):
        raise ModelError(f"{f.where}: node #{k} has id {i!r}; ids are strings or integers")
    return i


def _link(lk: dict, j: int, pos: dict[Any, int], where: str) -> tuple[int, int]:
    for src, dst in _LINK_KEYS:
        if src in lk and dst in lk:
            break
    else:
        raise ModelError(f"{where}: link #{j} lacks field 'source' or 'target'")
    ends = []
    for key in (src, dst):
        end = lk[key]
        try:
            ends.append(pos[end])
        except (KeyError, TypeError):
            what = "source" if key == src else "target"
            raise ModelError(f"{where}: link #{j} names unknown {what} node {end!r}") from None
    return ends[0], ends[1]


def _order(meta: dict, ids: list, pos: dict[Any, int], edges: list[tuple[int, int]],
           where: str) -> tuple[list[int], str]:
    """Node indices in the file's topological order, and which order that is (see the module docstring)."""
    sorted_ = _lexicographic_order(len(ids), edges)
    if sorted_ is None:
        import networkx as nx  # only to name a node on the cycle (its import costs 0.2 s of CPU)
        g = nx.DiGraph(edges)
        cyc = nx.find_cycle(g)
        raise ModelError(f"{where}: graph has a cycle through node {ids[cyc[0][0]]!r}")
    if "order" in meta:
        given = meta["order"]
        if not isinstance(given, list):
            raise ModelError(f"{where}: graph 'order' must be a list of node ids")
        try:
            order = [pos[i] for i in given]
        except (KeyError, TypeError) as e:
            raise ModelError(f"{where}: graph 'order' names unknown node {e.args[0]!r}") from None
        if sorted(order) != list(range(len(ids))):
            raise ModelError(f"{where}: graph 'order' must list every node exactly once "
                             f"({len(order)} entries for {len(ids)} nodes)")
        _check_topological(order, edges, ids, where, "graph 'order'")
        return order, "graph.order"
    if all(a < b for a, b in edges):
        return list(range(len(ids))), "file"
    return sorted_, "topological sort of the file's node list"


def _lexicographic_order(n: int, edges: list[tuple[int, int]]) -> list[int] | None:
    """The topological order of nodes 0..n-1 that takes the smallest ready index first (networkx's
    ``lexicographical_topological_sort``), or None when ``edges`` have a cycle."""
    succ: list[list[int]] = [[] for _ in range(n)]
    indeg = [0] * n
    for a, b in edges:
        succ[a].append(b)
        indeg[b] += 1
    ready = [v for v in range(n) if indeg[v] == 0]
    heapq.heapify(ready)
    order = []
    while ready:
        v = heapq.heappop(ready)
        order.append(v)
        for w in succ[v]:
            indeg[w] -= 1
            if indeg[w] == 0:
                heapq.heappush(ready, w)
    return order if len(order) == n else None


def _check_topological(order: list[int], edges: list[tuple[int, int]], ids: list, where: str, what: str) -> None:
    at = {k: r for r, k in enumerate(order)}
    for a, b in edges:
        if at[a] >= at[b]:
            raise ModelError(f"{where}: {what} is not topological: node {ids[b]!r} comes before its input "
                             f"{ids[a]!r}")


def _label(nd: dict, i: Any) -> str:
    return str(nd.get("name", i))


def _who(nd: dict, i: Any) -> str:
    """How messages name a node: by its name, with its id when they differ."""
    name = nd.get("name", i)
    return f"node {i!r}" if name == i else f"node {name!r} (id {i!r})"


def _value(obj: dict, key: str, node: str | None, where: str, default: Any) -> tuple[Any, str]:
    owner = node or "graph"
    if key not in obj or obj[key] is None:
        if default is None:
            raise ModelError(f"{where}: {owner} lacks field {key!r}")
        return default, owner
    return obj[key], owner


def _number(obj: dict, key: str, node: str | None, where: str, default: float | None = None) -> float:
    """A finite, non-negative number (a cost)."""
    v, owner = _value(obj, key, node, where, default)
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise ModelError(f"{where}: {owner} has {key} {v!r}; it must be a number")
    x = float(v)
    if not math.isfinite(x) or x < 0:
        raise ModelError(f"{where}: {owner} has {key} {v!r}; it must be finite and at least 0")
    return x


def _bytes(obj: dict, key: str, node: str | None, where: str, default: int | None = None) -> int:
    """A whole, non-negative number of bytes below MAX_BYTES."""
    v, owner = _value(obj, key, node, where, default)
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise ModelError(f"{where}: {owner} has {key} {v!r}; it must be a number of bytes")
    if isinstance(v, float) and not math.isfinite(v):
        raise ModelError(f"{where}: {owner} has {key} {v!r}; it must be a finite number of bytes")
    if isinstance(v, float) and v != int(v):
        raise ModelError(f"{where}: {owner} has {key} {v!r}; it must be a whole number of bytes")
    if v < 0:
        raise ModelError(f"{where}: {owner} has {key} {v!r}; it must be at least 0")
    if v > MAX_BYTES:
        raise ModelError(f"{where}: {owner} has {key} {v!r}; remc accepts at most 2^53 bytes (8 PiB)")
    return int(v)


def _flag(nd: dict, key: str, node: str, where: str) -> bool:
    v = nd.get(key, False)
    if v is None:
        return False
    if not isinstance(v, (bool, int)) or v not in (0, 1):
        raise ModelError(f"{where}: {node} has {key} {v!r}; it must be true or false")
    return bool(v)


def nodelink_from_dag(dag: DAG) -> dict:
    """The node-link document of ``dag`` (Checkmate dialect, ids 0..n-1 in remc's order)."""
    nodes = []
    for k in range(dag.n):
        nd = {"id": k, "name": dag.names[k], "cost_cpu": float(dag.cost[k]), "cost_ram": int(dag.mem[k]),
              "backward": bool(dag.backward[k])}
        if dag.workspace[k]:
            nd["workspace"] = int(dag.workspace[k])
        if dag.no_recompute[k]:
            nd["no_recompute"] = True
        if dag.kept[k]:
            nd["kept"] = int(dag.kept[k])
            if dag.kept_first[k] != dag.kept[k]:
                nd["kept_first"] = int(dag.kept_first[k])
        nodes.append(nd)
    links = [{"source": int(a), "target": int(b)} for a, b in dag.edges]
    graph = {"name": dag.meta.get("graph", ""), "constant": int(dag.constant)}
    return {"directed": True, "multigraph": False, "graph": graph, "nodes": nodes, "links": links}


def dump_nodelink(dag: DAG) -> str:
    return json.dumps(nodelink_from_dag(dag), indent=1)


def save_nodelink(dag: DAG, path: str | os.PathLike) -> None:
    from .onnx_io import write_text_atomic
    write_text_atomic(path, dump_nodelink(dag) + "\n")


__all__ = ["load_nodelink", "dag_from_nodelink", "nodelink_from_dag", "dump_nodelink", "save_nodelink",
           "MAX_BYTES"]
