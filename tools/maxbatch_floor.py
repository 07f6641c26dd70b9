"""Why a baseline's max batch stops where it does: the stage where its least-peak schedule peaks, and what
is live there.

    python tools/maxbatch_floor.py vgg19 248 --strategy lin-greedy

Builds the zoo model's DAG at the paper's size as ``remc maxbatch`` does (batch 1 and 2, memory affine in
the batch), rescales it to the given batch, takes the schedule of the strategy's family with the least peak
(no cost bound: the floor of the whole family), and prints the peak, the stage and unit where it occurs,
the values stored at that stage's start and the unit computed there, each with its bytes.
"""
from __future__ import annotations

import argparse
import sys

from remc.ir.sizes import format_size
from remc.maxbatch_cli import _dag_at
from remc.passes.baselines import family
from remc.passes.maxbatch import affine, batch_dag


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("model")
    ap.add_argument("batch", type=int)
    ap.add_argument("--strategy", default="lin-greedy")
    args = ap.parse_args(argv)
    s1 = _dag_at(args.model, 1, "flops", "coarse")
    dag, per_sample = affine(s1.dag, _dag_at(args.model, 2, "flops", "coarse", like=s1).dag, 1, 2)
    d = batch_dag(dag, args.batch, 1)
    scheds = [c.evaluate(dag) for c in family(args.strategy, dag)]
    best = min(scheds, key=lambda s: s.peak(d))
    mem = best.memory(d)
    t, k = divmod(int(mem.argmax()), d.n)
    print(f"{args.model} batch {args.batch}, {args.strategy} ({len(scheds)} schedules): least peak "
          f"{format_size(int(mem.max()))} (cost {best.cost(d) / d.total_cost:.3f}x), constant "
          f"{format_size(d.constant)} ({format_size(per_sample)} of it per sample)")
    print(f"  peak in stage {t} while computing {d.names[k]} ({format_size(int(d.mem[k]))}, workspace "
          f"{format_size(int(d.workspace[k]))}); its inputs: {', '.join(d.names[i] for i in d.preds[k])}")
    print("  stored at the stage's start:")
    for i in range(d.n):
        if best.S[t, i]:
            print(f"    {d.names[i]:40s} {format_size(int(d.mem[i])):>10s}  ({d.ops[i] if d.ops else ''})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
