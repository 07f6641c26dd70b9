"""Scratch: time of CP-SAT phases per case, variants side by side."""
import math, sys, time, json
import remc.backends.cpsat as cp
from remc.backends.cpsat import CpSatOptions, solve_cpsat, cpsat_bound
from remc.backends.strategies import _stage_hint, _incumbent
from remc.passes.solver_api import Clock
from remc.ir.nodelink import load_nodelink
from remc.ir.schedule import checkpoint_all
from ortools.sat.python import cp_model

D = "/work/wt/moccasin-src/data/"
CASES = {"vgg16": "VGG16 (MLSys)_256_(224, 224, 3)_train_nx.json", "vgg19": "VGG19 (MLSys)_256_(224, 224, 3)_train_nx.json",
         "fcn8": "fcn_8_vgg (MLSys)_32_(416, 608, 3)_train_nx.json", "segnet": "segnet (MLSys)_32_(416, 608, 3)_train_nx.json",
         "unet": "vgg_unet (MLSys)_32_(416, 608, 3)_train_nx.json", "n100": "random_layered_n100_w0.27_nlv0.75_ed0.2_scd0.14.json",
         "mobilenet": "MobileNet (MLSys)_512_(224, 224, 3)_train_nx.json", "resnet": "ResNet50 (MLSys)_256_(224, 224, 3)_train_nx.json"}

def case(name, ratio):
    path = CASES[name] if name in CASES else name
    dag = load_nodelink(path if path.startswith("/") else D + path)
    budget = math.ceil(checkpoint_all(dag).peak(dag) * ratio)
    return dag, budget

def pct(dag, c): return f"+{100*(c/dag.total_cost-1):.3f}%"

def hint_of(dag, budget):
    clock = Clock(60.0)
    inc = _incumbent(dag, budget, clock, None)
    st = _stage_hint(dag, budget, inc, clock)
    return st or inc

if __name__ == "__main__":
    variant = sys.argv[1]
    for spec in sys.argv[2:]:
        name, r = spec.split(":")
        dag, budget = case(name, float(r))
        t0 = time.perf_counter()
        h = hint_of(dag, budget)
        th = time.perf_counter() - t0
        out = [f"{name}:{r} n={dag.n} hint {th:.1f}s {pct(dag, h.cost(dag)) if h else None}"]
        t1 = time.perf_counter()
        if variant == "cur":
            best, b, note = cp.cpsat_phase(dag, budget, incumbent=h, gap=1e-4, threads=2, seconds=60)
            out.append(f"cur {time.perf_counter()-t1:.1f}s {pct(dag,best.cost(dag))} bound {pct(dag,b)} [{note}]")
        elif variant.startswith("bound"):
            w = int(variant[5:] or 2)
            base = dag.total_cost
            target = h.cost(dag) - 1e-4 * (h.cost(dag) - base)
            res = cpsat_bound(dag, budget, CpSatOptions(time_limit=60, threads=w, copies=2), hint=h, stop_at=target)
            out.append(f"{variant} {time.perf_counter()-t1:.1f}s bound {pct(dag,res.bound)} {res.status} sched {pct(dag,res.schedule.cost(dag)) if res.schedule else None}")
        print(" | ".join(out), flush=True)
