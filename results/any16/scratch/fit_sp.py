"""fit.py with stagesearch.SPARSE_FROM set: python fit_sp.py GRAPH RATIO CPU SPARSE_FROM"""
import sys
from remc.passes import stagesearch as ss, evict
ss.SPARSE_FROM = evict.SPARSE_FROM = int(sys.argv[4])
sys.argv = sys.argv[:4]
exec(open(__file__.replace("fit_sp.py", "fit.py")).read())
