"""ResNet50 paper size at ONNX-node granularity cut down to STAGES blocks: pickle it. python piece.py 1,1"""
import pickle, sys
from remc import zoo
from remc.pipeline import State, compile_pipeline, run
stages = tuple(int(x) for x in sys.argv[1].split(","))
cfg = dict(zoo.paper_config("resnet50")); batch = cfg.pop("batch")
model = zoo.export("resnet50", batch, train=True, weights="shape-only", stages=stages, **cfg)
dag = run(compile_pipeline(granularity="fine")[:3], State(model=model)).dag
pickle.dump(dag, open(f"/tmp/lag15/r50_{'_'.join(map(str, stages))}.pkl", "wb"))
print(stages, dag.n, len(dag.edges))
