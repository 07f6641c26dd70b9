"""Pickle the zoo's fine DAGs: python dump.py gpt2 resnet50"""
import pickle, sys
sys.path.insert(0, "tools")
from bench_scale import _graph
for k in sys.argv[1:]:
    dag = _graph(k, 0, 0)
    pickle.dump(dag, open(f"/tmp/lag15/{k}.pkl", "wb"))
    print(k, dag.n)
