"""Markdown tables from tools/gpu_evidence.py results (the GPU section of BENCHMARKS.md).

    python tools/gpu_table.py results/gpu_resnet50.json results/gpu_unet.json results/gpu_small.json
"""
from __future__ import annotations

import json
import sys


def gib(n: float | None) -> str:
    return "—" if n is None else f"{n / 2**30:.2f} GiB"


def evidence_table(ev: dict) -> str:
    un = ev["unmodified"]
    frac = f" ({un['limit_fraction']:.3f} of the unmodified graph's arena peak)" if "limit_fraction" in un else ""
    lines = [f"**{ev['model']}** batch {ev['batch']} {ev['config']}: gpu_mem_limit {gib(ev['gpu_mem_limit'])}{frac}, "
             f"remc budget {gib(ev['budget'])}{' (headroom ' + str(ev['headroom']) + ')' if 'headroom' in ev else ''} "
             f"(unmodified graph measured/predicted {ev['calibration']:.3f}). "
             f"Unmodified graph: predicted {gib(ev['predicted_checkpoint_all_peak'])}, measured "
             f"{gib(un['measured_peak'])}, {1e3 * un['median_seconds']:.1f} ms; under the limit: "
             f"{un['under_limit'][:90]}",
             "", "| strategy | status | predicted peak | measured peak | measured/predicted | predicted overhead | "
             "measured overhead | ms (CUDA graph) | outputs |", "|---|---|---|---|---|---|---|---|---|"]
    for r in ev["strategies"]:
        if "measured_peak" not in r:
            what = r.get("error", "").replace("|", "/")
            lines.append(f"| {r['strategy']} | {r.get('status', '—')} | {gib(r.get('predicted_peak'))} | "
                         f"{'did not run: ' + what[:110] if 'predicted_peak' in r else what[:110]} | | | | | |")
            continue
        lines.append(f"| {r['strategy']} | {r['status']} | {gib(r['predicted_peak'])} | {gib(r['measured_peak'])} | "
                     f"{r['measured_peak'] / r['predicted_peak']:.3f} | {r['predicted_overhead']:.3f} | "
                     f"{r['measured_overhead']:.3f} | {1e3 * r['median_seconds']:.1f} "
                     f"({1e3 * r['median_seconds_cuda_graph']:.1f}) | {'match' if r['outputs_match'] else 'DIFFER'} |")
    return "\n".join(lines)


def small_table(rows: list[dict]) -> str:
    lines = ["| model | loss CPU | loss CUDA | grad norm CPU | grad norm CUDA | strategies matching on CUDA, in "
             "plan order |", "|---|---|---|---|---|---|"]
    for r in rows:
        ok = [k for k, v in r["strategies"].items() if v.get("outputs_match") and v.get("order_matches_plan")]
        na = [k for k, v in r["strategies"].items() if "linear forward graph" in v.get("error", "")]
        none = [k for k, v in r["strategies"].items() if "error" in v and k not in na]
        lines.append(f"| {r['model']} | {r['loss_cpu']:.6f} | {r['loss_cuda']:.6f} | {r['grad_norm_cpu']:.5g} | "
                     f"{r['grad_norm_cuda']:.5g} | {len(ok)} of {len(r['strategies'])}"
                     f"{' (not applicable: ' + ', '.join(na) + ')' if na else ''}"
                     f"{' (no plan: ' + ', '.join(none) + ')' if none else ''} |")
    return "\n".join(lines)


def main() -> None:
    for path in sys.argv[1:]:
        data = json.loads(open(path).read().replace("Infinity", "1e999"))
        print(f"<!-- {path}: onnxruntime {data['onnxruntime']} -->")
        for ev in data.get("evidence", []):
            print(evidence_table(ev))
            print()
        if data.get("small"):
            print(small_table(data["small"]))
            print()


if __name__ == "__main__":
    main()
