"""The largest batch size whose schedule fits a memory budget at bounded compute (paper §6.2, eq. 10).

A DAG built at batch B0 is rescaled to batch B: activation memory M and workspace W scale by B / B0
(``DAG.scaled``), compute cost does not need to (eq. 10 bounds a ratio of costs, which batch scaling
leaves alone). The constant overhead is parameters, their gradients and the graph inputs; the inputs
(images, labels) grow with the batch, so ``constant_per_sample`` bytes per sample of it scale too:
constant(B) = constant(B0) + constant_per_sample * (B - B0). By default (None) it is what the DAG knows:
the per-sample constant measured between two batch sizes (``affine``), else the graph inputs' bytes
(``dag.meta["input_bytes"]``, recorded by ``dagbuild``) divided by the base batch, else 0 (a DAG built by
hand, whose constant has no inputs in it).

The cost bound is eq. (10): sum_t sum_i C_i R_ti <= 2 * forward cost + backward cost (at most one extra
forward pass); ``cost_limit`` overrides it (same cost units as the DAG).
"""
from __future__ import annotations

import dataclasses
import inspect
from collections.abc import Callable

from ..ir.dag import DAG
from ..ir.errors import InfeasibleError, RemcError
from ..ir.schedule import Schedule, check

BatchStrategy = Callable[..., Schedule]
"""``strategy(dag, budget, cost_limit=...) -> Schedule``: a schedule of ``dag`` whose peak fits ``budget``
bytes and whose cost is at most ``cost_limit``, or InfeasibleError. A callable without a ``cost_limit``
parameter is called as ``strategy(dag, budget)`` and its schedule is rejected when it costs too much, which
is exact for strategies that return their cheapest fitting schedule. The Checkmate MILP takes the bound
as a constraint: ``lambda d, b, cost_limit: solve_milp(d, b, cost_limit=cost_limit, ...)``."""

_REL_TOL = 1e-9


def eq10_cost_limit(dag: DAG) -> float:
    """2 * (forward cost) + (backward cost): one extra forward pass over checkpoint-all (eq. 10)."""
    return dag.total_cost + dag.forward_cost()


def default_constant_per_sample(dag: DAG, base_batch: int) -> int:
    """Bytes of the constant overhead per sample (module docstring): measured by ``affine``, else the
    graph inputs' bytes over ``base_batch``, else 0."""
    if "constant_per_sample" in dag.meta:
        return int(dag.meta["constant_per_sample"])
    return int(dag.meta.get("input_bytes", 0)) // max(base_batch, 1)


def batch_dag(dag: DAG, batch: int, base_batch: int, constant_per_sample: int | None = None) -> DAG:
    """``dag`` (built at ``base_batch``) rescaled to ``batch`` samples.

    When ``dag.meta["per_sample"]`` holds (mem, workspace) bytes per sample (from a second DAG of the same
    graph at another batch, see ``affine``), memory is affine in the batch and exact: tensors without a
    batch dimension (weight-gradient temporaries) do not grow. Otherwise all of M and W scale by B / B0.
    ``constant_per_sample`` None: ``default_constant_per_sample``.
    """
    if batch < 1 or base_batch < 1:
        raise ValueError(f"batch sizes must be >= 1, got {batch} and base {base_batch}")
    if constant_per_sample is None:
        constant_per_sample = default_constant_per_sample(dag, base_batch)
    if "per_sample" in dag.meta:
        mem_slope, ws_slope = dag.meta["per_sample"]
        extra = batch - base_batch
        scaled = dataclasses.replace(dag, mem=dag.mem + mem_slope * extra, workspace=dag.workspace + ws_slope * extra,
                                     meta=dict(dag.meta))
    else:
        scaled = dag.scaled(batch / base_batch)
    constant = dag.constant + constant_per_sample * (batch - base_batch)
    return dataclasses.replace(scaled, constant=int(constant), meta={**scaled.meta, "batch": batch})


def affine(dag: DAG, other: DAG, base_batch: int, other_batch: int) -> tuple[DAG, int]:
    """``dag`` (at ``base_batch``) carrying per-sample memory measured against ``other`` (the same graph at
    ``other_batch``), and the constant's bytes per sample, for exact batch scaling in ``batch_dag``."""
    if dag.names != other.names or not (dag.edges.shape == other.edges.shape and (dag.edges == other.edges).all()):
        raise RemcError("the graph's units differ between the two batch sizes; cannot scale memory by batch")
    span = other_batch - base_batch
    per_sample = ((other.mem - dag.mem) // span, (other.workspace - dag.workspace) // span)
    constant = max((other.constant - dag.constant) // span, 0)
    out = dataclasses.replace(dag, meta={**dag.meta, "per_sample": per_sample, "constant_per_sample": constant})
    return out, constant


def max_batch(dag: DAG, budget: int, strategy: str | BatchStrategy, base_batch: int, *,
              constant_per_sample: int | None = None, cost_limit: float | None = None,
              max_batch_size: int = 1 << 24, start: int | None = None) -> tuple[int, Schedule]:
    """The largest batch B (and its schedule) whose schedule fits ``budget`` bytes at cost <= the limit.

    ``strategy`` is a baseline name (its schedules over the knob are built once at the base batch — S and
    R do not depend on the batch — and a batch is feasible when one of them within the cost limit fits
    there; the result is the cheapest that fits) or a ``BatchStrategy`` callable. Exponential search from
    ``base_batch``, then binary search; this assumes feasibility is monotone in B, which holds for a fixed
    family of schedules (memory only grows with B) and for exact solvers. Raises InfeasibleError when
    batch 1 does not fit, RemcError when ``max_batch_size`` still fits (memory does not grow with B).
    ``constant_per_sample`` None: what the DAG knows (``default_constant_per_sample``). ``start``: the
    batch the exponential search begins at (default ``base_batch``; e.g. a batch a cheaper strategy fits,
    which saves a slow solver the probes below it).
    """
    if constant_per_sample is None:
        constant_per_sample = default_constant_per_sample(dag, base_batch)
    if constant_per_sample < 0 or constant_per_sample * base_batch > dag.constant:
        raise RemcError(f"constant_per_sample={constant_per_sample} bytes x base batch {base_batch} exceeds the "
                        f"DAG's constant overhead of {dag.constant} bytes")
    limit = eq10_cost_limit(dag) if cost_limit is None else float(cost_limit)
    if isinstance(strategy, str):
        probe = _family_probe(dag, strategy, limit, base_batch)
    else:
        probe = _callable_probe(strategy, limit)
    found: dict[int, Schedule | None] = {}

    def fits(b: int) -> bool:
        if b not in found:
            found[b] = probe(batch_dag(dag, b, base_batch, constant_per_sample), budget)
        return found[b] is not None

    lo, hi = _bracket(fits, min(max(start or base_batch, 1), max_batch_size), max_batch_size)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if fits(mid) else (lo, mid)
    if lo == 0:
        raise InfeasibleError(f"{_name(strategy)}: even batch 1 does not fit {budget} bytes within cost "
                              f"{limit:.6g}")
    sched = found[lo]
    assert sched is not None  # lo > 0 is a batch that fitted
    if isinstance(strategy, str):
        sched = _cheaper_at(batch_dag(dag, lo, base_batch, constant_per_sample), strategy, budget, sched)
    sched.report.update(batch=lo, cost_limit=limit, budget=int(budget), batches_tried=len(found))
    return lo, sched


def _bracket(fits: Callable[[int], bool], start: int, cap: int) -> tuple[int, int]:
    """(lo, hi): lo fits (0 when nothing does), hi does not, by doubling up from ``start``."""
    if not fits(start):
        return 0, start
    lo = start
    while lo < cap:
        hi = min(2 * lo, cap)
        if not fits(hi):
            return lo, hi
        lo = hi
    raise RemcError(f"batch {cap} still fits: the schedule's memory does not grow with the batch size")


def _family_probe(dag: DAG, name: str, limit: float, base_batch: int) -> Callable[[DAG, int], Schedule | None]:
    """Feasibility of baseline ``name`` at a batch: does a schedule within the cost limit fit?

    Rescaling multiplies every M and W by f = B / B0 and rounds each, so a schedule's peak above the
    constant is f times its base value within (n + 1) / 2 bytes. Only schedules whose base peak is within
    (n + 1) B0 bytes of the least (among those within the cost limit) can have the least peak at any
    batch B >= 1; those few are evaluated exactly at each batch. The schedule returned is the cheapest of
    them that fits, or the cheapest of the family rebuilt at that batch when that one is cheaper.
    """
    from .baselines import family
    near = least_peak_within(dag, family(name, dag), limit, (dag.n + 1) * base_batch)

    def probe(d: DAG, budget: int) -> Schedule | None:
        fitting = [(s.report["cost"], peak, s) for s in near if (peak := s.peak(d)) <= budget]
        if not fitting:
            return None
        cost, peak, s = min(fitting, key=lambda x: x[:2])
        return Schedule(s.R, s.S, s.strategy, {**s.report, "peak": peak})
    return probe


def _cheaper_at(d: DAG, name: str, budget: int, sched: Schedule) -> Schedule:
    """``sched`` or, when cheaper, the cheapest schedule of the family rebuilt at this batch that fits."""
    from .baselines import cheapest, family
    try:
        other = cheapest(d, family(name, d), budget, name)
    except InfeasibleError:
        return sched
    return other if other.report["cost"] < sched.report["cost"] else sched


def least_peak_within(dag: DAG, fam: list, limit: float, slack: float) -> list[Schedule]:
    """The family's schedules within ``limit`` whose peak is within ``slack`` of the least."""
    from .baselines import least_peak
    try:
        return least_peak(dag, fam, cost_limit=limit * (1 + _REL_TOL), slack=slack)
    except InfeasibleError as err:
        raise InfeasibleError(f"{err} (the eq. 10 cost bound)") from None


def _callable_probe(strategy: BatchStrategy, limit: float) -> Callable[[DAG, int], Schedule | None]:
    params = inspect.signature(strategy).parameters
    takes_limit = "cost_limit" in params or any(p.kind is p.VAR_KEYWORD for p in params.values())

    def probe(d: DAG, budget: int) -> Schedule | None:
        try:
            s = strategy(d, budget, cost_limit=limit) if takes_limit else strategy(d, budget)
        except InfeasibleError:
            return None
        bad = check(d, s.R, s.S)
        if bad:
            raise RemcError(f"{_name(strategy)} returned an invalid schedule at batch {d.meta['batch']}: {bad[0]}")
        peak = s.peak(d)
        if peak > budget or s.cost(d) > limit * (1 + _REL_TOL):
            return None
        s.report["peak"] = peak
        return s
    return probe


def _name(strategy: str | BatchStrategy) -> str:
    return strategy if isinstance(strategy, str) else getattr(strategy, "__name__", "strategy")
