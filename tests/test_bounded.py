"""backends/bounded.py: work that cannot be interrupted runs in a child killed at the deadline; what it sent
before is kept, its errors come back as remc errors."""
from __future__ import annotations

import math
import time

import pytest

from remc.backends.bounded import run_bounded
from remc.ir.errors import ModelError, RuntimeFailure


def never() -> float:
    """A deadline the work never reaches, 11 days ahead (``run_bounded`` still forks: only None runs it here)."""
    return time.perf_counter() + 1e6


def _stuck(emit) -> None:
    emit(1)
    emit(2)
    time.sleep(3600)  # an uninterruptible step: the child is killed at the deadline
    emit(3)


def test_the_child_is_killed_at_the_deadline_and_earlier_items_are_kept():
    got: list = []
    # the deadline only has to come after the child's two sends (a fork and two pipe writes), even on a loaded
    # machine; nothing here times anything
    finished = run_bounded(_stuck, got.append, time.perf_counter() + 5.0)
    assert not finished and got == [1, 2]


def test_finished_work_reports_every_item():
    got: list = []
    assert run_bounded(lambda emit: [emit(k) for k in range(5)], got.append, never())
    assert got == [0, 1, 2, 3, 4]


def test_without_a_deadline_the_work_runs_here():
    got: list = []
    here: list = []
    assert run_bounded(lambda emit: (here.append(True), emit("x")), got.append, None)
    assert got == ["x"] and here == [True]  # the closure's list changed: same process


def test_errors_come_back():
    def bad_model(emit):
        raise ModelError("no static shape")

    def crash(emit):
        raise ZeroDivisionError("boom")

    with pytest.raises(ModelError, match="no static shape"):
        run_bounded(bad_model, lambda x: None, never())
    with pytest.raises(RuntimeFailure, match="ZeroDivisionError: boom"):
        run_bounded(crash, lambda x: None, never())


def test_a_passed_deadline_runs_nothing():
    got: list = []
    assert not run_bounded(lambda emit: emit(1), got.append, -math.inf)  # a deadline before any clock reading
    assert got == []
