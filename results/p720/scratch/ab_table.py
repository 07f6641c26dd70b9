"""The side-by-side table of results/p720/ab*_{main,branch}.jsonl with the 1-min load at each run's start
(results/p720/load_ab*.txt). python ab_table.py TAG"""
import json
import sys

tag = sys.argv[1]
marks, loads = [], []
for line in open(f"results/p720/load_{tag}.txt"):
    p = line.split()
    if p[1] in ("main", "branch"):
        marks.append((p[0], p[1]))
    else:
        loads.append((p[0], float(p[1])))


def load_at(t):
    after = [v for s, v in loads if s >= t]
    return after[0] if after else loads[-1][1]


rows = {s: [json.loads(x) for x in open(f"results/p720/{tag}_{s}.jsonl")] for s in ("main", "branch")}
starts = {s: [t for t, side in marks if side == s] for s in ("main", "branch")}
print("| graph | ratio | --gap | main: wall s / report s | main: status, overhead, gap | branch: wall s / report s | "
      "branch: status, overhead, gap | load at start (main / branch) |")
print("|---|---|---|---|---|---|---|---|")
for k, (m, b) in enumerate(zip(rows["main"], rows["branch"])):
    gap = m["strategy"].split("gap=")[1] if "gap=" in m["strategy"] else "1e-4 (default)"

    def cell(r):
        return f"{r['status']}, +{r['overhead_pct']:.7f}%, {100 * r['gap']:.4f}%"
    print(f"| {m['graph']} | {m['ratio']} | {gap} | {m['wall_seconds']:.1f} / {m['report_seconds']:.1f} | {cell(m)} | "
          f"{b['wall_seconds']:.1f} / {b['report_seconds']:.1f} | {cell(b)} | "
          f"{load_at(starts['main'][k]):.1f} / {load_at(starts['branch'][k]):.1f} |")
