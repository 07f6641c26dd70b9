"""warm.py PKL: the captured solve's warm start (a previous fit round's schedule) repaired alone, no deadline."""
import pickle, sys, time
from remc.passes.stagesearch import StageState, repair_steps
d = pickle.load(open(sys.argv[1], "rb")); s = d["start"]; dag = d["dag"]
print(f"start peak {s.peak(dag)} = {s.peak(dag) / d['budget']:.4f}x the budget {d['budget']}")
c = time.process_time()
st = StageState(dag, d["budget"], s.S)
out = repair_steps(st, None, None)
print(f"repair: {out}, rows {st.rows}, cpu {time.process_time() - c:.1f} s, peak {int(st.peak.max()) / d['budget']:.4f}x")
