"""Map a schedule onto the covering MILP's columns (build_cover's semantics: z = [o_k < s], res = resident at the moment
o_k runs, comp = computed in (o_{k-1}, o_k]) and list the rows it violates: the model is a valid relaxation only if
every schedule within the budget maps to a point that meets every row at no more than its overhead."""
import numpy as np

from remc.ir.schedule import free_matrix
from remc.passes.bounds import _gaps
from remc.passes.coverbound import _pairs, build_cover


def mapcheck(dag, budget, R, S, depth):
    n = dag.n
    R = np.asarray(R, bool)
    S = np.asarray(S, bool)
    cm = build_cover(dag, budget, depth=depth, max_columns=None, kept=False)
    unit, G, K, over, excess, _ = _pairs(dag, budget)
    # (build_cover's index arithmetic, repeated)
    from remc.passes import coverbound as cb
    nov, npair = len(over), len(G)
    last = dag.last_use.astype(np.int64)
    u = np.searchsorted(over, last, side="right")
    E0, E1 = dag.edges[:, 0], dag.edges[:, 1]
    order = np.argsort(E1, kind="stable")
    pc = np.bincount(E1, minlength=n)
    pstart = np.r_[0, np.cumsum(pc)]
    gi = unit[G]
    cnt = pc[gi]
    jj = np.repeat(np.arange(npair), cnt)
    off = np.arange(len(jj)) - np.repeat(np.cumsum(cnt) - cnt, cnt)
    par = E0[order][pstart[gi][jj] + off]
    ok = (last[par] < over[K[jj]]) & (depth >= 1)
    jj, par = jj[ok], par[ok]
    kmax = np.full(n, -1, dtype=np.int64)
    np.maximum.at(kmax, par, K[jj])
    for d in range(2, depth + 1):
        cand = np.full(n, -1, dtype=np.int64)
        src = kmax[E1]
        reach = np.where(src >= u[E0], src, -1)
        np.maximum.at(cand, E0, reach)
        grown = cand > kmax
        kmax = np.maximum(kmax, cand)
        if not grown.any():
            break
    has = kmax >= u
    nres = np.where(has, kmax - u + 1, 0)
    res0 = npair + np.r_[0, np.cumsum(nres)[:-1]]
    comp0 = npair + int(nres.sum()) + np.r_[0, np.cumsum(nres)[:-1]]
    x = np.zeros(cm.model.num_col)
    gu, glo, ghi = _gaps(dag)
    free = ~dag.no_recompute[gu]
    gu, glo, ghi = gu[free], glo[free], ghi[free]
    assert (gu == unit).all()
    for j in range(npair):
        g, k = G[j], K[j]
        i, b = unit[g], ghi[g] + 1
        s = max(t for t in range(b + 1) if R[t, i])
        x[j] = float(over[k] < s)
    F = free_matrix(dag, R, S)
    for p in np.flatnonzero(has):
        for k in range(u[p], kmax[p] + 1):
            t = over[k]
            resident = (S[t, p] or R[t, p]) and p < t
            if resident and len(E0):
                es = np.flatnonzero((E0 == p) & (E1 < t))
                if F[t, es].any():
                    resident = False
            x[res0[p] + k - u[p]] = float(resident)
        for k in range(u[p] + 1, kmax[p] + 2):
            a = over[k - 1] + 1
            bb = over[k] if k < nov else n - 1
            x[comp0[p] + k - u[p] - 1] = float(R[a:bb + 1, p].any())
    m = cm.model
    A = m.A.scipy() if hasattr(m.A, "scipy") else m.A
    ax = A @ x
    bad = np.flatnonzero((ax < m.row_lower - 1e-9) | (ax > m.row_upper + 1e-9))
    overhead = float(R.sum(axis=0) @ dag.cost - dag.cost.sum())
    obj = float(m.col_cost @ x) * cm.cost_unit
    return cm, x, bad, ax, obj, overhead, dict(u=u, kmax=kmax, res0=res0, comp0=comp0, nres=nres, jj=jj, par=par,
                                               over=over, unit=unit, G=G, K=K, ghi=ghi, glo=glo)
