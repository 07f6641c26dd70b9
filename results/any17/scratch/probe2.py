import sys, time
sys.path.insert(0, sys.argv[1] + "/tests")
from test_evict import _layered, _FakeClock
from remc.ir.schedule import checkpoint_all
from remc.passes import evict, stagesearch
stagesearch.improve = lambda *a, **k: None
for n, w, seed, ratio in [(80, 10, 1, 0.8)]:
    dag = _layered(n, w, seed)
    B = int(ratio * checkpoint_all(dag).peak(dag))
    clock = _FakeClock(1.0); evict.time = clock; stagesearch.time = clock
    info = {}
    c = time.process_time()
    out = evict.evict_search(dag, B, deadline=1e9, info=info)
    print(evict.__file__, n, w, seed, ratio, out is not None and out[3], info.get("first_fit_seconds"), round(time.process_time() - c, 2))
