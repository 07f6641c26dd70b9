"""Which kernel-memory signatures of the shaped model are in the cache at HOME: python sigs.py MODEL [lowered]"""
import collections, json, os, sys
import onnx
from remc.backends.runtime import import_model
from remc.pipeline import shaped_model
from remc.backends import scratch, runtime
from remc.backends.profile import _cache_key, signature, _constant_values, needs_run, _Probe
from remc.ir.onnx_types import static_types, node_keys
m = onnx.load(sys.argv[1], load_external_data=False)
model = shaped_model(import_model(m)) if len(sys.argv) < 3 else m
cache = scratch._Cache(None)
types = static_types(model); consts = _constant_values(model, None); keys = node_keys(model)
dev = "cpu"; settings = runtime.DEFAULT_SETTINGS
missing = {}
allk = set()
for name, node in zip(keys, model.graph.node):
    if node.op_type in scratch.NO_KERNEL_MEMORY: continue
    k = ("mem:remc3:" if scratch._on_remc_allocator(dev, settings) else "mem:") + _cache_key(signature(model, node, types, set(consts)), dev, settings)
    allk.add(k)
    if cache.get(k) is None and k not in missing:
        size = sum(types[x].nbytes for x in list(node.input) + list(node.output) if x and x in types)
        missing[k] = (node.op_type, size, needs_run(model, _Probe(k, node, name), types, consts), cache.slow(k), name)
print("signatures", len(allk), "missing", len(missing))
c = collections.Counter((v[0], v[2]) for v in missing.values())
print(c)
for k, v in sorted(missing.items(), key=lambda kv: kv[1][1])[:200]:
    print(v)
print("cut entries", sum(1 for k in cache._read() if k.startswith(scratch.SLOW_PREFIX)))
