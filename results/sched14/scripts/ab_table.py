"""The side-by-side table of run_ab.sh: python ab_table.py TAG (10 or 120): main (ab_TAG_base.jsonl) and the branch
(ab_TAG_branch.jsonl), overhead over computing each unit once, gap on the overhead, the solve's wall."""
import json
import sys
from pathlib import Path

D = Path(__file__).resolve().parents[1]


def rows(name):
    p = D / name
    return [json.loads(x) for x in p.read_text().splitlines() if x.strip()] if p.exists() else []


def key(r):
    return (r.get("graph", "").replace(".json", ""), r.get("ratio"))


def cell(r):
    if r is None:
        return "(not run) | |"
    if r.get("status") == "error":
        e = r.get("error", "")
        short = "no schedule" if "NoSchedule" in e or "LpUnfinished" in e or "no schedule" in e else e[:50]
        return f"**{short}** | {r['wall']:.0f}"
    return f"+{r['over']:.3f}% ({r['status']}, gap {100 * r['gap']:.1f}%) | {r['wall']:.0f}"


def main():
    tag = sys.argv[1]
    base = {key(r): r for r in rows(f"ab_{tag}_base.jsonl")}
    new = {key(r): r for r in rows(f"ab_{tag}_branch.jsonl")}
    print("| graph | ratio | main: overhead (status, gap) | main: wall s | branch: overhead (status, gap) | branch: wall s |")
    print("|---|---|---|---|---|---|")
    for k in list(dict.fromkeys(list(base) + list(new))):
        print(f"| {k[0]} | {k[1]} | {cell(base.get(k))} | {cell(new.get(k))} |")


if __name__ == "__main__":
    main()
