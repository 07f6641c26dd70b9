"""Each mutant of scan.py (patched at run time) against tests/test_chains.py's new tests: python mutants.py"""
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
CODE = """
import sys
sys.path.insert(0, {tests!r}); sys.path.insert(0, {scratch!r})
import scan
scan.patch({name!r})
import test_chains as t
for f in ("test_a_parent_of_several_children_read_before_the_gap_is_charged_and_reaches_the_optimum",
          "test_two_trees_whose_gaps_meet_never_share_a_parent",
          "test_parents_read_before_the_gap_never_exceed_the_exhaustive_optimum"):
    try:
        getattr(t, f)()
        print("  passed", f)
    except Exception as e:  # noqa: BLE001
        print("  FAILED", f, type(e).__name__, str(e)[:100].replace(chr(10), " "))
"""
for name in ("late", "share", "strong", "size", "more"):
    print(name, flush=True)
    subprocess.run([sys.executable, "-c", CODE.format(tests=str(ROOT / "tests"), scratch=str(ROOT / "results/bound17/scratch"),
                                                      name=name)], check=False)
