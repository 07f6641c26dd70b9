import time, numpy as np, scipy.sparse as sp
from remc.ir.nodelink import load_nodelink
from remc.passes import evict
def fwd(dag, kept, units, t, parents, cost_l):
    kl = kept.tolist()
    x = [0.0] * (t + 1); y = [0.0] * (t + 1)
    nan = float("nan")
    for i in range(t + 1):
        a = cost_l[i]; b = 1.0
        for p in parents[i]:
            if kl[p]:
                if x[p] == float("inf"): a = nan
                continue
            a += x[p]; b += y[p]
        x[i] = a; y[i] = b
    cap = 1e6 * float(dag.cost.sum()) + 1.0
    X = np.nan_to_num(np.array(x)[units], nan=np.inf, posinf=np.inf); Y = np.nan_to_num(np.array(y)[units], nan=np.inf, posinf=np.inf)
    return np.minimum(X, cap), np.minimum(Y, 1e9)
rng = np.random.default_rng(0)
for g in ["random_layered_n100_w0.27_nlv0.75_ed0.2_scd0.14.json", "random_layered_n1000_w0.31_nlv0.75_ed0.2_scd0.14.json", "segnet (MLSys)_32_(416, 608, 3)_train_nx.json"]:
    dag = load_nodelink("/work/wt/moccasin-src/data/" + g)
    P = evict._parent_matrix(dag)
    pl = [dag.preds[v].tolist() for v in range(dag.n)]
    cl = dag.cost.tolist()
    n = dag.n; tt = [0.0, 0.0]; bad = 0
    for k in range(200):
        t = int(rng.integers(1, n)); kept = rng.random(n) < 0.5; units = np.arange(t + 1)
        t0 = time.perf_counter(); a = evict._recompute_costs(dag, kept, units, t, P); tt[0] += time.perf_counter() - t0
        t0 = time.perf_counter(); b = fwd(dag, kept, units, t, pl, cl); tt[1] += time.perf_counter() - t0
        if not (np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1])): bad += 1
    print(g[:25], n, len(dag.edges), f"scipy {tt[0]/200*1e3:.3f} ms  python {tt[1]/200*1e3:.3f} ms  mismatches {bad}")
