"""Checkpointing baselines (passes/baselines): validity on many graphs, exact reproduction of Chen et al.
on linear graphs, Griewank's binomial counts, the knob searches and the registry."""
from __future__ import annotations

import itertools
from functools import cache

import numpy as np
import pytest

from remc.ir.dag import DAG
from remc.ir.errors import InfeasibleError, RemcError
from remc.ir.schedule import check, checkpoint_all, memory_profile
from remc.passes.baselines import (
    BASELINES,
    advances,
    articulation_candidates,
    binomial_plan,
    family,
    forward_steps,
    griewank,
    linear_chain,
    solve_baseline,
    tradeoff,
)
from remc.passes.baselines.griewank import best_split

LINEAR_ONLY = ("griewank", "chen-sqrtn", "chen-greedy")


# ---------------------------------------------------------------------------------------------------------
# Training-DAG generators: a forward DAG plus the backward an autodiff would build for it.

def training_dag(n_fwd: int, fwd_edges: list[tuple[int, int]], *, needs: str | list[str] = "both",
                 mem=None, cost=None, no_recompute=(), workspace=None, constant: int = 0,
                 ops: list[str] | None = None) -> DAG:
    """Forward units 0..n_fwd-1 (the last one is the loss), then one gradient unit per forward unit that
    reaches the loss, in reverse topological order. grad(v) uses grad(u) for every forward user u of v and
    the forward values its kind needs: 'in' (v's inputs), 'out' (v itself), 'both' or 'none'. ``ops``
    names the forward units' ops (gradient units get 'Grad')."""
    kinds = [needs] * n_fwd if isinstance(needs, str) else list(needs)
    succ = {v: [] for v in range(n_fwd)}
    pred = {v: [] for v in range(n_fwd)}
    for a, b in fwd_edges:
        succ[a].append(b)
        pred[b].append(a)
    reaches = [False] * n_fwd
    reaches[n_fwd - 1] = True
    for v in reversed(range(n_fwd)):
        reaches[v] = reaches[v] or any(reaches[u] for u in succ[v])
    grad, names, edges = {}, [f"f{v}" for v in range(n_fwd)], list(fwd_edges)
    for v in reversed(range(n_fwd)):
        if not reaches[v]:
            continue
        grad[v] = len(names)
        names.append(f"g{v}")
        edges += [(grad[u], grad[v]) for u in succ[v] if u in grad]
        if kinds[v] in ("out", "both") or v == n_fwd - 1:
            edges.append((v, grad[v]))
        if kinds[v] in ("in", "both"):
            edges += [(p, grad[v]) for p in pred[v]]
    n = len(names)
    ones = np.ones(n)
    nr = np.zeros(n, dtype=bool)
    nr[list(no_recompute)] = True
    return DAG(tuple(names), ones if cost is None else np.resize(cost, n),
               np.ones(n, dtype=np.int64) if mem is None else np.resize(mem, n), np.array(edges).reshape(-1, 2),
               constant, None if workspace is None else np.resize(workspace, n), np.arange(n) >= n_fwd, nr,
               None if ops is None else tuple(ops) + ("Grad",) * (n - n_fwd))


def chain_edges(n: int) -> list[tuple[int, int]]:
    return [(i, i + 1) for i in range(n - 1)]


def residual_edges(blocks: int, branch: int = 10) -> tuple[int, list[tuple[int, int]]]:
    """stem -> [branch of ``branch`` units -> add(block input, branch)] * blocks -> head (the loss)."""
    edges, x, v = [], 0, 1
    for _ in range(blocks):
        edges += [(x, v)] + [(v + k, v + k + 1) for k in range(branch)] + [(x, v + branch)]
        x, v = v + branch, v + branch + 1
    edges.append((x, v))
    return v + 1, edges


def unet_edges(depth: int, level: int = 1) -> tuple[int, list[tuple[int, int]]]:
    """Encoder levels of ``level`` units, a bottleneck, mirrored decoder levels whose first unit also
    takes the skip from its encoder level's last unit, the loss."""
    loss = 2 * depth * level + 1
    edges = chain_edges(loss + 1)
    for i in range(depth):
        edges.append(((i + 1) * level - 1, depth * level + 1 + (depth - 1 - i) * level))
    return loss + 1, sorted(set(edges))


def diamond_chain(layers: int, **kw) -> DAG:
    """A linear network whose layers are conv -> decomposed normalization (mean, var, normalize) -> relu,
    then a loss: small diamonds inside each layer, as ONNX exports of VGG or MobileNet have."""
    edges, v = [], 0
    for _ in range(layers):
        conv, mean, var, norm, relu = v, v + 1, v + 2, v + 3, v + 4
        edges += [(conv, mean), (conv, var), (mean, var), (conv, norm), (mean, norm), (var, norm), (norm, relu)]
        edges.append((relu, relu + 1))
        v += 5
    ops = ["Conv", "ReduceMean", "Sub+Mul+ReduceMean", "Sub+Div", "Relu"] * layers + ["SoftmaxCrossEntropyLoss"]
    return training_dag(v + 1, edges, ops=ops, **kw)


def random_training_dag(rng: np.random.Generator) -> DAG:
    n_fwd = int(rng.integers(2, 22))
    edges = set()
    for v in range(1, n_fwd):
        edges.add((int(rng.integers(max(0, v - 3), v)), v) if rng.random() < 0.8 else (v - 1, v))
        for _ in range(int(rng.integers(0, 3))):
            if rng.random() < 0.35:
                edges.add((int(rng.integers(0, v)), v))
    kinds = list(rng.choice(["in", "out", "both", "none"], size=n_fwd))
    nr = [v for v in range(n_fwd - 1) if rng.random() < 0.08]
    return training_dag(n_fwd, sorted(edges), needs=kinds, mem=rng.integers(0, 50, 2 * n_fwd),
                        cost=rng.uniform(0.1, 5.0, 2 * n_fwd), no_recompute=nr,
                        workspace=rng.integers(0, 10, 2 * n_fwd) * (rng.random() < 0.3),
                        constant=int(rng.integers(0, 100)))


def shuffled_order(dag: DAG, rng: np.random.Generator) -> DAG:
    """The same DAG renumbered in a random topological order (forward and backward units interleave)."""
    indeg = np.bincount(dag.edges[:, 1], minlength=dag.n)
    ready, order = [v for v in range(dag.n) if indeg[v] == 0], []
    while ready:
        v = ready.pop(int(rng.integers(len(ready))))
        order.append(v)
        for u in dag.succs[v].tolist():
            indeg[u] -= 1
            if indeg[u] == 0:
                ready.append(u)
    pos = np.empty(dag.n, dtype=np.int64)
    pos[order] = np.arange(dag.n)
    return DAG(tuple(dag.names[v] for v in order), dag.cost[order], dag.mem[order], pos[dag.edges],
               dag.constant, dag.workspace[order], dag.backward[order], dag.no_recompute[order])


def assert_sound(dag: DAG, sched) -> None:
    assert check(dag, sched.R, sched.S) == []
    assert sched.report["peak"] == int(memory_profile(dag, sched.R, sched.S).max())
    assert sched.report["cost"] == pytest.approx(sched.cost(dag))
    assert not (sched.recomputes()[dag.no_recompute] > 0).any()


# ---------------------------------------------------------------------------------------------------------
# Validity everywhere

@pytest.mark.parametrize("seed", range(4))
def test_random_dags_every_strategy_is_valid(seed):
    """240 random training DAGs (a third renumbered so that forward and backward interleave): every
    schedule of every strategy is correct, its reported peak is memory_profile's; the Chen family never
    recomputes a checkpoint or a backward unit and recomputes any other value at most once."""
    rng = np.random.default_rng(seed)
    for k in range(60):
        dag = random_training_dag(rng)
        if k % 3 == 0:
            dag = shuffled_order(dag, rng)
        linear = linear_chain(dag)[0] is not None
        for name in BASELINES:
            if name in LINEAR_ONLY and not linear:
                with pytest.raises(RemcError, match="needs a linear forward graph"):
                    BASELINES[name](dag, None)
                continue
            for cand in family(name, dag):
                sched = cand.evaluate(dag)
                assert sched.strategy == name
                assert_sound(dag, sched)
                assert cand.peak_bound <= sched.report["peak"]          # the searches' bounds hold
                assert cand.cost_bound == pytest.approx(sched.report["cost"])
                if name.endswith(("sqrtn", "greedy")):
                    times = sched.R.sum(axis=0)
                    assert times.max() <= 2 and (times[dag.backward] == 1).all()
                    assert all(times[dag.index(c)] == 1 for c in sched.report["checkpoints"])
            budget = int(0.8 * checkpoint_all(dag).peak(dag))
            try:
                assert solve_baseline(name, dag, budget).report["peak"] <= budget
            except InfeasibleError as err:
                assert err.least_feasible > budget


@pytest.mark.parametrize("name", list(BASELINES))
@pytest.mark.parametrize("shape", ["chain", "residual", "unet", "diamonds"])
def test_structured_graphs(name, shape):
    if shape == "diamonds":
        dag = diamond_chain(4, mem=np.arange(1, 60) % 7 + 1)
    else:
        n, edges = {"chain": (12, chain_edges(12)), "residual": residual_edges(3), "unet": unet_edges(3)}[shape]
        dag = training_dag(n, edges, mem=np.arange(1, 3 * n) % 7 + 1)
    if name in LINEAR_ONLY and shape in ("residual", "unet"):
        with pytest.raises(RemcError, match=f"{name} needs a linear forward graph"):
            solve_baseline(name, dag)
        return
    for sched in tradeoff(name, dag):
        assert_sound(dag, sched)
        assert sched.report["cost"] >= dag.total_cost - 1e-9


# ---------------------------------------------------------------------------------------------------------
# Candidates

def test_articulation_points():
    assert articulation_candidates(training_dag(6, chain_edges(6))).tolist() == list(range(6))
    n, edges = residual_edges(3, branch=2)                  # block boundaries only: 0, 3, 6, 9 and the head
    assert articulation_candidates(training_dag(n, edges)).tolist() == [0, 3, 6, 9, 10]
    n, edges = unet_edges(3)                                # long skips leave only the two ends
    assert articulation_candidates(training_dag(n, edges)).tolist() == [0, n - 2, n - 1]
    # conv and relu of each layer, not the statistics of the normalization
    assert articulation_candidates(diamond_chain(3)).tolist() == [0, 3, 4, 5, 8, 9, 10, 13, 14, 15]


def test_side_branch_articulation_point_is_no_candidate():
    """A unit that only cuts off a dangling side computation (here f3, the only user of f2, which reads
    nothing but parameters) is an articulation point inside a residual block, but separates nothing."""
    edges = [(0, 1), (1, 3), (2, 3), (3, 4), (0, 4), (4, 5)]
    assert articulation_candidates(training_dag(6, edges)).tolist() == [0, 4, 5]


def test_linear_detection():
    assert linear_chain(training_dag(5, chain_edges(5)))[0].tolist() == [0, 1, 2, 3, 4]
    dag = diamond_chain(3)                                  # side computations of a layer: linear
    assert linear_chain(dag)[0].tolist() == [0, 3, 4, 5, 8, 9, 10, 13, 14, 15]
    chain, why = linear_chain(DAG(dag.names, dag.cost, dag.mem, dag.edges, backward=dag.backward))
    assert chain is None and "'f1' branches off between 'f0' and 'f3'" in why       # no op names: paths only
    n, edges = residual_edges(2, branch=2)                  # a residual branch holds a layer: not linear
    chain, why = linear_chain(training_dag(n, edges, ops=["Conv"] * n))
    assert chain is None and "'f1' branches off between 'f0' and 'f3'" in why
    chain, why = linear_chain(training_dag(n, edges, ops=["Conv", "Mul", "Add", "Add", "Mul", "Add", "Add", "Loss"]))
    assert chain is not None                                # ... unless it only holds side computations
    assert linear_chain(training_dag(4, [(0, 3), (2, 3)]))[0] is None            # f1 dead, f2 a side input
    chain, why = linear_chain(training_dag(4, [(1, 3), (2, 3)]))                 # f0 disconnected from the loss
    assert chain is None and "not connected" in why


def test_chen_is_ap_on_linear_networks():
    dag = diamond_chain(6, needs="both", mem=np.arange(62) % 5 + 1)
    for a, b in [("chen-sqrtn", "ap-sqrtn")]:
        x, y = solve_baseline(a, dag), solve_baseline(b, dag)
        assert np.array_equal(x.R, y.R) and np.array_equal(x.S, y.S)
    xs, ys = tradeoff("chen-greedy", dag), tradeoff("ap-greedy", dag)
    assert [x.report["checkpoints"] for x in xs] == [y.report["checkpoints"] for y in ys]
    for d in (dag, training_dag(9, chain_edges(9), needs="both")):
        full = griewank(d, slots=100)                   # a slot for every layer: checkpoint-all exactly
        assert_sound(d, full)
        assert full.report["recomputations"] == 0 and full.report["peak"] == checkpoint_all(d).peak(d)


# ---------------------------------------------------------------------------------------------------------
# Exact reproduction of Chen et al. on linear graphs

@pytest.mark.parametrize("length", [1, 2, 3, 5, 9, 16, 30])
@pytest.mark.parametrize("needs", ["in", "out", "both"])
def test_generalizations_reproduce_chen_on_chains(length, needs):
    rng = np.random.default_rng(length)
    dag = training_dag(length, chain_edges(length), needs=needs, mem=rng.integers(1, 20, 2 * length))
    runs = {name: solve_baseline(name, dag) for name in ("chen-sqrtn", "ap-sqrtn", "lin-sqrtn")}
    for name in ("chen-greedy", "ap-greedy", "lin-greedy"):
        runs[name] = tradeoff(name, dag)
    for a, b in [("chen-sqrtn", "ap-sqrtn"), ("chen-sqrtn", "lin-sqrtn")]:
        assert np.array_equal(runs[a].R, runs[b].R) and np.array_equal(runs[a].S, runs[b].S)
    for a, b in [("chen-greedy", "ap-greedy"), ("chen-greedy", "lin-greedy")]:
        assert len(runs[a]) == len(runs[b])
        for x, y in zip(runs[a], runs[b]):
            assert np.array_equal(x.R, y.R) and np.array_equal(x.S, y.S)


@pytest.mark.parametrize("length", [4, 9, 10, 25])
def test_sqrtn_is_one_extra_forward_pass(length):
    """Every floor(sqrt(L))-th layer checkpointed; every other layer recomputed exactly once, in the stage
    where the backward reaches its segment; the checkpoints never."""
    dag = training_dag(length, chain_edges(length), needs="both")
    sched = solve_baseline("chen-sqrtn", dag)
    k = int(np.sqrt(length))
    ck = [f"f{i}" for i in range(k - 1, length, k)]
    assert sched.report["checkpoints"] == ck
    times = sched.R.sum(axis=0)
    for v in range(length):
        assert times[v] == (1 if dag.names[v] in ck else 2), dag.names[v]
    assert (times[length:] == 1).all()
    assert sched.report["cost"] == dag.total_cost + length - len(ck)


def test_chen_schedule_by_hand():
    """Chain f0..f3 whose gradients need their layer's output: sqrt(4) = 2 checkpoints f1 and f3. f2 is
    recomputed from f1 when g2 runs (stage 5), f0 from the input when g0 runs (stage 7), nothing else."""
    dag = training_dag(4, chain_edges(4), needs="out")
    assert dag.names == ("f0", "f1", "f2", "f3", "g3", "g2", "g1", "g0")
    sched = solve_baseline("chen-sqrtn", dag)
    assert sched.report["checkpoints"] == ["f1", "f3"]
    assert sorted(map(tuple, np.argwhere(sched.R & ~np.eye(8, dtype=bool)).tolist())) == [(5, 2), (7, 0)]
    assert np.flatnonzero(sched.S[:, 1]).tolist() == [2, 3, 4, 5, 6]      # checkpoint f1 kept until g1
    assert np.flatnonzero(sched.S[:, 2]).tolist() == [3]                    # f2 freed after f3 uses it


def test_segment_is_recomputed_once_and_kept():
    """With a long segment each value is recomputed once, not once per gradient that needs it."""
    dag = training_dag(16, chain_edges(16), needs="both")
    sched = BASELINES["lin-greedy"](dag, None, b=10)                       # segments of 11 units
    assert sched.report["checkpoints"] == ["f10"]
    assert (sched.recomputes()[:16] <= 1).all()


# ---------------------------------------------------------------------------------------------------------
# Griewank

def _dp_advances(steps: int, slots: int) -> int:
    @cache
    def p(length: int, s: int) -> int:
        if length <= 1:
            return 0
        best = length * (length - 1) // 2                  # no snapshot: advance from the base every time
        if s > 0:
            best = min(best, min(m + p(length - m, s - 1) + p(m, s) for m in range(1, length)))
        return best
    return p(steps, slots)


def test_binomial_closed_form_matches_dynamic_program():
    for steps, slots in itertools.product(range(1, 40), range(0, 7)):
        assert advances(steps, slots) == _dp_advances(steps, slots), (steps, slots)
    # t(l, s) = r l - beta(s + 1, r - 1) with beta(s, r - 1) < l <= beta(s, r), beta(s, r) = C(s + r, s)
    assert forward_steps(10, 3) == 2 * 10 - 5               # beta(3, 2) = 10: r = 2; beta(4, 1) = 5
    assert forward_steps(55, 3) == 5 * 55 - 70              # beta(3, 4) = 35 < 55 <= beta(3, 5) = 56
    assert forward_steps(2, 1) == 1 and forward_steps(1, 1) == 0


def test_binomial_plan_uses_at_most_the_slots():
    for steps, slots in itertools.product(range(1, 30), range(0, 5)):
        plan = binomial_plan(steps, slots)
        for t in range(steps, 0, -1):                      # reverse step t needs state t-1
            live = [p for p, top in plan if p < top and p <= t - 1 < top]
            assert len(live) <= slots
        for steps_split in range(2, 30):
            for s in range(1, 5):
                m = best_split(steps_split, s)
                assert m + advances(steps_split - m, s - 1) + advances(m, s) == advances(steps_split, s)


@pytest.mark.parametrize("needs", ["in", "out"])
def test_griewank_recomputations_match_binomial_formula(needs):
    """Each gradient needs one state: its layer's input ('in': l = L reverse steps) or output ('out': the
    input x_0 is free, so l = L + 1). Recomputations = t(l, slots + 1) - (l - 1)."""
    for length in range(1, 26):
        dag = training_dag(length, chain_edges(length), needs=needs)
        steps = length if needs == "in" else length + 1
        for slots in range(0, length + 1):
            sched = griewank(dag, slots=slots)
            assert_sound(dag, sched)
            assert sched.report["recomputations"] == advances(steps, slots) - (steps - 1), (length, slots)


def test_griewank_log_memory():
    """A long chain with few slots: memory stays O(slots), recomputation O(L log L)-ish, as revolve."""
    dag = training_dag(64, chain_edges(64), needs="out")
    full = checkpoint_all(dag).peak(dag)
    sched = griewank(dag, slots=3)
    assert sched.report["peak"] <= 3 + 4                    # 3 slots + current state, gradient, loss
    assert sched.report["peak"] < full / 8
    assert sched.report["recomputations"] == advances(65, 3) - 64


def test_griewank_needs_linear_graph():
    n, edges = residual_edges(2)
    with pytest.raises(RemcError, match="griewank needs a linear forward graph"):
        griewank(training_dag(n, edges), 10)


# ---------------------------------------------------------------------------------------------------------
# Knob searches, budgets, registry

@pytest.mark.parametrize("name", ["griewank", "chen-greedy", "lin-greedy", "ap-greedy"])
def test_budget_search_returns_cheapest_fitting(name):
    rng = np.random.default_rng(7)
    dag = training_dag(20, chain_edges(20), mem=rng.integers(1, 30, 40), cost=rng.uniform(1, 3, 40))
    family = tradeoff(name, dag)
    assert len(family) > 3
    peaks = sorted({s.report["peak"] for s in family})
    for budget in peaks:
        best = BASELINES[name](dag, budget)
        assert best.report["peak"] <= budget
        assert best.report["cost"] == min(s.report["cost"] for s in family if s.report["peak"] <= budget)
    with pytest.raises(InfeasibleError, match=f"least peak it reaches is {peaks[0]} bytes") as err:
        BASELINES[name](dag, peaks[0] - 1)
    assert err.value.least_feasible == peaks[0]


def test_greedy_knob_enumerates_every_distinct_checkpoint_set():
    dag = training_dag(12, chain_edges(12), mem=np.array([3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 8] * 2))
    family = tradeoff("chen-greedy", dag)
    sets = [tuple(s.report["checkpoints"]) for s in family]
    brute = {tuple(BASELINES["chen-greedy"](dag, None, b=b).report["checkpoints"]) for b in range(-1, 80)}
    assert len(sets) == len(set(sets)) and set(sets) == brute
    assert sets[0] == tuple(f"f{i}" for i in range(12)) and sets[-1] == ()
    assert len(tradeoff("chen-greedy", dag, max_points=4)) == 4


def test_knobless_strategies_and_solve_baseline_budget():
    dag = training_dag(9, chain_edges(9))
    sched = BASELINES["chen-sqrtn"](dag, 1)                 # no knob: its one schedule, whatever the budget
    assert sched.report["peak"] > 1
    with pytest.raises(InfeasibleError) as err:
        solve_baseline("chen-sqrtn", dag, 1)
    assert err.value.least_feasible == sched.report["peak"]
    assert solve_baseline("chen-sqrtn", dag, sched.report["peak"]).report["peak"] == sched.report["peak"]
    with pytest.raises(RemcError, match="unknown baseline"):
        solve_baseline("chen", dag)


def test_checkpoint_all_matches_core():
    dag = training_dag(7, chain_edges(7), mem=np.arange(1, 15))
    ours, core = solve_baseline("checkpoint-all", dag), checkpoint_all(dag)
    assert np.array_equal(ours.R, core.R) and np.array_equal(ours.S, core.S)
    assert ours.report["recomputations"] == 0 and ours.report["peak"] == core.peak(dag)


def test_no_recompute_units_are_kept():
    dag = training_dag(12, chain_edges(12), no_recompute=[2, 7])
    for name in BASELINES:
        for sched in tradeoff(name, dag):
            assert_sound(dag, sched)
            assert (sched.R[:, [2, 7]].sum(axis=0) == 1).all()


def test_infeasible_message_names_the_neediest_unit():
    """Below the simple lower bound, the error says what sets it: the constant and the neediest unit's
    output, workspace and inputs."""
    from remc.passes.milp_model import simple_lower_bound
    from remc.passes.strategies import solve_baseline_strategy
    dag = DAG(("a", "b", "c"), np.ones(3), np.array([10, 50, 20]), np.array([(0, 1), (1, 2), (0, 2)]), 7,
              workspace=np.array([0, 0, 3]))
    assert simple_lower_bound(dag) == 7 + 20 + 3 + 10 + 50
    with pytest.raises(InfeasibleError, match=r"less than 90 B: 7 B always resident, and unit 'c' needs its "
                                              r"output 20 B, workspace 3 B and its 2 input\(s\) 60 B"):
        solve_baseline_strategy("checkpoint-all", dag, 80)


@pytest.mark.parametrize("seed", range(4))
def test_separators_match_networkx_block_cut_tree(seed):
    """``_separators`` (one DFS with low links) against networkx's block-cut tree path, on random undirected
    graphs with a source and a sink, connected or not."""
    import networkx as nx

    from remc.passes.baselines.common import _separators

    rng = np.random.default_rng(seed)
    for _ in range(200):
        n = int(rng.integers(2, 30))
        pairs = [(int(a), int(b)) for a, b in rng.integers(0, n, size=(int(rng.integers(0, 2 * n)), 2)) if a != b]
        src, dst = n, n + 1
        pairs += [(src, 0), (n - 1, dst)]
        adj: list[list[int]] = [[] for _ in range(n + 2)]
        for a, b in pairs:
            adj[a].append(b)
            adj[b].append(a)
        g = nx.Graph(pairs)
        if not nx.has_path(g, src, dst):
            assert _separators(adj, src, dst) == []
            continue
        want = {v for v in nx.articulation_points(g)
                if not nx.has_path(nx.restricted_view(g, [v], []), src, dst)}
        assert set(_separators(adj, src, dst)) == want


@pytest.mark.parametrize("name", ["griewank", "chen-greedy", "lin-greedy", "ap-greedy"])
def test_search_without_explanation_evaluates_less(name, monkeypatch):
    """``explain=False``: a family that fits nothing is not evaluated again for its least peak (the message
    gives the family's peak bound instead)."""
    from remc.passes.baselines import search

    rng = np.random.default_rng(7)
    dag = training_dag(20, chain_edges(20), mem=rng.integers(1, 30, 40), cost=rng.uniform(1, 3, 40))
    least = min(s.report["peak"] for s in tradeoff(name, dag))
    evaluated = []
    real = search.Candidate.evaluate
    monkeypatch.setattr(search.Candidate, "evaluate", lambda c, d: evaluated.append(c) or real(c, d))
    with pytest.raises(InfeasibleError, match="least peak it reaches") as err:
        BASELINES[name](dag, least - 1)
    explained = len(evaluated)
    assert err.value.least_feasible == least
    evaluated.clear()
    with pytest.raises(InfeasibleError, match="can peak below") as err:
        BASELINES[name](dag, least - 1, explain=False)
    assert err.value.least_feasible <= least and len(evaluated) < explained


def test_best_baseline_never_searches_for_the_least_peak(monkeypatch):
    from remc.passes.baselines import search
    from remc.passes.strategies import best_baseline

    dag = training_dag(20, chain_edges(20))
    least = min(s.report["peak"] for name in ("griewank", "chen-greedy") for s in tradeoff(name, dag))

    def no_least_peak(*a, **k):
        raise AssertionError("best_baseline searched a family for its least peak")
    monkeypatch.setattr(search, "least_peak", no_least_peak)
    assert best_baseline(dag, least - 1) is None
    assert best_baseline(dag, 10 * least) is not None
