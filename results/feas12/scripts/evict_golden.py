"""Fingerprints of every eviction setting's schedule on small and mid-size random layered graphs, to compare
two versions of passes/evict.py (run with each venv's python, diff the outputs):
python results/feas12/scripts/evict_golden.py > out.txt"""
import hashlib, sys
sys.path.insert(0, 'tools')
from layered import layered_dag
from remc.ir.schedule import checkpoint_all
from remc.passes import evict
for n, seeds in ((120, range(6)), (250, range(3)), (400, range(2))):
    for seed in seeds:
        dag = layered_dag(n, 10, seed)
        for ratio in (0.6, 0.7, 0.8, 0.9):
            budget = int(ratio * checkpoint_all(dag).peak(dag))
            for w, c, net in evict.VARIANTS:
                st = evict.evict_schedule(dag, budget, weight=w, closure=c, net=net)
                h = None if st is None else hashlib.sha1(st.S.tobytes() + st.R.tobytes()).hexdigest()[:12]
                cost = None if st is None else round(st.total_cost(), 6)
                print(n, seed, ratio, w, c, net, cost, h, flush=True)
