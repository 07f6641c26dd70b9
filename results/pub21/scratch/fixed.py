"""User+sys CPU seconds of whole processes, alternating main (pub21-base) and the branch: `remc solve` on VGG16 at
0.8 and 0.9 (checkmate, 60 s) and `python -c 'import numpy'`; fixed.py ROUNDS (from a folder with no remc/)."""
import os
import statistics
import subprocess
import sys

V = "/work/wt/moccasin-src/data/VGG16 (MLSys)_256_(224, 224, 3)_train_nx.json"
cases = {"numpy": ["-c", "import numpy"],
         "solve 0.8": ["-m", "remc.cli", "solve", V, "--budget", "12660087194", "--strategy", "checkmate",
                       "--time-limit", "60", "--json"],
         "solve 0.9": ["-m", "remc.cli", "solve", V, "--budget", "14242598093", "--strategy", "checkmate",
                       "--time-limit", "60", "--json"]}
env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
got: dict = {}
for _ in range(int(sys.argv[1])):
    for name, args in cases.items():
        for tree in ("pub21-base", "pub21"):
            before = os.times()
            subprocess.run([f"/work/wt/{tree}/.venv/bin/python", *args], env=env, capture_output=True)
            after = os.times()
            got.setdefault((name, tree), []).append(after.children_user - before.children_user
                                                    + after.children_system - before.children_system)
for (name, tree), v in got.items():
    print(f"{name:10s} {tree:10s} median {statistics.median(v):.3f} min {min(v):.3f} s of CPU ({len(v)} runs)")
