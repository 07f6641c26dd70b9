"""Own random layered graphs (tools/bench_moccasin.random_layered, Moccasin's family) at seeds 2201+: gen.py OUTDIR N:SEED..."""
import json
import sys
from pathlib import Path

sys.path.insert(0, "/work/wt/pub22/tools")
from bench_moccasin import random_layered  # noqa: E402

out = Path(sys.argv[1])
for spec in sys.argv[2:]:
    n, seed = map(int, spec.split(":"))
    g = random_layered(n, seed)
    (out / f"{g['graph']['name']}.json").write_text(json.dumps(g))
    print(g["graph"]["name"])
