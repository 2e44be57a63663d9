#!/usr/bin/env python3
"""The layering of src/hmc (docs/architecture.md#layers), checked on the sources.

- The folders of src/hmc include each other without a cycle (core at the bottom).
- No MPI call (an identifier starting MPI_) outside src/hmc/parallel and src/hmc/services.
- Models (models/*.hpp) include hmc headers only from core/, model/, distributions/ (log densities) and keys/ (their
  config keys, typed values and data reader), never io/, sampler/, parallel/ or services/; models/shipped.cpp, the list
  that registers them (app/register.hpp) and so hands them to the services, may.
- Nothing outside io/config (config.cpp, run_config.cpp) reads a config's JSON: no subscript, at(), value() or
  json_pointer of a generic section (/model, /sampler, /output, /diagnostics, /log, /run, /seed) in src/hmc, apps/
  or models/. The rest of hmc reads io::RunConfig; a model reads its /model section through keys::Values.

Usage: check_layering.py SOURCE_DIR   (exit 1 and one line per violation)
"""
import os
import re
import sys

root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "..")
src = os.path.join(root, "src", "hmc")
include = re.compile(r'^\s*#\s*include\s+"hmc/([a-z_]+)/', re.M)
mpi_call = re.compile(r"\bMPI_[A-Za-z_]+\s*\(")
SECTIONS = r"(?:model|sampler|output|diagnostics|log|run|seed)"
# A read: a subscript not assigned to (`out["sampler"] = ...` builds an output), at(), ...
raw_config = re.compile(r'\[\s*"' + SECTIONS + r'"\s*\](?!\s*=[^=])|\b(?:at|value|contains|erase)\(\s*"' + SECTIONS + r'"'
                        r'|json_pointer\(\s*"/' + SECTIONS + r'\b')
CONFIG_READERS = {os.path.join("src", "hmc", "io", "config.cpp"), os.path.join("src", "hmc", "io", "run_config.cpp")}
problems = []


def sources(top):
    for d, _, files in os.walk(top):
        for f in sorted(files):
            if f.endswith((".hpp", ".cpp", ".h")):
                yield os.path.join(d, f)


def strip_comments(text):
    """The text without comments, line breaks kept (so line numbers still hold)."""
    text = re.sub(r"/\*.*?\*/", lambda m: "\n" * m.group(0).count("\n"), text, flags=re.S)
    return re.sub(r"//[^\n]*", "", text)


# Known edges that close a cycle, each to be removed by an issue: listed here (folder,
# folder), the search skips them; an entry whose edge is gone fails as stale. None is left:
# the last (io <-> diagnostics) went when the draw-source interface moved to core/.
KNOWN_BACK_EDGES = set()

edges = {}
for path in sources(src):
    folder = os.path.relpath(path, src).split(os.sep)[0]
    text = open(path, encoding="utf-8").read()
    for target in include.findall(text):
        if target != folder:
            edges.setdefault(folder, {}).setdefault(target, path)
    if folder not in ("parallel", "services") and mpi_call.search(strip_comments(text)):
        problems.append(f"{os.path.relpath(path, root)}: calls MPI outside src/hmc/parallel and src/hmc/services")

# Cycles between folders: depth-first search, reporting each back edge with the file behind it.
state = {}


def visit(node, stack):
    state[node] = "open"
    stack.append(node)
    for nxt, why in sorted(edges.get(node, {}).items()):
        if (node, nxt) in KNOWN_BACK_EDGES:
            continue
        if state.get(nxt) == "open":
            cycle = stack[stack.index(nxt):] + [nxt]
            problems.append(f"include cycle {' -> '.join(cycle)} (e.g. {os.path.relpath(why, root)})")
        elif nxt not in state:
            visit(nxt, stack)
    stack.pop()
    state[node] = "done"


for folder in sorted(edges):
    if folder not in state:
        visit(folder, [])

for a, b in sorted(KNOWN_BACK_EDGES):
    if b not in edges.get(a, {}):
        problems.append(f"the known edge {a} -> {b} is gone: remove it from KNOWN_BACK_EDGES")

allowed_for_models = {"core", "model", "distributions", "keys"}
models = os.path.join(root, "models")
for path in sources(models):
    name = os.path.basename(path)
    if name == "shipped.cpp":
        continue
    for target in include.findall(open(path, encoding="utf-8").read()):
        if target not in allowed_for_models:
            problems.append(f"{os.path.relpath(path, root)}: a model includes hmc/{target}/ (allowed: "
                            f"{', '.join(sorted(allowed_for_models))})")
    if mpi_call.search(strip_comments(open(path, encoding="utf-8").read())):
        problems.append(f"{os.path.relpath(path, root)}: calls MPI")
for path in sources(os.path.join(root, "apps")):
    if mpi_call.search(strip_comments(open(path, encoding="utf-8").read())):
        problems.append(f"{os.path.relpath(path, root)}: calls MPI outside src/hmc/parallel and src/hmc/services")

for top in ("src", "apps", "models"):
    for path in sources(os.path.join(root, top)):
        rel = os.path.relpath(path, root)
        if rel in CONFIG_READERS:
            continue
        for n, line in enumerate(strip_comments(open(path, encoding="utf-8").read()).splitlines(), 1):
            if raw_config.search(line):
                problems.append(f"{rel}:{n}: reads the config's JSON outside io/config (use io::RunConfig): "
                                f"{line.strip()}")

for p in problems:
    print("layering:", p)
if problems:
    sys.exit(1)
order = sorted(edges)
print("layering: ok;", "; ".join(f"{f} -> {', '.join(sorted(edges[f]))}" for f in order))
