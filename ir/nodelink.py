"""The node-link JSON graph format of the published Checkmate/Moccasin graph sets.

``{"directed": true, "graph": {...}, "nodes": [{"id", "name", "cost_cpu", "cost_ram", "backward"}, ...],
"links": [{"source", "target"}, ...]}`` (networkx ``node_link_data``). ``cost_cpu`` is C_v, ``cost_ram`` is
M_v in bytes. remc also writes (and reads when present) ``workspace`` and ``no_recompute`` per node and
``constant`` (bytes of the constant overhead) in ``graph``; they default to 0 / false.
"""
from __future__ import annotations

import json
import os
from pathlib import Path

import networkx as nx

from .errors import ModelError
from .dag import DAG


def load_nodelink(source: str | os.PathLike) -> DAG:
    """Read a node-link JSON graph; nodes are renumbered in a topological order (ties by id)."""
    path = Path(source)
    try:
        data = json.loads(path.read_text())
    except FileNotFoundError:
        raise ModelError(f"{path}: no such file") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise ModelError(f"{path} is not node-link JSON: {e}") from None
    return dag_from_nodelink(data, str(path))


def dag_from_nodelink(data: dict, where: str = "graph") -> DAG:
    try:
        nodes = data["nodes"]
        links = data.get("links", data.get("edges"))
        if links is None:
            raise KeyError("links")
        ids = [nd["id"] for nd in nodes]
        g = nx.DiGraph()
        g.add_nodes_from(range(len(ids)))
        pos = {i: k for k, i in enumerate(ids)}
        if len(pos) != len(ids):
            raise ModelError(f"{where}: duplicate node ids")
        g.add_edges_from((pos[lk["source"]], pos[lk["target"]]) for lk in links)
        try:
            order = list(nx.lexicographical_topological_sort(g))
        except nx.NetworkXUnfeasible:
            cyc = nx.find_cycle(g)
            raise ModelError(f"{where}: graph has a cycle through node {ids[cyc[0][0]]!r}") from None
        rank = {k: r for r, k in enumerate(order)}
        ordered = [nodes[k] for k in order]
        names = tuple(str(nd.get("name", nd["id"])) for nd in ordered)
        if len(set(names)) != len(names):
            names = tuple(f"{nm}#{nd['id']}" for nm, nd in zip(names, ordered))
        edges = sorted({(rank[a], rank[b]) for a, b in g.edges})
        meta = data.get("graph") or {}
        return DAG(
            names=names, cost=[float(nd["cost_cpu"]) for nd in ordered], mem=[int(nd["cost_ram"]) for nd in ordered],
            edges=edges, constant=int(meta.get("constant", 0)),
            workspace=[int(nd.get("workspace", 0)) for nd in ordered],
            backward=[bool(nd.get("backward", False)) for nd in ordered],
            no_recompute=[bool(nd.get("no_recompute", False)) for nd in ordered],
            meta={"graph": str(meta.get("name", where))},
        )
    except KeyError as e:
        raise ModelError(f"{where}: node-link JSON lacks field {e.args[0]!r}") from None
    except (TypeError, ValueError) as e:
        raise ModelError(f"{where}: malformed node-link JSON: {e}") from None


def nodelink_from_dag(dag: DAG) -> dict:
    nodes = []
    for k in range(dag.n):
        nd = {"id": k, "name": dag.names[k], "cost_cpu": float(dag.cost[k]), "cost_ram": int(dag.mem[k]),
              "backward": bool(dag.backward[k])}
        if dag.workspace[k]:
            nd["workspace"] = int(dag.workspace[k])
        if dag.no_recompute[k]:
            nd["no_recompute"] = True
        nodes.append(nd)
    links = [{"source": int(a), "target": int(b)} for a, b in dag.edges]
    graph = {"name": dag.meta.get("graph", ""), "constant": int(dag.constant)}
    return {"directed": True, "multigraph": False, "graph": graph, "nodes": nodes, "links": links}


def dump_nodelink(dag: DAG) -> str:
    return json.dumps(nodelink_from_dag(dag), indent=1)


def save_nodelink(dag: DAG, path: str | os.PathLike) -> None:
    from .onnx_io import write_text_atomic
    write_text_atomic(path, dump_nodelink(dag) + "\n")


__all__ = ["load_nodelink", "dag_from_nodelink", "nodelink_from_dag", "dump_nodelink", "save_nodelink"]
