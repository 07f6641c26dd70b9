import sys, time
sys.path.insert(0, "tests")
from test_evict import _layered
from remc.ir.schedule import checkpoint_all
from remc.passes import stagesearch as ss
for n, w, seed, ratio in [(60, 6, 1, 0.8), (80, 10, 1, 0.8), (80, 8, 2, 0.8), (100, 10, 3, 0.8), (60, 5, 4, 0.75), (120, 10, 2, 0.8)]:
    dag = _layered(n, w, seed)
    B = int(ratio * checkpoint_all(dag).peak(dag))
    out = []
    for keep, chunk in ((False, 0), (True, 0), (False, 64), (True, 64), (True, 16)):
        ss.FREE_KEEPS_FIRST, ss.REPAIR_CHUNK = keep, chunk
        st = ss.StageState(dag, B, checkpoint_all(dag).S)
        c = time.process_time()
        r = ss.repair_steps(st, None)
        out.append((keep, chunk, r, st.rows, round(st.total_cost() / dag.cost.sum() - 1, 3), round(time.process_time() - c, 2)))
    print(n, w, seed, ratio, out, flush=True)
