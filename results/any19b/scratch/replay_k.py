"""replay_k.py ARGS...: results/any19/scratch/replay.py with passes/stagesearch.KICKS set from the KICKS environment
variable (0: lead's repair, no kicks)."""
import os, runpy, sys
from remc.passes import stagesearch
stagesearch.KICKS = int(os.environ.get("KICKS", stagesearch.KICKS))
print("KICKS", stagesearch.KICKS)
sys.argv = ["replay.py", *sys.argv[1:]]
runpy.run_path("/work/wt/any19b/results/any19/scratch/replay.py", run_name="__main__")
