#!/usr/bin/env python3
"""Checks that the package crates.io would get holds every file the README
sends a reader to (standard library only).

What the README links (a Markdown link or image to a path of this
repository) or names as a file in backticks under `docs/`, `examples/` or
`assets/` must be in `cargo package --list`; so must what those files link
in turn, for the Markdown files among them. Links out (`http…`), anchors
and paths outside the repository are left alone.

Usage: `python3 tools/package_links.py` from the repository's root; prints
each missing file and exits 1 when there is one.
"""

import os
import re
import subprocess
import sys

LINK = re.compile(r"\]\(([^)\s]+)\)")
NAMED = re.compile(r"`((?:docs|examples|assets)/[^`\s]+\.\w+)`")


def targets(path):
    """The repository files `path` (a Markdown file) sends a reader to."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    base = os.path.dirname(path)
    found = set()
    for link in LINK.findall(text):
        if re.match(r"^[a-z]+:", link) or link.startswith("#"):
            continue
        link = link.split("#")[0]
        found.add(os.path.normpath(os.path.join(base, link)))
    if os.path.basename(path) == "README.md" and base == "":
        found.update(os.path.normpath(name) for name in NAMED.findall(text))
    return {t for t in found if not t.startswith("..")}


def main():
    listed = subprocess.run(
        ["cargo", "package", "--list", "--allow-dirty", "--quiet"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.split()
    packaged = {os.path.normpath(p) for p in listed}
    missing = []
    seen = set()
    todo = ["README.md"]
    while todo:
        page = todo.pop()
        if page in seen:
            continue
        seen.add(page)
        for target in sorted(targets(page)):
            if target not in packaged:
                missing.append((page, target))
            elif target.endswith(".md") and os.path.isfile(target):
                todo.append(target)
    for page, target in missing:
        print(f"{page} links {target}, which the package leaves out")
    print(f"{len(seen)} pages read, {len(missing)} missing")
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main())
