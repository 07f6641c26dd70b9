"""bn_net: BatchNorm-like training graphs (conv -> mul -> add -> relu per block); the MILP optimum against the bound with and
without chains: python milp_scan.py SEED DAGS BLOCKS"""
import sys, time
import numpy as np
from remc.ir.dag import DAG
from remc.ir.schedule import checkpoint_all
from remc.passes.bounds import gap_bound
from remc.backends.strategies import solve_milp

def bn_net(blocks, rng):
    names, cost, mem, edges = [], [], [], []
    def add(nm, c, m, ps):
        names.append(nm); cost.append(c); mem.append(m); edges.extend((p, len(names) - 1) for p in ps); return len(names) - 1
    x = add("x", 1.0, 2, [])
    prev = x; fw = []
    for k in range(blocks):
        s = int(rng.integers(3, 6))
        conv = add(f"conv{k}", float(rng.choice([10.0, 30.0])) * rng.uniform(0.5, 1.5), s + int(rng.integers(0, 2)), [prev])
        mul = add(f"mul{k}", float(rng.choice([1.0, 10.0])) * rng.uniform(0.5, 1.5), s, [conv])
        ad = add(f"add{k}", float(rng.choice([1.0, 10.0])) * rng.uniform(0.5, 1.5), s + int(rng.integers(-1, 1)), [mul])
        relu = add(f"relu{k}", float(rng.choice([1.0, 10.0])) * rng.uniform(0.5, 1.5), s, [ad])
        fw.append((prev, conv, relu)); prev = relu
    g = add("loss", 1.0, 1, [prev])
    for k in reversed(range(blocks)):
        inp, conv, relu = fw[k]
        gr = add(f"grelu{k}", 1.0, 2, [g, relu])
        gb = add(f"gbn{k}", 1.0, 2, [gr, conv])
        g = add(f"gconv{k}", 2.0, 2, [gb, inp])
    return DAG(tuple(names), np.array(cost), np.array(mem), np.array(edges), no_recompute=np.arange(len(names)) == 0)

if __name__ == '__main__':
    rng = np.random.default_rng(int(sys.argv[1]))
    for k in range(int(sys.argv[2])):
        dag = bn_net(int(sys.argv[3]), rng)
        for ratio in (0.9, 0.8, 0.7):
            budget = int(ratio * checkpoint_all(dag).peak(dag))
            t = time.time()
            try:
                opt = solve_milp(dag, budget, time_limit=60, gap=0.0, threads=1).report
            except Exception as e:
                print(dag.n, ratio, "err", type(e).__name__); continue
            ms = time.time() - t
            b = gap_bound(dag, budget).bound; b0 = gap_bound(dag, budget, chains=False).bound
            print(dag.n, ratio, opt.status, round(opt.cost, 3), "chain", round(b, 3), "plain", round(b0, 3), f"{ms:.1f}s", "BAD" if b > opt.cost + 1e-6 else "")
