"""Run tests/test_chains.py (and others named) against mutants of the chain charge, patched in at run time:
python mutants.py NAME [pytest args]; NAME in size, child, strong, nested, more."""
import sys
import numpy as np
import remc.passes.bounds as B

orig_chains, orig_parents_init, orig_nested = B._chains, B._Parents.__init__, B._nested_ascent


def chains_variant(size=True, single=True, factor=1.0):
    def _chains(dag):
        n = dag.n
        extra = np.zeros(n)
        tree = {}
        nk = np.bincount(dag.edges[:, 0], minlength=n) if len(dag.edges) else np.zeros(n, dtype=np.int64)
        ok = ((nk == 1) if single else (nk >= 1)) & ~dag.no_recompute
        for i in range(n):
            if dag.mem[i] <= 0:
                continue
            members, frontier = [], [i]
            while frontier:
                nxt = [p for v in frontier for p in dag.preds[v].tolist() if ok[p] and (dag.mem[p] >= dag.mem[i] or not size)
                       and p not in members]
                members += nxt
                frontier = nxt
            if members:
                tree[i] = frozenset(members)
                extra[i] = factor * float(dag.cost[members].sum())
        return extra, tree
    return _chains


name = sys.argv[1]
if name == "size":
    B._chains = chains_variant(size=False)
elif name == "child":
    B._chains = chains_variant(single=False)
elif name == "more":
    B._chains = chains_variant(factor=1.1)
elif name == "strong":
    def init(self, *a, **k):
        a = a[:8]
        orig_parents_init(self, *a)
    B._Parents.__init__ = init
elif name == "nested":
    def nested(excess, rows, c, G, T, a, nest, *rest, **kw):
        extra, _ = orig_chains(nest._dag)
        return orig_nested(excess, rows, c + extra[nest.root_unit], G, T, a, nest, *rest, **kw)
    orig_init = B._Nested.__init__
    def ninit(self, dag, *a, **k):
        orig_init(self, dag, *a, **k)
        self._dag = dag
    B._Nested.__init__ = ninit
    B._nested_ascent = nested
import pytest
sys.exit(pytest.main(["-n", "0", "-q", "-x", "-p", "no:cacheprovider"] + (sys.argv[2:] or ["tests/test_chains.py"])))
