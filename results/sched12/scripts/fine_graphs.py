"""Fine-granularity (ONNX-node) training graphs of zoo models at paper dimensions, cut down in depth so
that a proven optimum is within reach: GPT-2 with fewer layers, ResNet50 with fewer blocks per stage."""
from __future__ import annotations

import sys

from remc import zoo
from remc.pipeline import State, compile_pipeline, run

CUTS = {
    "gpt2-L1": ("gpt2", dict(n_layer=1)),
    "gpt2-L2": ("gpt2", dict(n_layer=2)),
    "gpt2-L3": ("gpt2", dict(n_layer=3)),
    "resnet50-1111": ("resnet50", dict(stages=(1, 1, 1, 1))),
    "resnet50-1100": ("resnet50", dict(stages=(1, 1, 0, 0))),
    "resnet50-1000": ("resnet50", dict(stages=(1, 0, 0, 0))),
    "resnet50-2000": ("resnet50", dict(stages=(2, 0, 0, 0))),
    "resnet50-2211": ("resnet50", dict(stages=(2, 2, 1, 1))),
    "resnet50": ("resnet50", {}),
    "gpt2": ("gpt2", {}),
}


def fine_dag(name: str, granularity: str = "fine"):
    """The training graph's DAG of cut ``name`` (CUTS) at ``granularity``."""
    kind, over = CUTS[name]
    cfg = dict(zoo.paper_config(kind))
    cfg.update(over)
    batch = cfg.pop("batch")
    model = zoo.export(kind, batch, train=True, weights="shape-only", **cfg)
    return run(compile_pipeline(granularity=granularity)[:3], State(model=model)).dag


if __name__ == "__main__":
    for name in sys.argv[1:] or CUTS:
        try:
            d = fine_dag(name)
            print(name, d.n, len(d.edges), flush=True)
        except Exception as e:  # noqa: BLE001
            print(name, "error", e, flush=True)
