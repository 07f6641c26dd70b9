
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
