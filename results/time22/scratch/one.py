"""Time one kernel-memory probe: python one.py MODEL NODE_NAME..."""
import sys, time, onnx
from remc.backends.runtime import import_model
from remc.pipeline import shaped_model
from remc.backends import scratch, runtime
from remc.backends.profile import ProfileCosts, _constant_values, _Probe
from remc.ir.onnx_types import static_types, node_keys
model = shaped_model(import_model(onnx.load(sys.argv[1], load_external_data=False)))
types = static_types(model); consts = _constant_values(model, None); keys = node_keys(model)
prof = ProfileCosts("cpu")
for want in sys.argv[2:]:
    i = keys.index(want); node = model.graph.node[i]
    p = _Probe("x", node, want)
    t0 = time.perf_counter()
    values = prof._original_values(model, [p], types, consts)
    t1 = time.perf_counter()
    km = scratch._measure(prof, model, p, types, consts, values, "cpu")
    t2 = time.perf_counter()
    print(want, node.op_type, [a.name + "=" + str(onnx.helper.get_attribute_value(a)) for a in node.attribute],
          [types[x].shape for x in node.input if x in types], "feeds %.2f measure %.2f" % (t1 - t0, t2 - t1), km.scratch, km.persistent, km.prepack, flush=True)
