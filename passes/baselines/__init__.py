"""Checkpointing baselines (paper Table 1, §6.1, appendix B): each fixes S and takes the least R for it.

``BASELINES`` maps each CLI name to ``fn(dag, budget, **options) -> Schedule``. Strategies with a knob
(greedy's segment budget b, griewank's slots) search it when a budget is given and return the cheapest
schedule whose peak fits it, raising InfeasibleError (with the least peak reached) when none does; with
no budget they return the cheapest schedule over the knob. Strategies without a knob return their one
schedule whatever the budget; ``solve_baseline`` checks the budget for every strategy.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ...ir.dag import DAG
from ...ir.errors import InfeasibleError, RemcError
from ...ir.schedule import Schedule
from ...ir.schedule import checkpoint_all as _checkpoint_all
from .chen import ap_greedy, ap_sqrtn, checkpoint_s, chen_greedy, chen_sqrtn, greedy_family, lin_greedy, lin_sqrtn
from .common import articulation_candidates, finish, forward_units, linear_chain, require_linear
from .griewank import advances, binomial_plan, forward_steps, griewank, griewank_family
from .search import Candidate, cheapest, least_peak

__all__ = ["BASELINES", "solve_baseline", "tradeoff", "family", "Candidate", "cheapest", "least_peak",
           "checkpoint_all", "griewank", "chen_sqrtn", "chen_greedy", "ap_sqrtn", "ap_greedy", "lin_sqrtn",
           "lin_greedy", "checkpoint_s", "articulation_candidates", "linear_chain", "forward_steps", "advances",
           "binomial_plan"]


def checkpoint_all(dag: DAG, budget: int | None = None) -> Schedule:
    """Every unit computed once and kept until its last use. No knob: ``budget`` is unused."""
    return finish(dag, _checkpoint_all(dag).S, "checkpoint-all", {})


BASELINES: dict[str, Callable[..., Schedule]] = {
    "checkpoint-all": checkpoint_all,
    "griewank": griewank,
    "chen-sqrtn": chen_sqrtn,
    "chen-greedy": chen_greedy,
    "ap-sqrtn": ap_sqrtn,
    "ap-greedy": ap_greedy,
    "lin-sqrtn": lin_sqrtn,
    "lin-greedy": lin_greedy,
}


def _lookup(name: str) -> Callable[..., Schedule]:
    if name not in BASELINES:
        raise RemcError(f"unknown baseline {name!r}; choose one of {', '.join(BASELINES)}")
    return BASELINES[name]


def solve_baseline(name: str, dag: DAG, budget: int | None = None, **options: Any) -> Schedule:
    """Run baseline ``name``; with a budget, its schedule fits it or InfeasibleError says the least peak."""
    sched = _lookup(name)(dag, budget, **options)
    if budget is not None and sched.report["peak"] > budget:
        peak = sched.report["peak"]
        raise InfeasibleError(f"{name} needs {peak} bytes, above the budget of {budget} bytes", peak)
    return sched


def family(name: str, dag: DAG, **options: Any) -> list[Candidate]:
    """Baseline ``name``'s schedules over its knob as lazily solved candidates (one for knob-less
    strategies). Options: ``max_points`` (greedy), ``max_slots`` (griewank)."""
    fn = _lookup(name)
    if name == "griewank":
        return griewank_family(dag, options.get("max_slots"))
    if name.endswith("-greedy"):
        candidates = {"chen-greedy": lambda: require_linear(dag, name),
                      "ap-greedy": lambda: articulation_candidates(dag),
                      "lin-greedy": lambda: forward_units(dag)}[name]()
        return greedy_family(dag, candidates, name, options.get("max_points"))
    sched = fn(dag, None, **options)
    return [Candidate(name, lambda: sched.S, sched.report["cost"], sched.report["peak"], sched.report)]


def tradeoff(name: str, dag: DAG, **options: Any) -> list[Schedule]:
    """Every schedule of baseline ``name`` over its knob, for cost-vs-memory curves (see ``family``).
    Each holds two n x n matrices: pass ``max_points`` for greedy on large graphs."""
    return [c.evaluate(dag) for c in family(name, dag, **options)]
