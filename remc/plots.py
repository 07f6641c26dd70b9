"""Pictures of remc's results (matplotlib, the ``plots`` extra): overhead vs budget per strategy (the
paper's Fig. 5), max batch per model (Fig. 6), and a plan's R/S matrices with its memory timeline.

Every function writes a PNG atomically (temporary name, then rename) and imports matplotlib lazily, so
the rest of remc does not need it.
"""
from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from .ir.errors import RemcError
from .ir.plan import Compute, Deallocate, Plan

DPI = 100
MARKERS = "osD^v<>ph*"


def _pyplot() -> Any:
    try:
        import matplotlib
    except ImportError:
        raise RemcError("plotting needs matplotlib: pip install 'remc[plots]'") from None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


def _save(fig: Any, path: str | os.PathLike) -> None:
    path = Path(path)
    if not path.parent.is_dir():
        raise RemcError(f"cannot write {path}: folder {path.parent} does not exist")
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}.png")
    try:
        fig.savefig(tmp, dpi=DPI, bbox_inches="tight")
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
        _pyplot().close(fig)


# ---- Fig. 5: overhead vs budget -------------------------------------------------------------------

def plot_sweep(rows: Sequence[dict[str, Any]], path: str | os.PathLike, *, title: str = "",
               ideal_peak: int | None = None) -> None:
    """Overhead (cost over the ideal cost) against the budget, one line per strategy; budgets where a
    strategy found no schedule are left out of its line. ``rows``: dicts with strategy, budget and
    overhead (None when infeasible)."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(6.4, 4.0))
    strategies = list(dict.fromkeys(r["strategy"] for r in rows))
    for k, s in enumerate(strategies):
        pts = sorted((r["budget"], r["overhead"]) for r in rows if r["strategy"] == s and r.get("overhead"))
        if not pts:
            continue
        x, y = zip(*pts)
        exact = s == "checkmate"
        ax.plot(np.array(x) / 2**30, y, marker=MARKERS[k % len(MARKERS)], label=s,
                linewidth=3.0 if exact else 1.2, alpha=0.6 if exact else 1.0,
                linestyle="-" if s in ("checkmate", "approx") else "--", markersize=7 if exact else 4,
                zorder=1 if exact else 2)
    if ideal_peak:
        ax.axvline(ideal_peak / 2**30, color="gray", linewidth=0.8, linestyle=":")
        ax.text(ideal_peak / 2**30, ax.get_ylim()[1], " checkpoint all", va="top", ha="left", fontsize=8,
                color="gray")
    ax.set_xlabel("budget (GiB)")
    ax.set_ylabel("overhead (x of one forward + backward)")
    ax.set_title(title, fontsize=10)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, ncol=2)
    _save(fig, path)


# ---- Fig. 6: max batch per model ------------------------------------------------------------------

def plot_maxbatch(rows: Sequence[dict[str, Any]], path: str | os.PathLike, *, title: str = "",
                  baseline: str = "checkpoint-all") -> None:
    """Grouped bars of the largest batch per model and strategy, as the paper's Fig. 6: normalized to
    ``baseline``'s batch of the same model when every model has one (the bar labels give the batches),
    else raw. ``rows``: model, strategy, batch (0 or an ``error`` where the strategy found none or does
    not apply; labeled "n/a")."""
    plt = _pyplot()
    models = list(dict.fromkeys(r["model"] for r in rows))
    strategies = list(dict.fromkeys(r["strategy"] for r in rows))
    batch = {(r["model"], r["strategy"]): int(r.get("batch") or 0) for r in rows}
    norm = all(batch.get((m, baseline), 0) > 0 for m in models)
    fig, ax = plt.subplots(figsize=(max(4.0, 1.2 * len(models) + 1.5), 3.6))
    width = 0.8 / max(len(strategies), 1)
    for k, s in enumerate(strategies):
        raw = [batch.get((m, s), 0) for m in models]
        vals = [b / batch[(m, baseline)] if norm else b for b, m in zip(raw, models)]
        bars = ax.bar(np.arange(len(models)) + (k - (len(strategies) - 1) / 2) * width, vals, width, label=s)
        ax.bar_label(bars, labels=[str(b) if b else "n/a" for b in raw], fontsize=6, rotation=90, padding=2)
    ax.set_xticks(np.arange(len(models)), models)
    ax.set_ylabel(f"largest batch / {baseline}'s" if norm else "largest batch")
    ax.set_ylim(top=ax.get_ylim()[1] * 1.3)  # room for the labels and the legend above the bars
    ax.set_title(title, fontsize=10)
    ax.legend(fontsize=8, ncol=len(strategies), loc="upper left")
    _save(fig, path)


# ---- plans: R/S matrices and the memory timeline -------------------------------------------------

def plan_matrices(plan: Plan) -> tuple[np.ndarray, np.ndarray]:
    """(R, S): R[t, i] when stage t computes unit i, S[t, i] when unit i is resident as stage t starts
    (computed in an earlier stage and not yet deallocated), the paper's matrices as the plan executes them."""
    index = plan.unit_index()
    n, T = len(plan.units), len(plan.stages)
    R = np.zeros((T, n), dtype=bool)
    S = np.zeros((T, n), dtype=bool)
    resident: dict[int, int] = {}  # register -> unit
    for t, stage in enumerate(plan.stages):
        for unit in resident.values():
            S[t, unit] = True
        for st in stage:
            if isinstance(st, Compute):
                R[t, index[st.unit]] = True
                resident[st.reg] = index[st.unit]
            elif isinstance(st, Deallocate):
                resident.pop(st.reg, None)
    return R, S


def memory_timeline(plan: Plan) -> np.ndarray:
    """Predicted bytes in use at every compute statement, while it runs (constant overhead, resident
    values, the unit's output and workspace): the accounting the validator checks against the budget."""
    units = {u.name: u for u in plan.units}
    regs: dict[int, int] = {}
    live = kept = 0
    done: set[str] = set()
    out = []
    for stage in plan.stages:
        for st in stage:
            if isinstance(st, Compute):
                u = units[st.unit]
                first = u.name not in done  # its kept outputs from its first computation on
                done.add(u.name)
                out.append(plan.constant + kept + (u.kept_running if first else 0) + live + u.mem + u.workspace)
                kept += u.kept if first else 0
                live += u.mem
                regs[st.reg] = u.mem
            elif isinstance(st, Deallocate):
                live -= regs.pop(st.reg, 0)
    return np.array(out, dtype=np.int64)


def measured_timeline(plan: Plan, node_in_use: dict[str, int], offset: int = 0) -> np.ndarray:
    """Measured bytes in use after each compute statement, from a run of the graph lowered from ``plan``
    (``node_in_use``: bytes in use after each node, by node name, as ONNX Runtime's profiler gives them;
    the k-th recompute of a node is ``<node>/re<k>``, as lowering names it), plus ``offset``; NaN where the
    unit's nodes did not run (lowering drops copies nobody reads)."""
    units = {u.name: u for u in plan.units}
    count: dict[str, int] = {}
    out = []
    for stage in plan.stages:
        for st in stage:
            if not isinstance(st, Compute):
                continue
            k = count.get(st.unit, 0)
            count[st.unit] = k + 1
            names = [f"{m}/re{k}" if k else m for m in reversed(units[st.unit].members)]
            hit = next((node_in_use[n] for n in names if n in node_in_use), None)
            out.append(np.nan if hit is None else hit + offset)
    return np.array(out, dtype=np.float64)


def plot_plan(plan: Plan, path: str | os.PathLike, *, title: str | None = None,
              measured: np.ndarray | None = None) -> None:
    """The R and S matrices (stages x units; R black, S gray) beside the memory timeline with the budget,
    and the ``measured`` timeline (``measured_timeline``) when given."""
    plt = _pyplot()
    R, S = plan_matrices(plan)
    mem = memory_timeline(plan)
    fig, (a, b) = plt.subplots(1, 2, figsize=(9.6, 4.2), gridspec_kw={"width_ratios": [1, 1.3]})
    img = np.ones(R.shape + (3,))
    img[S] = (0.72, 0.72, 0.72)
    img[R] = (0.0, 0.0, 0.0)
    a.imshow(img, interpolation="nearest", aspect="auto")
    a.set_xlabel("unit (topological order)")
    a.set_ylabel("stage")
    a.set_title("R (computed, black) and S (kept, gray)", fontsize=9)
    b.plot(np.arange(len(mem)), mem / 2**20, linewidth=1.0, color="tab:blue", label="predicted in use")
    if measured is not None:
        b.plot(np.arange(len(measured)), measured / 2**20, linewidth=1.0, color="tab:orange",
               label="measured after the unit")
    b.axhline(plan.constant / 2**20, color="gray", linewidth=0.8, linestyle=":", label="constant overhead")
    if plan.budget:
        b.axhline(plan.budget / 2**20, color="tab:red", linewidth=1.0, linestyle="--", label="budget")
    b.set_xlabel("compute statement")
    b.set_ylabel("MiB")
    b.set_title("memory timeline", fontsize=9)
    b.legend(fontsize=8, loc="lower right")
    b.grid(alpha=0.3)
    fig.suptitle(title if title is not None else f"{plan.graph}: {plan.strategy}, {len(plan.stages)} stages, "
                 f"{len(plan.units)} units", fontsize=10)
    _save(fig, path)
