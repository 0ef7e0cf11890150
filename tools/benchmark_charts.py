#!/usr/bin/env python3
"""Draws the peer benchmark's results as SVG bar charts (standard library
only), from the lines `benches/peers` prints:

    cargo run --release --manifest-path benches/peers/Cargo.toml > peers.txt
    python3 tools/benchmark_charts.py peers.txt docs/benchmarks

Writes, in the output folder, one chart per measure (each a group of bars
per workload, one bar per peer) and prints a Markdown table of every line.
"""

import sys
from pathlib import Path

PEERS = ["pathfinding", "northstar", "frontier"]
COLOURS = {"pathfinding": "#8c8c8c", "northstar": "#d9822b", "frontier": "#2b6cd9"}

# (file, title, field, unit, log scale)
CHARTS = [
    ("routed_cpu.svg", "CPU until every unit has a route", "routed_cpu_ms", "ms", True),
    ("whole_cpu.svg", "CPU until every unit has a route to its goal", "whole_cpu_ms", "ms", True),
    ("final_cpu.svg", "CPU until every final path", "final_cpu_ms", "ms", True),
    ("build_cpu.svg", "CPU taking up the map before any request", "build_cpu_ms", "ms", True),
    ("routed_frames.svg", "Frames until every unit has a route", "routed_frames", "frames", True),
    ("route_cost.svg", "Route cost over the optimum, mean", "route_cost_mean", "x", False),
    ("final_cost.svg", "Final path cost over the optimum, mean", "final_cost_mean", "x", False),
    ("illegal.svg", "Paths breaking the move rules (of each peer's routes and final paths)", "illegal", "paths", False),
]

# The same for the lines of walls put up while paths are held.
WALL_CHARTS = [
    ("walls_cpu.svg", "CPU until every path is legal again after 100 walls", "cpu_ms", "ms", True),
    ("walls_cost.svg", "Final path cost over the optimum after the walls, mean", "final_cost_mean", "x", False),
]


def parse(path):
    rows = []
    for line in Path(path).read_text().splitlines():
        fields = dict(part.split("=", 1) for part in line.split() if "=" in part)
        if "workload" in fields and "peer" in fields:
            rows.append(fields)
    return rows


def chart(rows, title, field, unit, log):
    import math

    workloads = []
    for row in rows:
        if row["workload"] not in workloads:
            workloads.append(row["workload"])
    value = {(r["workload"], r["peer"]): float(r[field]) for r in rows if field in r}
    top = max(value.values(), default=1.0) or 1.0
    if log:
        low = min((v for v in value.values() if v > 0), default=1.0)
        floor = 10 ** math.floor(math.log10(low))
        span = math.log10(top / floor) or 1.0

        def height(v):
            return 0.0 if v <= 0 else max(0.0, math.log10(v / floor) / span)
    else:
        def height(v):
            return v / top

    bar, gap, plot_h, left, bottom = 18, 16, 220, 60, 70
    width = left + len(workloads) * (len(PEERS) * bar + gap) + 160
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{plot_h + bottom + 40}" font-family="sans-serif" font-size="11">',
        f'<text x="{left}" y="18" font-size="14">{title}{" (log scale)" if log else ""}</text>',
        f'<line x1="{left}" y1="{30 + plot_h}" x2="{width - 150}" y2="{30 + plot_h}" stroke="#444"/>',
    ]
    for i, workload in enumerate(workloads):
        x0 = left + i * (len(PEERS) * bar + gap)
        for j, peer in enumerate(PEERS):
            v = value.get((workload, peer))
            if v is None:
                continue
            h = height(v) * plot_h
            x = x0 + j * bar
            y = 30 + plot_h - h
            label = f"{v:g}"
            out.append(f'<rect x="{x}" y="{y:.1f}" width="{bar - 2}" height="{h:.1f}" fill="{COLOURS[peer]}"><title>{peer}: {label} {unit}</title></rect>')
            out.append(f'<text x="{x + bar / 2 - 1}" y="{y - 3:.1f}" font-size="8" text-anchor="middle">{label}</text>')
        out.append(f'<text x="{x0}" y="{30 + plot_h + 14}" transform="rotate(30 {x0} {30 + plot_h + 14})">{workload}</text>')
    for j, peer in enumerate(PEERS):
        y = 40 + j * 16
        out.append(f'<rect x="{width - 140}" y="{y}" width="10" height="10" fill="{COLOURS[peer]}"/>')
        out.append(f'<text x="{width - 125}" y="{y + 9}">{peer}</text>')
    out.append("</svg>")
    return "\n".join(out)


def main():
    if len(sys.argv) != 3:
        print(__doc__)
        sys.exit(2)
    every = parse(sys.argv[1])
    rows = [r for r in every if "walls" not in r]
    walls = [r for r in every if "walls" in r]
    folder = Path(sys.argv[2])
    folder.mkdir(parents=True, exist_ok=True)
    for charts, lines in [(CHARTS, rows), (WALL_CHARTS, walls)]:
        for file, title, field, unit, log in charts:
            if lines:
                (folder / file).write_text(chart(lines, title, field, unit, log))
    keys = ["workload", "peer", "build_cpu_ms", "routed_frames", "routed_cpu_ms", "whole_frames", "whole_cpu_ms",
            "final_frames", "final_cpu_ms", "route_cost_mean", "route_cost_worst", "routes_compared",
            "final_cost_mean", "final_cost_worst", "finals_compared", "illegal", "missing"]
    wall_keys = ["workload", "peer", "walls", "frames", "cpu_ms", "final_cost_mean", "final_cost_worst", "compared",
                 "illegal"]
    for table_keys, lines in [(keys, rows), (wall_keys, walls)]:
        if not lines:
            continue
        print("| " + " | ".join(table_keys) + " |")
        print("|" + "---|" * len(table_keys))
        for row in lines:
            print("| " + " | ".join(row.get(k, "") for k in table_keys) + " |")
        print()


if __name__ == "__main__":
    main()
