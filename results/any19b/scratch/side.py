"""side.py PKL START [KICKS...]: the repair (repair_steps, no deadline) from START (ckpt: checkpoint-all; warm: the
captured warm start; spanN: least-memory span N) with stagesearch.KICKS set to each value: result, rows, CPU, cost."""
import pickle, sys, time
from remc.ir.schedule import checkpoint_all
from remc.passes import stagesearch as ss
d = pickle.load(open(sys.argv[1], "rb")); dag, B = d["dag"], d["budget"]
start = sys.argv[2]
S = checkpoint_all(dag).S if start == "ckpt" else d["start"].S if start == "warm" else ss.span_start(dag, int(start[4:]))
for k in [int(x) for x in sys.argv[3:]] or [0, ss.KICKS]:
    ss.KICKS = k
    st = ss.StageState(dag, B, S); r0 = st.rows; c = time.process_time()
    out = ss.repair_steps(st, None)
    print(f"{sys.argv[1].split('/')[-1]} {start} KICKS={k}: {out}, rows {st.rows - r0}, cpu {time.process_time() - c:.2f} s, "
          f"peak {int(st.peak.max()) / B:.4f}x, cost {st.total_cost() / dag.cost.sum():.4f}", flush=True)
