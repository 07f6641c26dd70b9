import sys, time, threading, os
mode = sys.argv[1]
import numpy
done = threading.Event()
def imp():
    if mode == "ctypes":
        import ctypes, glob
        d = os.path.dirname(numpy.__file__) + "/../ortools/.libs/"
        t = time.perf_counter()
        ctypes.CDLL(glob.glob(d + "libortools.so.9")[0], mode=os.RTLD_GLOBAL)
        print(f"  ctypes dlopen {time.perf_counter()-t:.3f}")
    t = time.perf_counter()
    import ortools.sat.python.cp_model_helper  # noqa
    print(f"  helper import {time.perf_counter()-t:.3f}")
    t = time.perf_counter()
    import ortools.sat.python.cp_model  # noqa
    print(f"  cp_model import {time.perf_counter()-t:.3f}")
    done.set()
th = threading.Thread(target=imp); th.start()
gaps = []
last = time.perf_counter()
while not done.is_set():
    now = time.perf_counter()
    gaps.append(now - last); last = now
gaps.sort()
print(mode, "max gaps", [round(g, 3) for g in gaps[-5:]], "sum of gaps>10ms", round(sum(g for g in gaps if g > 0.01), 3))
