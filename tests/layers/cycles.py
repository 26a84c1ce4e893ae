#!/usr/bin/env python3
"""cycles.py - no two files of surge call each other, directly or round a loop.

The layers (test_layers.sh) keep calls going down between folders; inside a
folder only this check keeps files in a ladder, where each file can be read
knowing only the files below it.

  cycles.py c SOURCE_DIR BUILD_DIR   the core: a file depends on the file
      defining each symbol its object needs (nm), and on the .c file whose
      private header it includes (an inline there is a call too); a header
      that no .c file is named after (base.h, dataplane.h) is a folder's
      interface and belongs to no file.
  cycles.py lua LUA_DIR              the Lua API: a module depends on every
      module it requires, at its top or inside a function alike; and the
      packages too (a folder of lua/surge/ is one, a file beside them is
      one of its own): no package needs one that needs it back.

Prints each cycle with one reason per arrow and exits 1 when there is one.
"""
from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Iterable

Graph = dict[str, dict[str, str]]   # file -> {file it depends on: why}


def add(graph: Graph, a: str, b: str, why: str) -> None:
    graph.setdefault(a, {})
    graph.setdefault(b, {})
    if a != b:
        graph[a].setdefault(b, why)


def nm(args: list[str]) -> list[str]:
    out = subprocess.run(["nm", *args], check=True, capture_output=True, text=True).stdout
    return out.splitlines()


def c_graph(src: str, build: str) -> Graph:
    core = os.path.join(src, "core")
    objects: dict[str, str] = {}            # core/LAYER/x.c -> its object
    for layer in sorted(os.listdir(core)):
        odir = os.path.join(build, "CMakeFiles", f"surge_{layer}.dir", "core", layer)
        if not os.path.isdir(odir):
            continue
        for o in sorted(os.listdir(odir)):
            # an object whose source is gone (moved to another folder) is
            # a stale one of an older build: not part of the tree
            if o.endswith(".c.o") and os.path.exists(os.path.join(core, layer, o[:-2])):
                objects[f"{layer}/{o[:-2]}"] = os.path.join(odir, o)
    if len(objects) < 10:
        sys.exit(f"cycles: found only {len(objects)} objects of core/ in {build}")
    graph: Graph = {}
    owner: dict[str, str] = {}
    for f, o in objects.items():
        graph.setdefault(f, {})
        for line in nm(["--defined-only", "-g", o]):
            parts = line.split()
            if len(parts) == 3:
                owner[parts[2]] = f
    for f, o in objects.items():
        for line in nm(["-u", o]):
            sym = line.split()[-1]
            if sym in owner:
                add(graph, f, owner[sym], f"calls {sym}")
    include = re.compile(r'^\s*#\s*include\s+"([^"/]+)\.h"', re.M)
    for f in objects:
        with open(os.path.join(core, f), encoding="utf-8") as fh:
            text = fh.read()
        layer = f.split("/")[0]
        for name in include.findall(text):
            target = f"{layer}/{name}.c"
            if target in objects:
                add(graph, f, target, f"includes {name}.h")
    return graph


REQUIRE = re.compile(r"""\brequire\s*\(?\s*["']([A-Za-z0-9_.]+)["']""")


def lua_graph(root: str) -> Graph:
    files: dict[str, str] = {}               # module name -> path below root
    for d, _, names in os.walk(root):
        for n in names:
            if n.endswith(".lua"):
                rel = os.path.relpath(os.path.join(d, n), root)
                mod = rel[:-4].replace(os.sep, ".")
                if mod.endswith(".init"):
                    mod = mod[:-5]
                files[mod] = rel
    if len(files) < 10:
        sys.exit(f"cycles: found only {len(files)} Lua modules in {root}")
    graph: Graph = {}
    for mod, rel in files.items():
        graph.setdefault(rel, {})
        with open(os.path.join(root, rel), encoding="utf-8") as fh:
            for lineno, line in enumerate(fh, 1):
                code = line.split("--", 1)[0]
                for req in REQUIRE.findall(code):
                    if req in files:
                        add(graph, rel, files[req], f"line {lineno} requires {req}")
    return graph


def packages(files: Graph) -> Graph:
    """The file graph folded onto packages: surge/dut/view.lua is in dut."""
    def package(rel: str) -> str:
        parts = rel.split(os.sep)
        return parts[1] if len(parts) > 2 else rel
    graph: Graph = {}
    for a, deps in files.items():
        graph.setdefault(package(a), {})
        for b, why in deps.items():
            if package(a) != package(b):
                add(graph, package(a), package(b), f"{a} {why}")
    return graph


def cycles(graph: Graph) -> list[list[str]]:
    """Tarjan's strongly connected components of more than one file."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    found: list[list[str]] = []
    counter = 0

    def visit(v: str) -> None:     # recursive: graphs here have ~100 nodes
        nonlocal counter
        index[v] = low[v] = counter
        counter += 1
        stack.append(v)
        on.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def describe(graph: Graph, comp: Iterable[str]) -> list[str]:
    members = set(comp)
    return [f"  {a} -> {b} ({why})" for a in sorted(members)
            for b, why in sorted(graph[a].items()) if b in members]


def main(argv: list[str]) -> int:
    if len(argv) == 4 and argv[1] == "c":
        graphs = [("files of the core", c_graph(argv[2], argv[3]))]
    elif len(argv) == 3 and argv[1] == "lua":
        files = lua_graph(argv[2])
        graphs = [("Lua files", files), ("Lua packages", packages(files))]
    else:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    bad = 0
    for what, graph in graphs:
        found = cycles(graph)
        for comp in found:
            print(f"cycle among {len(comp)} {what}: {' '.join(comp)}")
            print("\n".join(describe(graph, comp)))
        arrows = sum(len(v) for v in graph.values())
        print(f"{what}: {len(graph)}, {arrows} arrows, {len(found)} cycles")
        bad |= bool(found)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
