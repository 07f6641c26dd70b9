"""The plan validator: an independent simulator that replays a plan statement by statement.

It shares no code with the schedule's memory accounting (``ir.schedule``): it only reads the plan, and
the DAG for its edges and sizes. On ``%r = compute v`` every parent of v must be held by a live register,
r must be a register never defined before, and M_v is allocated; the memory in use while v runs is
constant + (bytes of live registers, v included) + W_v, and the peak is the largest such value. On
``deallocate %r`` the register must be live. At the end every unit must have been computed. A peak over
the budget is rejected at the first statement that exceeds it. Every error is a PlanError that names the
statement (stage and statement numbered from 1, as in the plan text), its text, and why.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from remc.ir.dag import DAG
from remc.ir.errors import PlanError
from remc.ir.plan import Compute, Plan, quote, where
from remc.ir.sizes import describe_size, format_size

if TYPE_CHECKING:
    from remc.passes.arena import ArenaConfig, ArenaReplay, GraphEvents


@dataclass(frozen=True, slots=True)
class SimResult:
    """What replaying a plan measured."""

    peak: int
    """Largest bytes in use while a unit runs: constant + live registers + the unit's workspace."""
    cost: float
    """Sum of C_v over every compute statement."""
    recomputes: dict[str, int]
    """Units computed more than once -> number of computes beyond the first."""
    live_at_peak: tuple[tuple[int, str], ...]
    """(register, unit) pairs live while the peak statement runs (its own output included)."""
    peak_stmt: int
    """0-based index of the peak's compute statement in program order (all stages flattened)."""
    peak_where: str = ""
    """The peak's statement as 'stage S, statement J' (numbered from 1, as in the plan text)."""
    computes: int = 0
    deallocations: int = 0
    live_at_end: tuple[tuple[int, str], ...] = field(default=())
    """Registers never deallocated (the plans remc generates free everything)."""


def check_against(plan: Plan, dag: DAG, *, measured_workspace: bool = False) -> None:
    """PlanError unless the plan's unit table and constant are those of the DAG. ``measured_workspace``: the
    DAG was built without the device the plan was made for, whose measured kernel scratch may have made a unit's
    workspace larger than the DAG's rule (``remc.fit.dag_with_measured_scratch``), and its measured pre-packed
    weight copies a larger constant: a larger workspace or constant in the plan is accepted (never a smaller
    one), and a unit's kept outputs rounded up to the device's allocation granule, or moved into the constant
    (``DAG.kept_from_start``: a training loop's), as long as the constant and the kept outputs together are not
    less."""
    def mismatch(why: str) -> PlanError:
        return PlanError(f"the plan does not belong to this graph: {why}")

    if len(plan.units) != dag.n:
        raise mismatch(f"the plan has {len(plan.units)} units, the graph {dag.n}")
    held = sum(u.kept for u in plan.units)
    if plan.constant < int(dag.constant) or (plan.constant != int(dag.constant) and not measured_workspace) or \
            plan.constant + held < int(dag.constant + dag.kept.sum()):
        raise mismatch(f"constant {plan.constant} in the plan, {int(dag.constant)} in the graph")
    for v, u in enumerate(plan.units):
        if u.name != dag.names[v]:
            raise mismatch(f"unit {v} is {quote(u.name)} in the plan but {quote(dag.names[v])} in the graph")
        if u.mem != int(dag.mem[v]):
            raise mismatch(f"unit {quote(u.name)}: mem {u.mem} in the plan, {int(dag.mem[v])} in the graph")
        dk = int(dag.kept[v])  # the device's may be rounded up, or in the constant (a training loop's)
        if u.kept != dk and not (measured_workspace and (u.kept >= dk or u.kept == 0)):
            raise mismatch(f"unit {quote(u.name)}: kept {u.kept} in the plan, {int(dag.kept[v])} in the graph")
        df = int(dag.kept_first[v])
        if u.kept_running != df and not (measured_workspace and 0 <= u.kept_running <= u.kept):
            raise mismatch(f"unit {quote(u.name)}: kept_first {u.kept_running} in the plan, {df} in the graph")
        ws = int(dag.workspace[v])
        if u.workspace < ws or (u.workspace != ws and not measured_workspace):
            raise mismatch(f"unit {quote(u.name)}: ws {u.workspace} in the plan, {int(dag.workspace[v])} in the graph")
        if not math.isclose(u.cost, float(dag.cost[v]), rel_tol=1e-9, abs_tol=0.0):
            raise mismatch(f"unit {quote(u.name)}: cost {u.cost!r} in the plan, {float(dag.cost[v])!r} "
                           f"in the graph")


class _Replay:
    """The simulator's state: live registers, where each was defined and freed, memory in use."""

    def __init__(self, plan: Plan, dag: DAG | None, budgets: list[tuple[int, str]]) -> None:
        self.plan, self.dag, self.budgets = plan, dag, budgets
        self.index = plan.unit_index()
        self.live: dict[int, int] = {}  # register -> unit
        self.copies: list[set[int]] = [set() for _ in plan.units]  # unit -> live registers holding it
        self.defined: dict[int, str] = {}  # register -> where defined
        self.held: dict[int, int] = {}  # register -> unit, for every register defined so far
        self.freed: dict[int, str] = {}  # register -> where deallocated
        self.last_freed: dict[int, str] = {}  # unit -> where its last live copy was deallocated
        self.times = [0] * len(plan.units)
        self.in_use = 0
        self.kept = 0  # bytes of kept outputs of the units computed so far
        self.peak, self.peak_stmt, self.peak_where = plan.constant, -1, ""
        self.cost = 0.0
        self.deallocations = 0

    def fail(self, s: int, j: int, stmt: object, why: str) -> PlanError:
        return PlanError(f"{where(s, j)} ({stmt}): {why}")

    def compute(self, s: int, j: int, flat: int, st: Compute) -> None:
        v = self.index.get(st.unit)
        if v is None:
            raise self.fail(s, j, st, f"unit {quote(st.unit)} is not in the unit table")
        if st.reg in self.defined:
            raise self.fail(s, j, st, f"register %{st.reg} is already defined (at {self.defined[st.reg]})")
        if self.dag is not None:
            for i in map(int, self.dag.preds[v]):
                if not self.copies[i]:
                    raise self.fail(s, j, st, f"uses {quote(self.plan.units[i].name)} which is not resident "
                                              f"({self._absence(i)})")
        u = self.plan.units[v]
        self.defined[st.reg] = where(s, j)
        self.held[st.reg] = v
        self.live[st.reg] = v
        self.copies[v].add(st.reg)
        first = not self.times[v]
        self.times[v] += 1
        self.cost += u.cost
        self.in_use += u.mem
        used = self.plan.constant + self.kept + (u.kept_running if first else 0) + self.in_use + u.workspace
        if first:  # held from now on
            self.kept += u.kept
        for budget, name in self.budgets:
            if used > budget:
                raise self.fail(s, j, st, f"memory in use {describe_size(used)} exceeds {name} {describe_size(budget)} "
                                          f"({self._biggest()})")
        if used > self.peak or self.peak_stmt < 0:
            self.peak, self.peak_stmt, self.peak_where = used, flat, where(s, j)

    def _biggest(self, k: int = 3) -> str:
        """The constant and the largest live registers, for over-budget messages."""
        regs = sorted(self.live.items(), key=lambda rv: (-self.plan.units[rv[1]].mem, rv[0]))
        parts = [f"constant {format_size(self.plan.constant)}"] + \
            ([f"kept outputs {format_size(self.kept)}"] if self.kept else [])
        units = self.plan.units
        parts += [f"%{r} {quote(units[v].name)} {format_size(units[v].mem)}" for r, v in regs[:k]]
        more = f" and {len(regs) - k} more" if len(regs) > k else ""
        return "live: " + ", ".join(parts) + more

    def _absence(self, i: int) -> str:
        if i in self.last_freed:
            return f"deallocated at {self.last_freed[i]}"
        return "not computed yet"

    def deallocate(self, s: int, j: int, st: object, reg: int) -> None:
        if reg not in self.live:
            if reg in self.freed:
                name = self.plan.units[self.held[reg]].name
                why = f"%{reg} ({quote(name)}) is already deallocated (at {self.freed[reg]})"
            else:
                why = f"%{reg} is not defined"
            raise self.fail(s, j, st, why)
        v = self.live.pop(reg)
        self.copies[v].discard(reg)
        self.freed[reg] = where(s, j)
        if not self.copies[v]:
            self.last_freed[v] = where(s, j)
        self.in_use -= self.plan.units[v].mem
        self.deallocations += 1

    def _live(self, live: dict[int, int] | None = None) -> tuple[tuple[int, str], ...]:
        live = self.live if live is None else live
        return tuple((r, self.plan.units[v].name) for r, v in sorted(live.items()))

    def _live_at(self, flat: int) -> tuple[tuple[int, str], ...]:
        """The live registers right after statement ``flat`` (a replay without checks: it already passed)."""
        live: dict[int, int] = {}
        for k, (_, _, st) in enumerate(self.plan.statements()):
            if k > flat:
                break
            if isinstance(st, Compute):
                live[st.reg] = self.held[st.reg]
            else:
                del live[st.reg]
        return self._live(live)

    def finish(self) -> SimResult:
        never = [u.name for u, k in zip(self.plan.units, self.times) if k == 0]
        if never:
            more = f" (and {len(never) - 1} more)" if len(never) > 1 else ""
            raise PlanError(f"the plan never computes unit {quote(never[0])}{more}")
        recomputes = {u.name: k - 1 for u, k in zip(self.plan.units, self.times) if k > 1}
        return SimResult(peak=self.peak, cost=self.cost, recomputes=recomputes,
                         live_at_peak=self._live_at(self.peak_stmt),
                         peak_stmt=self.peak_stmt, peak_where=self.peak_where, computes=sum(self.times),
                         deallocations=self.deallocations, live_at_end=self._live())


def simulate(plan: Plan, dag: DAG | None = None, *, budget: int | None = None,
             measured_workspace: bool = False) -> SimResult:
    """Replay a plan. With a DAG, its unit table must match the DAG's and every compute's parents must be
    resident; without one only registers and memory are checked. Memory over ``budget`` or the plan's own
    budget (each checked when not None) is an error."""
    if len(plan.unit_index()) != len(plan.units):
        names = [u.name for u in plan.units]
        dup = next(n for n in names if names.count(n) > 1)
        raise PlanError(f"the unit table lists {quote(dup)} twice")
    if dag is not None:
        check_against(plan, dag, measured_workspace=measured_workspace)
    own = plan.live_budget
    budgets = [(b, name) for b, name in ((budget, "the budget"), (own, "the plan's budget" if own == plan.budget
                                                                   else "the plan's solver budget"))
               if b is not None]
    sim = _Replay(plan, dag, budgets)
    flat = 0
    for s, j, st in plan.statements():
        if isinstance(st, Compute):
            sim.compute(s, j, flat, st)
        else:
            sim.deallocate(s, j, st, st.reg)
        flat += 1
    return sim.finish()


def validate(plan: Plan, dag: DAG, budget: int | None = None, *, measured_workspace: bool = False) -> SimResult:
    """Check a plan against its graph (and a budget): the SimResult, or PlanError saying what is wrong
    (``measured_workspace``: see ``check_against``)."""
    return simulate(plan, dag, budget=budget, measured_workspace=measured_workspace)


def check_arena(events: GraphEvents, config: ArenaConfig, budget: int | None, *,
                outside: int = 0) -> ArenaReplay:
    """Check a lowered graph's arena traffic against a budget by replaying ONNX Runtime's BFC arena
    (``passes.arena``): the arena's least limit for the runs plus ``outside`` (bytes the graph holds
    outside the arena: fed inputs, CPU initializers used in place) must be within ``budget``. Returns the
    replay; PlanError naming the bytes otherwise."""
    from remc.ir.plan import human_bytes
    from remc.passes.arena import least_limit, replay
    rep = replay(events, config)
    need = least_limit(events, config) + outside
    if budget is not None and need > budget:
        raise PlanError(f"the lowered graph needs an arena of {describe_size(need - outside)} on ONNX Runtime "
                        f"(replayed; peak in use {human_bytes(rep.peak_in_use)}, last at {rep.peak_node!r}) plus "
                        f"{describe_size(outside)} outside it: {describe_size(need)} exceeds the budget {describe_size(budget)}")
    return rep
