"""Plan generation: a schedule (R, S, FREE) becomes an execution plan (paper §4.8, Algorithm 1).

Algorithm 1 scans R row by row: each R[t, k] emits ``%r = compute v_k`` into a fresh register, followed by
``deallocate`` of every parent i with FREE[t, (i, k)] (eq. 5). Algorithm 1 leaves out the values that its
memory accounting drops silently at the stage boundary, because the next stage starts from S[t+1] alone:
a value resident at the end of stage t that is not in S[t+1] (a spurious checkpoint unused in stage t, a
computed value with no user in stage t such as the frontier unit when it is not kept, and an older copy of
a unit recomputed while checkpointed). This pass deallocates those at the end of stage t, and after the
last stage it deallocates every register still live, so every register is freed exactly once.

With ``early_free=False`` that is the whole plan, and its simulated peak equals the paper's U accounting
(``ir.schedule.memory_profile(...).max()``). With ``early_free=True`` (the default) every deallocation then
moves as early as is legal (§4.8): right after the last compute that uses its register (computes a child of
the unit while the register holds the current copy), or right after its own compute when nothing uses it.
This subsumes the paper's code motion (a checkpoint unused in a stage is freed before the stage starts,
right after its last use in an earlier stage, rather than at the stage's start) and frees a value computed
but unused in its stage right after its compute. Frees only move earlier, so the peak can only go down.
"""
from __future__ import annotations

import numpy as np

from remc.ir.dag import DAG
from remc.ir.errors import PlanError
from remc.ir.plan import Compute, Deallocate, Plan, Stmt, Unit, plain_value
from remc.ir.schedule import Schedule, check, free_matrix


def unit_table(dag: DAG) -> tuple[Unit, ...]:
    """The plan's unit table for a DAG: names, members ((name,) when unknown), M, W, C and op summary."""
    return tuple(Unit(name=dag.names[v],
                      members=tuple(dag.members[v]) if dag.members is not None else (dag.names[v],),
                      mem=int(dag.mem[v]), workspace=int(dag.workspace[v]), cost=float(dag.cost[v]),
                      op=dag.ops[v] if dag.ops is not None else "", kept=int(dag.kept[v]),
                      kept_first=None if dag.kept_first[v] == dag.kept[v] else int(dag.kept_first[v]))
                 for v in range(dag.n))


def generate_plan(dag: DAG, schedule: Schedule, *, early_free: bool = True, graph_name: str = "",
                  budget: int | None = None, granularity: str = "fine") -> Plan:
    """The execution plan of a valid schedule (Algorithm 1 plus stage-end frees, optionally hoisted)."""
    errs = check(dag, schedule.R, schedule.S)
    if errs:
        raise PlanError(f"cannot generate a plan from an invalid {schedule.strategy or 'unnamed'} "
                        f"schedule: " + "; ".join(errs))
    stages = _algorithm1(dag, schedule.R, schedule.S)
    if early_free:
        stages = _hoist(dag, stages)
    report = {str(k): plain_value(str(k), v) for k, v in schedule.report.items()
              if _scalar(v) and not _timing(str(k))}
    return Plan(graph=graph_name, budget=budget, constant=int(dag.constant), strategy=schedule.strategy,
                granularity=granularity, units=unit_table(dag), stages=stages, report=report,
                device=dag.meta.get("device", "cpu") if dag.meta else "cpu")


def _in_edges(dag: DAG) -> tuple[np.ndarray, ...]:
    """For each unit k, the indices of the edges (i, k) into it, by ascending parent i."""
    order = np.lexsort((dag.edges[:, 0], dag.edges[:, 1]))
    bounds = np.searchsorted(dag.edges[order, 1], np.arange(dag.n + 1))
    return tuple(order[bounds[k]:bounds[k + 1]] for k in range(dag.n))


def _algorithm1(dag: DAG, R: np.ndarray, S: np.ndarray) -> list[list[Stmt]]:
    """Row-major scan of R with FREE deallocations, then the stage-end deallocations."""
    n, names = dag.n, dag.names
    free = free_matrix(dag, R, S)
    into = _in_edges(dag)
    holder: dict[int, int] = {}  # unit -> register of its current copy
    reg = 0
    stages: list[list[Stmt]] = []
    for t in range(n):
        stmts: list[Stmt] = []
        stale: list[tuple[int, int]] = []  # (unit, register) of copies superseded by a recompute
        for k in map(int, np.flatnonzero(R[t, :t + 1])):
            if k in holder:
                stale.append((k, holder[k]))
            stmts.append(Compute(reg, names[k]))
            holder[k] = reg
            reg += 1
            for e in into[k]:
                if free[t, e]:
                    stmts.append(Deallocate(holder.pop(int(dag.edges[e, 0]))))
        keep = S[t + 1] if t + 1 < n else np.zeros(n, dtype=bool)
        dropped = [(i, holder.pop(i)) for i in sorted(holder) if not keep[i]]
        stmts.extend(Deallocate(r) for _, r in sorted(stale + dropped))
        stages.append(stmts)
    return stages


def _hoist(dag: DAG, stages: list[list[Stmt]]) -> list[list[Stmt]]:
    """The plan with every deallocation moved right after the last compute that defines or uses its
    register (a use: computing a child of the register's unit while the register holds its current copy).
    Deallocations that follow the same compute are ordered by unit, then register."""
    index = {name: v for v, name in enumerate(dag.names)}
    holder: dict[int, int] = {}  # unit -> register of its current copy
    unit_of: dict[int, int] = {}  # register -> unit
    needed_until: dict[int, tuple[int, int]] = {}  # register -> (stage, compute position in the stage)
    for t, stmts in enumerate(stages):
        pos = 0
        for st in stmts:
            if isinstance(st, Deallocate):
                if holder.get(unit_of[st.reg]) == st.reg:
                    del holder[unit_of[st.reg]]
                continue
            k = index[st.unit]
            for i in dag.preds[k]:
                needed_until[holder[int(i)]] = (t, pos)
            needed_until[st.reg] = (t, pos)
            holder[k], unit_of[st.reg] = st.reg, k
            pos += 1
    after: dict[tuple[int, int], list[tuple[int, int]]] = {}
    for stmts in stages:
        for d in stmts:
            if isinstance(d, Deallocate):
                after.setdefault(needed_until[d.reg], []).append((unit_of[d.reg], d.reg))
    out: list[list[Stmt]] = []
    for t, stmts in enumerate(stages):
        row: list[Stmt] = []
        for pos, c in enumerate(st for st in stmts if isinstance(st, Compute)):
            row.append(c)
            row.extend(Deallocate(r) for _, r in sorted(after.get((t, pos), [])))
        out.append(row)
    return out


def _timing(key: str) -> bool:
    """Report entries that measure time ('seconds', 'refine_seconds', 'elapsed', ...) or the process's memory
    ('peak_rss_mib'): they differ from run to run, so the plan leaves them out (the command's report has them)
    and the same input and options give byte-identical plan text."""
    return key in ("seconds", "elapsed", "time", "wall", "peak_rss_mib") or \
        key.endswith(("_seconds", "_elapsed", "_time"))


def _scalar(value: object) -> bool:
    """Report entries a plan carries: scalars (solver details such as per-ε trial lists stay in the report)."""
    return value is None or isinstance(value, (str, bool, int, float, np.generic))
