"""trace.py PKL START: each _kick_repair call of the repair (rows before, result, rows after, bytes over budget)."""
import pickle, sys
from remc.ir.schedule import checkpoint_all
from remc.passes import stagesearch as ss
d = pickle.load(open(sys.argv[1], "rb")); dag, B = d["dag"], d["budget"]; start = sys.argv[2]
S = checkpoint_all(dag).S if start == "ckpt" else d["start"].S if start == "warm" else ss.span_start(dag, int(start[4:]))
orig = ss._kick_repair
def wrap(st, floor, deadline):
    r0, e0, m0 = st.rows, st.excess(st.peak), int(st.peak.max()) - B
    ok = orig(st, floor, deadline)
    print(f"kick at rows {r0} excess {e0} max over {m0} -> {ok} rows {st.rows - r0} excess {st.excess(st.peak)} max over {int(st.peak.max()) - B}", flush=True)
    return ok
ss._kick_repair = wrap
st = ss.StageState(dag, B, S); print(ss.repair_steps(st, None), st.rows)
