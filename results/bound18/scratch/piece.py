"""GPT-2 / ResNet50 paper size at ONNX-node granularity, cut down: pickle it to /tmp/bound18/NAME.pkl.
python piece.py gpt2 N_LAYER   |   python piece.py resnet50 1,1"""
import pickle, sys
from remc import zoo
from remc.pipeline import State, compile_pipeline, run
m, arg = sys.argv[1], sys.argv[2]
cfg = dict(zoo.paper_config(m)); batch = cfg.pop("batch")
if m == "gpt2":
    cfg["n_layer"] = int(arg); name = f"gpt2_{arg}"
    for kv in sys.argv[3:]:
        k, v = kv.split("="); cfg[k] = int(v); name += f"_{k}{v}"
    model = zoo.export(m, batch, train=True, weights="shape-only", **cfg)
else:
    stages = tuple(int(x) for x in arg.split(",")); name = f"r50_{'_'.join(map(str, stages))}"
    model = zoo.export(m, batch, train=True, weights="shape-only", stages=stages, **cfg)
dag = run(compile_pipeline(granularity="fine")[:3], State(model=model)).dag
pickle.dump(dag, open(f"/tmp/bound18/{name}.pkl", "wb"))
print(name, dag.n, len(dag.edges))
