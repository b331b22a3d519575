#!/usr/bin/env python3
"""The folders of the compiler include each other in one direction only:

  - no folder under compiler/ includes, directly or through other folders,
    a folder that includes it back: each folder is a layer that a reader
    can take in before the ones that build on it (strategy/ and utils/ at
    the bottom, the stages above them);
  - compiler/ and runtime/ sit side by side on dialects/: neither includes
    the other, and dialects/ includes neither.

The files at the top of compiler/ are not a folder: the headers there
(Passes.h, OptionRanges.h, ...) count as what they include, so that a
folder that includes Passes.h includes what Passes.h includes; the sources
there (Pipelines.cpp, Registration.cpp) assemble every folder and nothing
includes them. Generated `.inc` files are left out.

Prints one line per problem and `N folders, M edges: ok` or
`... K problems`, exits 1 on a problem; --graph prints the edges between
folders first (`from -> to: one file that includes the other`).
"""

import argparse
import os
import re
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s+"((?:compiler|runtime|dialects)/'
                     r'[^"]+)"', re.MULTILINE)
SUFFIXES = (".c", ".cpp", ".h", ".td")


def includes(root, rel):
    """The repository includes of the file `rel` (none for a missing one)."""
    try:
        with open(os.path.join(root, rel), encoding="utf-8",
                  errors="replace") as f:
            text = f.read()
    except OSError:
        return []
    return [name for name in INCLUDE.findall(text)
            if not name.endswith(".inc")]


def sources(root, top):
    for dirpath, dirnames, filenames in os.walk(os.path.join(root, top)):
        dirnames[:] = sorted(dirnames)
        for name in sorted(filenames):
            if name.endswith(SUFFIXES):
                yield os.path.relpath(os.path.join(dirpath, name),
                                      root).replace(os.sep, "/")


def folder(rel):
    """compiler/<folder> of a file in one, else None (the top of
    compiler/ or another top-level folder)."""
    parts = rel.split("/")
    if parts[0] == "compiler" and len(parts) > 2:
        return "compiler/" + parts[1]
    return None


def reached(root, rel, seen):
    """{file in one of compiler/'s folders: the way to it} for what `rel`
    includes, looking through the headers at the top of compiler/."""
    found = {}
    for name in includes(root, rel):
        if folder(name):
            found.setdefault(name, name)
        elif name.startswith("compiler/") and name not in seen:
            seen.add(name)
            for target, way in reached(root, name, seen).items():
                found.setdefault(target, f"{name}, which includes {way}")
    return found


def folder_edges(root):
    """{(from, to): an example 'file includes file'} between folders."""
    edges = {}
    for rel in sources(root, "compiler"):
        source = folder(rel)
        if not source:
            continue
        for name, way in sorted(reached(root, rel, set()).items()):
            target = folder(name)
            if target != source:
                edges.setdefault((source, target), f"{rel} includes {way}")
    return edges


def cycles(edges):
    """Each folder that reaches itself, with the shortest way back."""
    graph = {}
    for source, target in sorted(edges):
        graph.setdefault(source, []).append(target)
    found = []
    for start in sorted(graph):
        # Breadth-first, so that the loop named is the shortest.
        paths = {target: [start, target] for target in graph[start]}
        queue = list(graph[start])
        while queue and start not in paths:
            node = queue.pop(0)
            for target in graph.get(node, []):
                if target not in paths:
                    paths[target] = paths[node] + [target]
                    queue.append(target)
        if start in paths:
            found.append(paths[start])
    return found


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", required=True)
    parser.add_argument("--graph", action="store_true",
                        help="print the edges between folders")
    args = parser.parse_args()

    edges = folder_edges(args.root)
    if args.graph:
        for (source, target), example in sorted(edges.items()):
            print(f"{source} -> {target}: {example}")

    problems = []
    reported = set()
    for loop in cycles(edges):
        if frozenset(loop) in reported:
            continue
        reported.add(frozenset(loop))
        steps = [edges[(a, b)] for a, b in zip(loop, loop[1:])]
        problems.append(f"include loop {' -> '.join(loop)} ("
                        + "; ".join(steps) + ")")
    for top, banned in (("compiler", ("runtime",)),
                        ("runtime", ("compiler",)),
                        ("dialects", ("compiler", "runtime"))):
        for rel in sources(args.root, top):
            for name in includes(args.root, rel):
                if name.split("/")[0] in banned:
                    problems.append(f"{rel} includes {name}: {top}/ may not "
                                    f"include {name.split('/')[0]}/")

    for problem in problems:
        print(problem)
    folders = {node for edge in edges for node in edge}
    summary = f"{len(folders)} folders, {len(edges)} edges"
    if problems:
        print(f"{summary}: {len(problems)} problems")
        return 1
    print(f"{summary}: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
