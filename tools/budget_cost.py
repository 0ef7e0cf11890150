#!/usr/bin/env python3
"""Instructions per unit of the frame's budget, per kind of work.

Runs `examples/budget_cost` (build it first: `cargo build --release
--example budget_cost`) under callgrind and divides each kind's
instructions (the inclusive cost of the function that does it) by the
budget units it was charged, which the example prints.

    python3 tools/budget_cost.py [--map PATH]
"""

import re
import subprocess
import sys
import tempfile

BINARY = "target/release/examples/budget_cost"

# kind: (functions whose inclusive instructions are its work, units)
KINDS = {
    "search": (["budget_cost::plain_searches"], "search"),
    "jump": (["budget_cost::jump_searches"], "jump"),
    "flood": (["budget_cost::floods"], "flood"),
    "repair": (["budget_cost::repairs"], "repair"),
    "join": (["CoarseRoute::connect"], "join"),
    "coarse node": (["CoarseRoute::search", "CoarseRoute::through"], "nodes_charged"),
    "leg refinement": (["CoarseRoute::refine"], "refine"),
}


def main():
    with tempfile.NamedTemporaryFile(suffix=".cg") as out:
        run = subprocess.run(
            ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out.name}", BINARY]
            + sys.argv[1:],
            capture_output=True,
            text=True,
            check=True,
        )
        annotate = subprocess.run(
            ["callgrind_annotate", "--inclusive=yes", "--threshold=100", out.name],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    units = dict(re.findall(r"kind=(\S+) units=(\d+)", run.stdout))
    # Inclusive cost per function, from lines naming the function in its
    # own binary (`file:function [binary]`).
    inclusive = {}
    for line in annotate.splitlines():
        m = re.match(r"\s*([\d,]+) \([^)]*\)\s+(\S+?):(\S+) \[", line)
        if m:
            cost = int(m.group(1).replace(",", ""))
            name = m.group(3)
            inclusive[name] = max(inclusive.get(name, 0), cost)
    print(run.stdout.splitlines()[0])
    rows = []
    for kind, (functions, key) in KINDS.items():
        cost = 0
        for function in functions:
            found = [c for name, c in inclusive.items() if name.endswith(function)]
            cost += max(found, default=0)
        charged = int(units.get(key, 0))
        per = cost / charged if charged else float("nan")
        rows.append((kind, cost, charged, per))
        print(f"{kind:15} instructions={cost:>14,} units={charged:>10,} per_unit={per:8.0f}")
    # The kinds the budget is spent on as such; joining a route's ends is
    # a small part of a quick route, shown apart.
    pers = [per for kind, _, _, per in rows if per == per and kind != "join"]
    mean = sum(pers) / len(pers)
    spread = max(abs(p / mean - 1) for p in pers)
    join = next(per for kind, _, _, per in rows if kind == "join")
    print(
        f"mean_per_unit={mean:.0f} max_off_mean={spread:.1%} "
        f"join_off_mean={join / mean - 1:+.1%}"
    )


if __name__ == "__main__":
    main()
