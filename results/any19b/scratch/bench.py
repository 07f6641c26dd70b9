"""bench.py OUT.jsonl SPEC...: EvictSearch.feasible (the stage search's producers while nothing fits; a 600 s deadline,
so that eviction settings give up as in a solve) with (stagesearch.KICKS, SPAN_KICKS) from VARIANTS (default "0:0 12:0"), alternately, on each graph and
ratio. SPEC: own:PATH (nodelink json), moc:N:SEED (tools/bench_moccasin.random_layered), lay:N:W:SEED
(tests/test_evict._layered); ratios from RATIOS env (default 0.7 0.8 0.9) of checkpoint-all's peak. Per run: the
producer that fitted, rows, CPU s, cost over computing each unit once, and the repair from checkpoint-all alone
(result, rows)."""
import json, math, os, sys, time, importlib.util
import numpy as np
from remc.ir.nodelink import load_nodelink
from remc.ir.schedule import checkpoint_all
from remc.passes import stagesearch as ss
from remc.passes.evict import EvictSearch
root = "/work/wt/any19b"

def load(spec):
    kind, *a = spec.split(":")
    if kind == "own":
        return os.path.basename(a[0]), load_nodelink(a[0])
    if kind == "moc":
        sp = importlib.util.spec_from_file_location("bm", f"{root}/tools/bench_moccasin.py"); bm = importlib.util.module_from_spec(sp); sp.loader.exec_module(bm)
        data = bm.random_layered(int(a[0]), int(a[1])); p = f"/tmp/any19b/moc_{a[0]}_{a[1]}.json"; open(p, "w").write(json.dumps(data))
        return f"moc_n{a[0]}_s{a[1]}", load_nodelink(p)
    if kind == "pkl":  # a captured solve (results/any19/scratch/capture.py): its own budget, ratio 0
        import pickle
        d = pickle.load(open(a[0], "rb")); return os.path.basename(a[0]), (d["dag"], d["budget"])
    if kind == "lay":
        sys.path.insert(0, f"{root}/tests"); from test_evict import _layered
        return f"lay_n{a[0]}_w{a[1]}_s{a[2]}", _layered(int(a[0]), int(a[1]), int(a[2]))

out = open(sys.argv[1], "a")
for spec in sys.argv[2:]:
    name, dag = load(spec)
    fixed = None
    if isinstance(dag, tuple):
        dag, fixed = dag
    peak = checkpoint_all(dag).peak(dag)
    for ratio in [float(x) for x in os.environ.get("RATIOS", "0.7 0.8 0.9").split()] if fixed is None else [0.0]:
        B = fixed if fixed is not None else math.ceil(ratio * peak)
        for var in os.environ.get("VARIANTS", "0:0 12:0").split():
            k, sk = (int(x) for x in var.split(":"))
            ss.KICKS, ss.SPAN_KICKS = k, bool(sk)
            st = ss.StageState(dag, B, checkpoint_all(dag).S); r0 = st.rows; c = time.process_time()
            rep = ss.repair_steps(st, None); rep_rows, rep_cpu = st.rows - r0, time.process_time() - c
            rep_cost = st.total_cost() / dag.cost.sum() if rep == "fit" else None
            s = EvictSearch(dag, B); got = []
            c = time.process_time()
            s.feasible(time.perf_counter() + 600, lambda r: got.append(r) if r.result is not None else None)
            cpu = time.process_time() - c
            res = got[0] if got else None
            cost = None
            if res is not None:
                R = res.result.R if hasattr(res.result, "R") else res.result[0]
                cost = float((np.asarray(R, dtype=float) @ dag.cost).sum() / dag.cost.sum()) if hasattr(res.result, "R") else None
            rec = dict(graph=name, n=dag.n, ratio=ratio, kicks=k, span_kicks=sk, repair=rep, repair_rows=rep_rows, repair_cpu=round(rep_cpu, 2),
                       repair_cost=rep_cost, found=None if res is None else getattr(res, "name", type(res).__name__), rows=s.rows, cpu=round(cpu, 2), cost=cost,
                       load=os.getloadavg()[0])
            print(json.dumps(rec), flush=True); out.write(json.dumps(rec) + "\n"); out.flush()
