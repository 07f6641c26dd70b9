"""render_side.py LOG...: a markdown row per repeat of side.sh replay.py logs: result, first fit s, cost x ideal, gap."""
import re, sys
for path in sys.argv[1:]:
    rep, side, rows = None, None, {}
    for line in open(path):
        m = re.match(r"== repeat (\d+) (\S+) load (\S+)", line)
        if m:
            rep = (path.split("/")[-1], m.group(1), m.group(2), m.group(3)); rows[rep] = {}
        elif line.startswith("-- "):
            side = line[3:].strip()
        elif line.startswith("RESULT") and rep:
            if "LpUnfinished" in line or "NoScheduleInTime" in line:
                rows[rep][side] = "no schedule"
            else:
                cost = float(re.search(r"cost (\S+)", line).group(1)); ideal = float(re.search(r"ideal (\S+)\)", line).group(1))
                gap = float(re.search(r"gap (\S+)", line).group(1))
                ff = re.search(r"first_fit_seconds': ([0-9.]+)", line)
                rows[rep][side] = f"first fit {float(ff.group(1)):.1f} s, {cost / ideal:.3f}x, gap {100 * gap:.1f}%" if ff else f"{cost / ideal:.3f}x, gap {100 * gap:.1f}%"
    for (f, r, t, load), v in rows.items():
        print(f"| {f} | {r} | {t} | {load} | {v.get('main', '-')} | {v.get('branch', '-')} |")
