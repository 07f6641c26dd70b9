import sys, time, threading, os
mode = sys.argv[1]
import numpy
def busy():
    s = 0
    for i in range(3_000_000):
        s += i
    return s
def imp():
    if mode.startswith("ctypes"):
        import ctypes, glob
        d = os.path.dirname(numpy.__file__) + "/../ortools/.libs/"
        ctypes.CDLL(glob.glob(d + "libortools.so.9")[0], mode=os.RTLD_GLOBAL)
        t = time.perf_counter()
    import ortools.sat.python.cp_model_helper  # noqa
t0 = time.perf_counter()
if mode.endswith("seq"):
    busy(); t1 = time.perf_counter(); imp()
else:
    th = threading.Thread(target=imp); th.start(); busy(); t1 = time.perf_counter(); th.join()
t2 = time.perf_counter()
print(f"{mode}: busy done {t1-t0:.3f}  all {t2-t0:.3f} cpu {time.process_time():.3f}")
