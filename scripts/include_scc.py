#!/usr/bin/env python3
"""Cycles in the include graph of src/ (issue 17).

A .c file depends on the .c files whose headers it includes: #include "dir/x.h" (resolved
against src/, then against the including file's directory) maps to dir/x.c when that file
exists. Headers without a .c of the same name (cmd.h, stream_int.h...) add no edge. Only the
.c file's own #include lines count unless --transitive is given, which also follows the
includes of the headers it includes.

Prints, per directory, the strongly connected components of more than one file (files that
reach each other through such edges); a component spanning directories is listed apart.

usage: scripts/include_scc.py [--transitive] [--edges] [SRC_DIR]
"""
import argparse
import os
import re
import sys

INCLUDE_RE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def read_includes(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        return INCLUDE_RE.findall(f.read())


def resolve(src, including, name):
    """The path (relative to src) of an included header, or None when it is not under src."""
    for base in (src, os.path.dirname(os.path.join(src, including))):
        p = os.path.normpath(os.path.join(base, name))
        if os.path.isfile(p) and not os.path.relpath(p, src).startswith(".."):
            return os.path.relpath(p, src)
    return None


def headers_of(src, rel, transitive):
    """The headers (relative to src) a file includes, directly or (transitive) through other
    headers."""
    seen, todo = set(), [rel]
    while todo:
        cur = todo.pop()
        for name in read_includes(os.path.join(src, cur)):
            h = resolve(src, cur, name)
            if h is None or h in seen:
                continue
            seen.add(h)
            if transitive and h.endswith(".h"):
                todo.append(h)
    return seen


def build_graph(src, transitive):
    files = []
    for root, _dirs, names in os.walk(src):
        for n in names:
            if n.endswith(".c"):
                files.append(os.path.relpath(os.path.join(root, n), src))
    files.sort()
    known = set(files)
    graph = {}
    for f in files:
        deps = set()
        for h in headers_of(src, f, transitive):
            c = h[:-2] + ".c" if h.endswith(".h") else None
            if c in known and c != f:
                deps.add(c)
        graph[f] = sorted(deps)
    return graph


def tarjan(graph):
    """Strongly connected components (iterative Tarjan), each a sorted list."""
    index, low, on_stack = {}, {}, set()
    stack, comps, counter = [], [], 0
    for root in graph:
        if root in index:
            continue
        work = [(root, 0)]
        while work:
            v, i = work.pop()
            if i == 0:
                index[v] = low[v] = counter
                counter += 1
                stack.append(v)
                on_stack.add(v)
            succ = graph[v]
            if i < len(succ):
                work.append((v, i + 1))
                w = succ[i]
                if w not in index:
                    work.append((w, 0))
                elif w in on_stack:
                    low[v] = min(low[v], index[w])
                continue
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                comps.append(sorted(comp))
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[v])
    return comps


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("src", nargs="?", default=os.path.join(os.path.dirname(__file__), "..", "src"))
    ap.add_argument("--transitive", action="store_true",
                    help="also follow the includes of included headers")
    ap.add_argument("--edges", action="store_true", help="print each component's edges")
    args = ap.parse_args()
    src = os.path.relpath(os.path.normpath(args.src))
    if not os.path.isdir(src):
        sys.exit("no such directory: " + src)

    graph = build_graph(src, args.transitive)
    comps = [c for c in tarjan(graph) if len(c) > 1]
    by_dir, cross = {}, []
    for c in comps:
        dirs = {os.path.dirname(f) for f in c}
        if len(dirs) == 1:
            by_dir.setdefault(dirs.pop(), []).append(c)
        else:
            cross.append(c)

    print("include graph of %s (%s includes): %d .c files, %d edges"
          % (src, "transitive" if args.transitive else "direct", len(graph),
             sum(len(d) for d in graph.values())))
    for d in sorted({os.path.dirname(f) for f in graph}):
        cs = sorted(by_dir.get(d, []), key=lambda c: (-len(c), c))
        print("%s/%s: %s" % (src, d, "%d component(s) of size > 1" % len(cs) if cs else "none"))
        for c in cs:
            print_comp(graph, c, d, args.edges)
    if cross:
        print("across directories: %d component(s)" % len(cross))
        for c in sorted(cross, key=lambda c: (-len(c), c)):
            print_comp(graph, c, "", args.edges)
    return 0


def print_comp(graph, comp, d, edges):
    def short(f):
        return os.path.relpath(f, d) if d else f

    print("  [%d] %s" % (len(comp), " ".join(short(f) for f in comp)))
    if edges:
        members = set(comp)
        for f in comp:
            deps = [short(t) for t in graph[f] if t in members]
            print("      %s -> %s" % (short(f), " ".join(deps)))


if __name__ == "__main__":
    sys.exit(main())
