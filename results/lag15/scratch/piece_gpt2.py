"""GPT-2 paper size at ONNX-node granularity cut down to N_LAYER layers: pickle it. python piece_gpt2.py 1"""
import pickle, sys
from remc import zoo
from remc.pipeline import State, compile_pipeline, run
k = int(sys.argv[1])
cfg = dict(zoo.paper_config("gpt2")); batch = cfg.pop("batch"); cfg["n_layer"] = k
model = zoo.export("gpt2", batch, train=True, weights="shape-only", **cfg)
dag = run(compile_pipeline(granularity="fine")[:3], State(model=model)).dag
pickle.dump(dag, open(f"/tmp/lag15/gpt2_{k}.pkl", "wb"))
print(k, dag.n, len(dag.edges))
