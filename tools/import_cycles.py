#!/usr/bin/env python3
"""Lists import cycles between the files of `src/` (standard library only).

Each file is a node. A plain `use` line of a file makes an edge to the
file that defines what it names: the longest module its path spells, and
through a module's re-exports (`pub use child::Item`, at any visibility)
to the file that defines `Item`. A re-export is a name, not an import, so
it makes no edge of its own. So `queue/mod.rs` defining `PathfindingQueue`
and `queue/flights.rs` importing it while `queue/mod.rs` imports
`flights::run_flights` is a cycle; `core/mod.rs` re-exporting `Cell` for
everyone is not. `use` lines inside an inline `#[cfg(test)] mod` are left
out (their `super` is the file itself).

Usage: `python3 tools/import_cycles.py [src]`; prints each cycle and exits
1 when there is one.

`python3 tools/import_cycles.py --upward [src] [folder]` counts the
imports that go up a floor: every path a file names is counted (its `use`
lines, and paths written out in its code, such as `walk::move_units` in a
plugin or `super::Motion` in a signature), and an edge from one file to
another goes up a floor when the other file, directly or through others,
names the first: no layering of the files can put both below each other.
With `folder` (for example `src/movement`), only edges between its files
are counted. It prints each such edge and the count, and exits 1 when
there is one.
"""

import os
import re
import sys


def modules(src):
    """Maps each module path (a tuple of names, () for the crate) to its file."""
    found = {}
    for root, _, files in os.walk(src):
        for name in files:
            if not name.endswith(".rs"):
                continue
            path = os.path.join(root, name)
            rel = os.path.relpath(path, src)[:-3].split(os.sep)
            if rel == ["lib"] or rel == ["main"]:
                module = ()
            elif rel[-1] == "mod":
                module = tuple(rel[:-1])
            else:
                module = tuple(rel)
            found[module] = path
    return found


def code_of(text):
    """The file's text without comments and without an inline test module
    (whose `super` is the file itself)."""
    text = re.sub(r"//[^\n]*", "", text)
    tests = re.search(r"#\[cfg\(test\)\]\s*mod\s+\w+\s*\{", text)
    return text[: tests.start()] if tests else text


def declarations(text):
    """The file's `use` declarations as (is a re-export, path), braces
    expanded; those of an inline test module left out."""
    text = code_of(text)
    found = []
    for visibility, decl in re.findall(r"(pub(?:\([^)]*\))?\s+)?\buse\s+([^;]+);", text):
        decl = re.sub(r"\s+", " ", decl)
        decl = re.sub(r"\s*(::|\{|\}|,)\s*", r"\1", decl).strip()
        for path in expand(decl):
            found.append((bool(visibility), path))
    return found


def expand(decl):
    """`a::{b,c::{d,e}}` into `a::b`, `a::c::d`, `a::c::e`."""
    start = decl.find("{")
    if start < 0:
        return [decl]
    depth, end = 0, start
    for i in range(start, len(decl)):
        if decl[i] == "{":
            depth += 1
        elif decl[i] == "}":
            depth -= 1
            if depth == 0:
                end = i
                break
    prefix, inner, rest = decl[:start], decl[start + 1 : end], decl[end + 1 :]
    parts, depth, current = [], 0, ""
    for ch in inner:
        if ch == "," and depth == 0:
            parts.append(current)
            current = ""
            continue
        depth += ch == "{"
        depth -= ch == "}"
        current += ch
    if current:
        parts.append(current)
    out = []
    for part in parts:
        out.extend(expand(prefix + part + rest))
    return out


def named_paths(text, module, known):
    """Paths written out in the file's code (not in `use` lines, comments or
    an inline test module): those from `crate`, `super` or `self`, and
    those from a child module of the file's own."""
    text = re.sub(r"(pub(?:\([^)]*\))?\s+)?\buse\s+[^;]+;", "", code_of(text))
    found = []
    for path in re.findall(r"(?<![\w:])((?:crate|super|self|[a-z_][a-z0-9_]*)(?:::\w+)+)", text):
        first = path.split("::")[0]
        if first in ("crate", "super", "self") or module + (first,) in known:
            found.append(path)
    return found


def split(path):
    """The path's segments (an alias dropped) and the name it brings in."""
    segments = path.split("::")
    item, _, alias = segments[-1].partition(" as ")
    segments[-1] = item
    return segments, alias or item


def resolve(module, path, known, reexports, depth=0):
    """The file-module defining what `path`, used in `module`, names."""
    segments, _ = split(path)
    if segments[0] == "crate":
        base, segments = (), segments[1:]
    elif segments[0] in ("super", "self"):
        base = module
        while segments and segments[0] in ("super", "self"):
            if segments[0] == "super":
                base = base[:-1]
            segments = segments[1:]
    elif module + (segments[0],) in known:
        base = module
    else:
        return None
    target = base
    rest = list(segments)
    while rest and target + (rest[0],) in known:
        target = target + (rest.pop(0),)
    if rest and rest[0] != "*" and depth < 16:
        name = rest[0]
        if (target, name) in reexports:
            origin_module, origin_path = reexports[(target, name)]
            found = resolve(origin_module, origin_path, known, reexports, depth + 1)
            if found is not None:
                return found
    return target


def main():
    args = sys.argv[1:]
    upward = "--upward" in args
    args = [a for a in args if a != "--upward"]
    src = args[0] if args else "src"
    folder = args[1] if len(args) > 1 else None
    known = modules(src)
    uses = {}
    reexports = {}
    for module, path in known.items():
        with open(path, encoding="utf-8") as f:
            uses[module] = declarations(f.read())
        for is_reexport, use in uses[module]:
            if is_reexport:
                _, name = split(use)
                reexports[(module, name)] = (module, use)
    edges = {module: set() for module in known}
    for module, declared in uses.items():
        for is_reexport, use in declared:
            if is_reexport:
                continue
            target = resolve(module, use, known, reexports)
            if target is not None and target != module and target in known:
                edges[module].add(target)
    if upward:
        return count_upward(src, folder, known, reexports, edges)
    # Strongly connected components (Tarjan).
    index, low, stack, on, cycles = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(edges[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                cycles.append(component)

    sys.setrecursionlimit(10000)
    for v in sorted(known):
        if v not in index:
            visit(v)
    for component in cycles:
        files = sorted(known[m] for m in component)
        print("import cycle between: " + ", ".join(files))
    if not cycles:
        print(f"no import cycle between the {len(known)} files of {src}")
    return 1 if cycles else 0


def count_upward(src, folder, known, reexports, edges):
    """Prints the edges that go up a floor (see the module doc) and their
    count."""
    for module, path in known.items():
        with open(path, encoding="utf-8") as f:
            for named in named_paths(f.read(), module, known):
                target = resolve(module, named, known, reexports)
                if target is not None and target != module and target in known:
                    edges[module].add(target)

    def reaches(start, goal):
        seen, todo = {start}, [start]
        while todo:
            v = todo.pop()
            if v == goal:
                return True
            for w in edges[v]:
                if w not in seen:
                    seen.add(w)
                    todo.append(w)
        return False

    def inside(module):
        return folder is None or os.path.abspath(known[module]).startswith(
            os.path.abspath(folder) + os.sep
        )

    found = sorted(
        (known[v], known[w])
        for v in known
        for w in edges[v]
        if inside(v) and inside(w) and reaches(w, v)
    )
    for v, w in found:
        print(f"up a floor: {v} -> {w}")
    print(f"{len(found)} imports up a floor" + (f" in {folder}" if folder else ""))
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
