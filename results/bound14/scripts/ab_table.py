"""The before/after table of run_ab.sh: main (ab_base*.jsonl) and the branch (ab_branch*.jsonl) side by side."""
import json
from pathlib import Path

D = Path(__file__).resolve().parents[1]


def rows(name):
    p = D / name
    return [json.loads(x) for x in p.read_text().splitlines() if x.strip()] if p.exists() else []


def key(r):
    return (r.get("graph", "").replace(".json", ""), r.get("ratio"))


def norm(r):
    """(overhead %, bound %, gap, source, wall, rss) of a where.py or bench_scale row."""
    if r.get("status") in ("error", "crashed"):
        return None
    if "overhead_pct" in r:
        return r["overhead_pct"], r["bound_pct"], r["gap"], r["bound_source"], r["wall_seconds"], r["max_rss_mib"], r["status"]
    return r["over"], r["bound_over"], r["gap"], r["source"], r["wall"], r["rss_mib"], r["status"]


def cell(r):
    if r is None:
        return "no schedule | | | |"
    v = norm(r)
    if v is None:
        return f"{r['status']}: {r.get('error', '')[:60]} | | {r.get('wall', r.get('wall_seconds', 0)):.0f} | |"
    o, b, g, src, w, m, st = v
    return f"+{o:.4f}% ({st}) | +{b:.4f}% ({src}), **{100 * g:.1f}%** | {w:.0f} | {m:.0f}"


def main():
    base = {key(r): r for r in rows("ab_base.jsonl") + rows("ab_zoo_base.jsonl")}
    new = {key(r): r for r in rows("ab_branch.jsonl") + rows("ab_zoo_branch.jsonl")}
    print("| graph | ratio | main: overhead | main: bound (source), gap | main: wall s | main: max RSS MiB "
          "| branch: overhead | branch: bound (source), gap | branch: wall s | branch: max RSS MiB |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for k in list(dict.fromkeys(list(base) + list(new))):
        print(f"| {k[0]} | {k[1]} | {cell(base.get(k))} | {cell(new.get(k))} |")
    print()
    for k, r in new.items():  # what the branch's cover phase did
        note = r.get("cover") or (r.get("extras") or {}).get("cover_bound") or r.get("cover_bound") or ""
        print(f"- {k[0]} {k[1]}: {note}")


if __name__ == "__main__":
    main()
