"""remc and Moccasin side by side on Moccasin's published graphs and on random layered graphs of the same family.

Protocol (Moccasin's ``main.py``): budget = ceil(ratio x the peak of the file's own topological order, every
node computed once and kept until its last use), ratios 0.8 and 0.9. remc runs as a user runs it,
``remc solve G --budget B --strategy S --time-limit T --json`` (S = checkmate, approx, cpsat); Moccasin runs
its own ``remat`` with the arguments of its ``main.py`` (C=2, phase 1, 16 CP-SAT workers) in a separate
Python environment that has its OR-Tools. Cases run one tool at a time, so the wall times compare on the
same machine.

Moccasin's source and graphs are not part of remc (GPL-3.0): get them with ``git clone`` of
haoming-codes/moccasin (the repository its paper's artifact points to), then set up its environment::

    python3 -m venv /work/wt/moccasin-venv
    /work/wt/moccasin-venv/bin/pip install ortools==9.7.2996 networkx==3.2.1 numpy pandas

Moccasin pins no versions; OR-Tools 9.7.2996 and networkx 3.2.1 are the releases current when its code was
last changed (autumn 2023); networkx 3.6 no longer reads its Checkmate files (links under "links").

    nice -n 10 python tools/bench_moccasin.py --moccasin ../moccasin-src --python ../moccasin-venv/bin/python \
        --ratios 0.8 0.9 --graphs all --random 100:1 100:2 --time-limit 300 --moccasin-timeout 300 \
        --out results/bench_moccasin.json --markdown results/bench_moccasin.md

``--graphs`` picks published graphs by substring (``all`` = the 11 of Moccasin's benchmark: 7 Checkmate
training graphs and the 4 random layered ones); ``--random N:SEED`` adds generated graphs (written next to
the JSON output). ``--tools`` chooses among checkmate, approx, cpsat (remc's strategies) and moccasin.
``--render`` rebuilds the Markdown from a JSON file. Costs are reported as +x% over computing every node once
(the sum of all costs).

Times: each tool's cell ends with the wall clock of its whole subprocess (Python start-up, imports, reading
the graph, the solve, and for remc the plan's generation and validation), then in brackets the tool's own
count: remc's report ``seconds`` (the strategy, every phase), Moccasin's ``remat`` call. The last column,
Moccasin's wall over remc checkmate's, compares the wall clocks.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from remc.ir.nodelink import load_nodelink
from remc.ir.schedule import checkpoint_all

CHECKMATE_GRAPHS = ("VGG16", "VGG19", "MobileNet", "ResNet50", "fcn_8_vgg", "segnet", "vgg_unet")
TOOLS = ("checkmate", "approx", "cpsat", "moccasin", "checkmate-base")
"""``checkmate-base``: checkmate of another remc install (``--base-python``, e.g. a frozen copy of main), run
right before this one's on the same case, so that two versions compare in one run."""

# Runs Moccasin's ``remat`` exactly as its main.py does, with the timeout (seconds per phase; main.py uses
# 3600 x (1 if n >= 500 else 0.5)) and worker count as arguments, and prints one JSON line. ``rockmate`` is
# imported by cp.py only for its export to Rockmate schedules, which is not used here: a stub stands in.
MOCCASIN_DRIVER = r'''
import json, math, sys, time, types
src, graph_path, ratio, timeout, workers, out_dir = sys.argv[1:7]
stub = types.ModuleType("rockmate.def_op")
stub.RunOp = stub.DelOp = stub.OpSchedule = object
sys.modules["rockmate"] = types.ModuleType("rockmate")
sys.modules["rockmate.def_op"] = stub
sys.path.insert(0, src)
import networkx as nx
from ortools.sat.python import cp_model
if workers != "default":
    _solve = cp_model.CpSolver.Solve
    def _solve_with_workers(self, *a, **k):
        self.parameters.num_search_workers = int(workers)
        return _solve(self, *a, **k)
    cp_model.CpSolver.Solve = _solve_with_workers
from moccasin.cp import remat
from moccasin.util import get_mem_from_schedule
with open(graph_path) as f:
    data = json.load(f)
random_layered = "random_layered" in graph_path
if random_layered:  # main.py: attrs={"source": "0", "target": "1"}; nodes are keyed by "name"
    G = nx.DiGraph(name=data["graph"]["name"])
    G.graph.update(data["graph"])
    for nd in data["nodes"]:
        G.add_node(nd["name"], **{k: v for k, v in nd.items() if k != "name"})
    G.add_edges_from((lk["0"], lk["1"]) for lk in data["links"])
    for v, d in G.nodes(data=True):
        d["cost_ram"] = d.pop("out_cost")
        d["cost_cpu"] = d.pop("duration")
else:
    G = nx.node_link_graph(data, multigraph=False, directed=True)
topo_order = G.graph["order"] if "order" in G.graph else list(nx.topological_sort(G))
topo_mem, topo_cpu = get_mem_from_schedule(G, topo_order)
B = math.ceil(topo_mem * float(ratio))
t0 = time.time()
res = remat(G=G, B=B, C=2, timeout=float(timeout), discretized=True, reservoir=True, use_end_global=False,
            use_stage=True, topo_order=topo_order, phase1=True, use_interval_length_domain=True, use_gcd=True,
            reservoir_option=2, log_dir=out_dir)
out = {"status": res.get("status"), "budget": B, "topo_mem": topo_mem, "total_cost": topo_cpu,
       "solve_seconds": time.time() - t0}
if "schedule" in res:
    out.update(cost=res["cpu_schedule"], peak=res["mem_schedule"], objective=res["obj_val"],
               footprint=res["mem_footprint"], computations=len(res["schedule"]))
print("MOCCASIN_RESULT " + json.dumps(out), flush=True)
'''


def published_graphs(data_dir: Path, select: list[str]) -> list[Path]:
    """Moccasin's 11 benchmark graphs (training graphs and random layered), filtered by substrings."""
    files = sorted(p for p in data_dir.glob("*.json")
                   if p.name.startswith("random_layered") or (p.name.endswith("_train_nx.json")
                                                              and p.name.split(" ")[0] in CHECKMATE_GRAPHS))
    if select == ["all"]:
        return files
    return [p for p in files if any(s.lower() in p.name.lower() for s in select)]


def random_layered(n: int, seed: int, w: float = 0.3, nlv: float = 0.75, ed: float = 0.2,
                   scd: float = 0.14) -> dict:
    """A random layered DAG in the dialect of Moccasin's published ``random_layered_*`` files.

    Moccasin does not publish its generator (its files cite Appendix A of Gagrani et al. 2022, "Neural
    Topological Ordering for Computation Graphs"); this one follows the published files' statistics: one
    source (node 0) and one sink (node 1); about sqrt(n) / (2 w) layers between them whose widths vary
    uniformly by +-nlv around the mean; each pair of nodes in consecutive layers linked with probability
    ed, with every node given at least one input from the layer above and one user in the layer below;
    skip links from a node to a random node two or more layers down, scd x layers / 8 of them per node on
    average; output bytes exponential with mean 2000 in steps of 10 (10..8000), durations uniform 1..1000,
    source and sink of duration 0; ``graph.order`` a random topological order (Kahn's algorithm, random
    ready node), as the published orders are.
    """
    rng = random.Random(seed)
    inner = n - 2
    n_layers = max(1, min(inner, round(math.sqrt(n) / (2 * w))))
    raw = [rng.uniform(1 - nlv, 1 + nlv) for _ in range(n_layers)]
    widths = [max(1, round(inner * r / sum(raw))) for r in raw]
    while sum(widths) != inner:  # fix rounding, keeping every layer non-empty
        k = rng.randrange(n_layers)
        if sum(widths) > inner and widths[k] > 1:
            widths[k] -= 1
        elif sum(widths) < inner:
            widths[k] += 1
    layers: list[list[int]] = [[0]]
    nxt = 2
    for wd in widths:
        layers.append(list(range(nxt, nxt + wd)))
        nxt += wd
    layers.append([1])
    edges: set[tuple[int, int]] = set()
    for a, b in zip(layers, layers[1:]):
        for u in a:
            for v in b:
                if rng.random() < ed or len(a) == 1 or len(b) == 1:
                    edges.add((u, v))
        for v in b:  # an input from the layer above
            if not any((u, v) in edges for u in a):
                edges.add((rng.choice(a), v))
        for u in a:  # a user in the layer below
            if not any((u, v) in edges for v in b):
                edges.add((u, rng.choice(b)))
    layer_of = {v: i for i, lay in enumerate(layers) for v in lay}
    per_node = scd * n_layers / 8
    for i, lay in enumerate(layers[1:-3], start=1):
        later = [v for lay2 in layers[i + 2:-1] for v in lay2]
        for u in lay:
            k = sum(1 for _ in range(4) if rng.random() < per_node / 4)
            for _ in range(k):
                edges.add((u, rng.choice(later)))
    mem = {v: min(8000, max(10, 10 * round(rng.expovariate(1 / 2000) / 10))) for v in range(n)}
    dur = {v: (0 if v in (0, 1) else rng.randint(1, 1000)) for v in range(n)}
    succ: dict[int, list[int]] = {v: [] for v in range(n)}
    indeg = {v: 0 for v in range(n)}
    for u, v in sorted(edges):
        succ[u].append(v)
        indeg[v] += 1
    ready, order = [0], []
    while ready:
        v = ready.pop(rng.randrange(len(ready)))
        order.append(v)
        for x in succ[v]:
            indeg[x] -= 1
            if indeg[x] == 0:
                ready.append(x)
    assert len(order) == n, "generator made a cycle"
    name = f"random_layered_n{n}_w{w}_nlv{nlv}_ed{ed}_scd{scd}_seed{seed}"
    graph = {"name": name, "source_node": 0, "target_node": 1, "node_output_cost_tag": "out_cost",
             "node_param_cost_tag": "param_cost", "node_duration_tag": "duration",
             "pos": {str(v): [0, -layer_of[v]] for v in range(n)}, "order": order}
    nodes = [{"out_cost": mem[v], "param_cost": 0, "duration": dur[v], "name": v} for v in range(n)]
    links = [{"0": u, "1": v} for u, v in sorted(edges)]
    return {"directed": True, "multigraph": False, "graph": graph, "nodes": nodes, "links": links}


def run_group(cmd: list[str], timeout: float, cwd: str | None = None) -> tuple[int | None, str, str, float]:
    """Run a command in its own process group; kill the whole group at ``timeout``. Returns rc (None when
    killed), stdout, stderr and wall seconds."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=cwd,
                            start_new_session=True)
    try:
        out, err = proc.communicate(timeout=timeout)
        rc: int | None = proc.returncode
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
        rc = None
    return rc, out, err, time.perf_counter() - t0


def run_remc(graph: Path, budget: int, strategy: str, time_limit: float, grace: float,
             threads: int | None = None, python: str | None = None) -> dict:
    cmd = [python or sys.executable, "-m", "remc.cli", "solve", str(graph), "--budget", str(budget), "--strategy", strategy,
           "--time-limit", str(time_limit), "--json"] + (["--threads", str(threads)] if threads else [])
    rc, out, err, wall = run_group(cmd, time_limit + grace)
    row: dict[str, Any] = {"wall": wall}
    if rc is None:
        return row | {"status": f"killed after {wall:.0f} s"}
    if rc != 0:
        msg = (err.strip().splitlines() or ["?"])[-1][:300]
        return row | {"status": _failure(msg), "error": msg}
    rep = json.loads(out)
    return row | {"status": rep["status"], "cost": rep["cost"], "peak": rep["peak"], "gap": rep.get("gap"),
                  "bound": rep.get("bound"), "seconds": rep.get("seconds")}


def _failure(msg: str) -> str:
    """How a failed remc run is listed: a proven infeasibility, or no schedule (anything else; a time-out's
    message also quotes a proven lower bound on the least budget, which proves nothing about this one)."""
    if "no schedule within" in msg and "time limit" in msg:
        return "no schedule"
    if "proven lower bound" in msg or "no schedule of this graph can need less" in msg or "(proven:" in msg:
        return "infeasible (proven)"
    return "infeasible (C=3)" if "computations per unit fits" in msg else "no schedule"


def run_moccasin(graph: Path, ratio: float, src: Path, python: str, timeout: float, workers: str) -> dict:
    with tempfile.TemporaryDirectory(prefix="moccasin-") as tmp:
        driver = Path(tmp) / "driver.py"
        driver.write_text(MOCCASIN_DRIVER)
        cmd = [python, str(driver), str(src), str(graph.resolve()), str(ratio), str(timeout), workers, tmp]
        rc, out, err, wall = run_group(cmd, 2 * timeout + 120, cwd=tmp)
    row: dict[str, Any] = {"wall": wall}
    lines = [ln for ln in out.splitlines() if ln.startswith("MOCCASIN_RESULT ")]
    if rc is None:
        return row | {"status": f"killed after {wall:.0f} s"}
    if rc != 0 or not lines:
        return row | {"status": "error", "error": (err.strip().splitlines() or ["?"])[-1][:300]}
    res = json.loads(lines[-1][len("MOCCASIN_RESULT "):])
    return row | {k: v for k, v in res.items()} | {"status": res["status"].lower()}


def bench_case(graph: Path, ratio: float, tools: list[str], args: argparse.Namespace) -> dict:
    dag = load_nodelink(graph)
    peak = checkpoint_all(dag).peak(dag)
    budget = math.ceil(peak * ratio)
    case: dict[str, Any] = {"graph": dag.meta["graph"], "file": graph.name, "n": dag.n, "ratio": ratio,
                            "order": dag.meta["order"], "topo_peak": peak, "budget": budget,
                            "total_cost": dag.total_cost, "tools": {}}
    for tool in tools:
        if tool == "moccasin":
            row = run_moccasin(graph, ratio, args.moccasin / "src", args.python, args.moccasin_timeout, args.workers)
            if "budget" in row and row["budget"] != budget:
                row["note"] = f"Moccasin's budget {row['budget']} differs from remc's {budget}"
        elif tool == "checkmate-base":
            row = run_remc(graph, budget, "checkmate", args.time_limit, args.grace, python=args.base_python)
        else:
            row = run_remc(graph, budget, tool, args.time_limit, args.grace,
                           args.cpsat_threads if tool == "cpsat" else None)
        if row.get("cost") is not None:
            row["over"] = row["cost"] / dag.total_cost - 1 if dag.total_cost else 0.0
            row["fits"] = row["peak"] <= budget
        case["tools"][tool] = row
        print(json.dumps({"graph": case["graph"], "ratio": ratio, "tool": tool} | row, default=float), flush=True)
    return case


def _cell(row: dict | None, tool: str = "") -> str:
    if row is None:
        return "not run"
    st = row["status"]
    if st in ("error", "no schedule") and row.get("error"):  # rows written before failures were classified
        st = _failure(row["error"])
    if tool == "cpsat" and row.get("cost") is not None:
        # optimal = proven for at most 3 computations per unit; the bound of its report is the sum of costs
        gap_free = dict(row, gap=None)
        cell = _cell(gap_free)
        return cell if "(C=" in cell else cell.replace("optimal", "optimal (C=3)", 1)
    if row.get("cost") is None:
        return st if st.startswith("killed") else f"{st} ({row['wall']:.1f} s)"
    gap = row.get("gap")
    g = "" if gap is None else (", gap inf" if gap == float("inf") else f", gap {100 * gap:.2f}%")
    fit = "" if row.get("fits", True) else f", **peak {row['peak']} over budget**"
    inner = row.get("seconds", row.get("solve_seconds"))
    own = "" if inner is None else f" ({'solve' if tool != 'moccasin' else 'remat'} {inner:.1f} s)"
    return f"{st} +{100 * row['over']:.3f}%{g}{fit}, {row['wall']:.1f} s{own}"


def _ratio(case: dict) -> str:
    """Moccasin's wall time over remc checkmate's (both subprocess wall clocks, start-up included), where
    remc proved its result (optimal, or infeasible); a lower bound on the ratio ('>') where Moccasin proved
    nothing in its time (its wall is then its time limit), none where remc proved nothing."""
    m, r = case["tools"].get("moccasin"), case["tools"].get("checkmate")
    if not m or not r or not r.get("wall"):
        return ""
    if not (r["status"] == "optimal" or r["status"].startswith("infeasible (proven")):
        return "- (remc: no proof)"
    x = m["wall"] / r["wall"]
    return f"{x:.1f}x" if m["status"] in ("optimal", "infeasible") else f">{x:.1f}x (Moccasin: no proof)"


def _base_ratio(case: dict) -> str:
    """checkmate-base's wall over checkmate's, where both have a result."""
    b, r = case["tools"].get("checkmate-base"), case["tools"].get("checkmate")
    if not b or not r or not r.get("wall") or not b.get("wall"):
        return ""
    return f"{b['wall'] / r['wall']:.1f}x"


def render(result: dict) -> str:
    tools = result["tools"]
    names = {"moccasin": "Moccasin", "checkmate-base": f"remc checkmate ({result.get('base_label') or 'base'})"}
    both = "moccasin" in tools and "checkmate" in tools
    base = "checkmate-base" in tools and "checkmate" in tools
    head = "| graph | n | ratio | budget | " + " | ".join(names.get(t, f"remc {t}") for t in tools) \
        + (" | Moccasin wall / checkmate wall" if both else "") \
        + (f" | {names['checkmate-base'][5:]} wall / checkmate wall" if base else "") + " |"
    lines = [head, "|" + "---|" * (4 + len(tools) + both + base)]
    for c in result["cases"]:
        lines.append(f"| {c['graph']} | {c['n']} | {c['ratio']} | {c['budget']} | "
                     + " | ".join(_cell(c["tools"].get(t), t) for t in tools)
                     + (f" | {_ratio(c)}" if both else "") + (f" | {_base_ratio(c)}" if base else "") + " |")
    return "\n".join(lines) + "\n"


def merge(results: list[dict]) -> dict:
    """One result with the tools of every run side by side, cases matched by graph and ratio."""
    out: dict[str, Any] = {"tools": [], "cases": []}
    index: dict[tuple[str, float], dict] = {}
    for res in results:
        out["base_label"] = out.get("base_label") or res.get("base_label")
        out["tools"] += [t for t in res["tools"] if t not in out["tools"]]
        for c in res["cases"]:
            key = (c["graph"], c["ratio"])
            if key not in index:
                index[key] = dict(c, tools={})
                out["cases"].append(index[key])
            index[key]["tools"].update(c["tools"])
    return out


def write_atomic(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    tmp.write_text(text)
    tmp.replace(path)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--moccasin", type=Path, help="Moccasin's source tree (with data/ and src/moccasin)")
    p.add_argument("--python", default="python3", help="Python of the environment that has Moccasin's OR-Tools")
    p.add_argument("--graphs", nargs="*", default=["all"], help="published graphs by substring, or 'all'")
    p.add_argument("--random", nargs="*", default=[], metavar="N:SEED", help="generated random layered graphs")
    p.add_argument("--ratios", nargs="+", type=float, default=[0.8, 0.9])
    p.add_argument("--tools", default=",".join(TOOLS))
    p.add_argument("--time-limit", type=float, default=300.0, help="remc's --time-limit")
    p.add_argument("--grace", type=float, default=120.0, help="seconds past the time limit before remc is killed")
    p.add_argument("--moccasin-timeout", type=float, default=300.0, help="Moccasin's CP-SAT limit per phase")
    p.add_argument("--workers", default="default", help="CP-SAT workers for Moccasin (default: its own, 16)")
    p.add_argument("--base-python", help="Python of another remc install for the checkmate-base tool")
    p.add_argument("--base-label", default="base", help="its name in the table (e.g. main 1234abc)")
    p.add_argument("--cpsat-threads", type=int, help="remc --strategy cpsat: --threads (default: the CPU count)")
    p.add_argument("--out", type=Path, default=Path("results/bench_moccasin.json"))
    p.add_argument("--markdown", type=Path)
    p.add_argument("--render", type=Path, nargs="+",
                   help="print the Markdown table of these JSON results (tools of the same cases side by side)")
    args = p.parse_args(argv)
    if args.render:
        print(render(merge([json.loads(p.read_text()) for p in args.render])), end="")
        return 0
    if "/" in args.python:  # Moccasin runs in a temporary folder: relative paths would not resolve there
        args.python = str(Path(args.python).absolute())
    if args.moccasin:
        args.moccasin = args.moccasin.absolute()
    tools = [t for t in args.tools.split(",") if t]
    if any(t not in TOOLS for t in tools):
        p.error(f"--tools: choose among {', '.join(TOOLS)}")
    if "checkmate-base" in tools and not args.base_python:
        p.error("--base-python is needed for the checkmate-base tool")
    if args.base_python and "/" in args.base_python:
        args.base_python = str(Path(args.base_python).absolute())
    graphs = published_graphs(args.moccasin / "data", args.graphs) if args.moccasin and args.graphs else []
    if "moccasin" in tools and not args.moccasin:
        p.error("--moccasin DIR is needed to run Moccasin")
    gen_dir = args.out.parent / "bench_moccasin_graphs"
    for spec in args.random:
        n, seed = (int(x) for x in spec.split(":"))
        data = random_layered(n, seed)
        gen_dir.mkdir(parents=True, exist_ok=True)
        path = gen_dir / f"{data['graph']['name']}.json"
        path.write_text(json.dumps(data))
        graphs.append(path)
    result: dict[str, Any] = {"command": " ".join([Path(sys.argv[0]).name] + sys.argv[1:]), "tools": tools,
                              "time_limit": args.time_limit, "moccasin_timeout": args.moccasin_timeout,
                              "workers": args.workers, "base_label": args.base_label, "cases": []}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    for graph in graphs:
        for ratio in args.ratios:
            result["cases"].append(bench_case(graph, ratio, tools, args))
            write_atomic(args.out, json.dumps(result, indent=1, default=float) + "\n")
    table = render(result)
    if args.markdown:
        write_atomic(args.markdown, table)
    print(table, end="")
    return 0


if __name__ == "__main__":
    sys.exit(main())
