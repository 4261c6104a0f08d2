#!/usr/bin/env python3
"""include_circles.py — are there circles among the source files of the code folders?

Usage: python3 tests/include_circles.py [FOLDER...]   (default: common/core, common/cli,
common/web)

An edge runs from A.c to B.c when A.c includes, directly or through other headers, a
header that declares a function or variable B.c defines, and A.c names it: what a file
can reach through its #include lines and does use. A header that several files implement
(cmd.h: one command each) thus leads only to the ones really called. Prints each circle
and exits 1, or prints "no circle" and exits 0.

Inside a model folder one circle is by design: P_model.c's ops table names the passes of
P_pass.c and P_decode.c, which read the state P_model.c lays out (docs/architecture.md)."""
import os
import re
import sys

FOLDERS = sys.argv[1:] or ["common/core", "common/cli", "common/web"]
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
FUNC_DEF = re.compile(r'^(?!static)[A-Za-z_][\w \t*]*?\b(\w+)\s*\([^;{]*\)\s*\{', re.M)
VAR_DEF = re.compile(r'^(?!static|extern|typedef)(?:volatile |const )*[A-Za-z_][\w \t*]*?'
                     r'\b(\w+)\s*(?:\[[^\]]*\])*\s*(?:=[^;]*)?;', re.M)
DECL = re.compile(r'\b(\w+)\s*(?:\(|\[|;)')


def code(path):
    """The text of path without comments and string literals."""
    with open(path, encoding="utf-8") as f:
        return re.sub(r'/\*.*?\*/|//[^\n]*|"(?:\\.|[^"\\])*"', " ", f.read(), flags=re.S)


def headers_of(path):
    """Every project header path reaches through #include lines."""
    seen, todo = set(), [path]
    while todo:
        f = todo.pop()
        with open(f, encoding="utf-8") as h:
            for name in INCLUDE.findall(h.read()):
                t = os.path.normpath(os.path.join(os.path.dirname(f), name))
                if t not in seen and os.path.exists(t):
                    seen.add(t)
                    todo.append(t)
    return seen


sources = sorted(os.path.join(d, f) for d in FOLDERS for f in os.listdir(d) if f.endswith(".c"))
text = {s: code(s) for s in sources}
owner = {}
for s in sources:
    for name in FUNC_DEF.findall(text[s]) + VAR_DEF.findall(text[s]):
        owner.setdefault(name, s)
declared = {}
edges = {s: set() for s in sources}
for s in sources:
    used = set(re.findall(r"\b\w+\b", text[s]))
    for h in headers_of(s):
        if h not in declared:
            declared[h] = set(DECL.findall(code(h)))
        for name in declared[h] & used:
            if owner.get(name, s) != s:
                edges[s].add(owner[name])

state, stack, circles = {}, [], []


def visit(n):
    state[n] = 1
    stack.append(n)
    for m in sorted(edges[n]):
        if state.get(m) == 1:
            circles.append(stack[stack.index(m):] + [m])
        elif m not in state:
            visit(m)
    stack.pop()
    state[n] = 2


for s in sources:
    if s not in state:
        visit(s)
for c in circles:
    print("circle: " + " -> ".join(c))
print("%d files, %d edges: %s" % (len(sources), sum(map(len, edges.values())),
                                  "%d circles" % len(circles) if circles else "no circle"))
sys.exit(1 if circles else 0)
