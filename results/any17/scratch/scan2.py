import sys
sys.path.insert(0, "tests")
from test_evict import _layered
from remc.ir.schedule import checkpoint_all
from remc.passes import stagesearch as ss
orig = ss._best_repair
hits = []
def br(st, cands, floor, deadline=None, allow_worse=False, free=False):
    r = orig(st, cands, floor, deadline, allow_worse, free)
    if free and r:
        hits.append(len(cands))
    return r
ss._best_repair = br
for n, w, seed in [(40, 5, s) for s in range(6)] + [(60, 6, s) for s in range(6)]:
    for ratio in (0.7, 0.8, 0.9):
        dag = _layered(n, w, seed)
        B = int(ratio * checkpoint_all(dag).peak(dag))
        hits.clear()
        st = ss.StageState(dag, B, checkpoint_all(dag).S)
        r = ss.repair_steps(st, None)
        if hits:
            print(n, w, seed, ratio, r, st.rows, hits, flush=True)
