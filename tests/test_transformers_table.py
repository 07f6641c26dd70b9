"""tools/transformers_table.py --search: the least budget per strategy, by bisection with the refusals' figures."""
import importlib.util
from pathlib import Path

import pytest


def _tool():
    path = Path(__file__).resolve().parents[1] / "tools" / "transformers_table.py"
    spec = importlib.util.spec_from_file_location("transformers_table", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


tt = _tool()


def test_refusal_need_prefers_the_figure_on_the_device():
    """A baseline's refusal names its need in remc's model and what its best plan needs on ONNX Runtime;
    the fit decides on the latter, so the search jumps there. A refusal with no figure (the strategy does not
    apply) gives None, as does a figure at or below the budget."""
    err = ("remc: error: ap-sqrtn needs 1498081596 bytes, above the budget of 1480000000 bytes; ...; no schedule "
           "of this graph can need less than 1.3 GiB (1404562708 bytes): ...; above it in remc's model (solver "
           "budgets up to 1496951496 bytes) the best plan needs 1504119692 bytes on ONNX Runtime cpu; the step")
    assert tt.refusal_need(err, 1480000000) == 1504119692
    assert tt.refusal_need("remc: error: checkpoint-all needs 2.3 GiB (2452119729 bytes), above the budget of "
                           "2.0 GiB (2100000000 bytes)", 2100000000) == 2452119729
    assert tt.refusal_need("remc: error: no plan of strategy 'approx' fits 1440000000 bytes on ONNX Runtime cpu: "
                           "after 2 round(s) the best needs 1443285132 bytes there (...; its live bytes in remc's "
                           "model: 1406984848)", 1440000000) == 1443285132
    assert tt.refusal_need("remc: error: griewank needs a linear forward graph: 'x' branches off", 10) is None
    assert tt.refusal_need("remc: error: ap-sqrtn needs 900 bytes, above the budget of 1000 bytes", 1000) is None


def _probe(least: int, names_need: bool, calls: list[int]):
    """A strategy whose least feasible budget is ``least``: refused below it (naming ``least`` when
    ``names_need``), trained at or above it (its loop needing ``least``)."""
    def probe(b):
        calls.append(b)
        if b >= least:
            return True, least, True
        return False, (least if names_need else None), True
    return probe


@pytest.mark.parametrize("least", [1000, 1001, 1337, 1500, 1999])
@pytest.mark.parametrize("names_need", [True, False])
def test_search_least_finds_the_least_within_tolerance(least, names_need):
    calls: list[int] = []
    best, tried = tt.search_least(_probe(least, names_need, calls), 900, 2000, 10, 50)
    assert best is not None and least <= best <= least + 10
    assert (best, True) in tried and all(ok == (b >= least) for b, ok in tried)
    assert len(calls) <= 2 + 7  # the start, the jump to the need, a bisection of 1100 bytes to 10


def test_search_least_moves_up_from_a_refused_start_and_stops_where_nothing_applies():
    calls: list[int] = []
    best, tried = tt.search_least(_probe(2500, True, calls), 900, 2000, 10, 50)
    assert tried[:2] == [(2000, False), (2500, True)] and best == 2500
    # a refusal without a figure (the strategy does not apply) is tried once
    best, tried = tt.search_least(lambda b: (False, None, False), 900, 2000, 10, 50)
    assert best is None and tried == [(2000, False)]
    # without a figure and nothing trained, the search cannot go on
    best, tried = tt.search_least(lambda b: (False, None, True), 900, 2000, 10, 50)
    assert best is None and tried == [(2000, False)]


def test_search_least_keeps_to_its_probes():
    calls: list[int] = []
    best, tried = tt.search_least(_probe(1001, False, calls), 0, 10 ** 9, 1, 4)
    assert len(tried) == 4 and best is not None and best >= 1001


def test_search_least_from_the_lower_bound_jumps_to_the_named_need():
    """A baseline starts at the lower bound: its refusal names its family's need, which trains."""
    calls: list[int] = []
    best, tried = tt.search_least(_probe(1337, True, calls), 900, 2000, 10, 2, start=900)
    assert tried == [(900, False), (1337, True)] and best == 1337
