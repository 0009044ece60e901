#!/usr/bin/env python3
"""The include half of the layer check (cmake/Conv3dLayers.cmake).

Every `#include "conv3d/..."` (or "conv3d-c/...", or a relative include) of
a header or source under include/ and lib/ must name a file of the
including file's own layer or of a layer it depends on, directly or through
other layers. The layers and the files they own are build/layers.json,
written by CMake from the conv3d_add_library / conv3d_declare_layer
declarations: {"Layer": {"deps": [...], "paths": [...]}}, paths relative to
the source root (the longest one matching a file decides its layer).

  check_layers.py --graph build/layers.json --root . [--stamp file]
  check_layers.py --graph build/layers.json --print

Exit status 0 when every include is allowed (the stamp is then touched), 1
with one line per violation otherwise, 2 for a malformed graph.
"""

import argparse
import json
import os
import re
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')


def load_graph(path):
    with open(path) as f:
        graph = json.load(f)
    for layer, entry in graph.items():
        for dep in entry["deps"]:
            if dep not in graph:
                raise ValueError(f"layer {layer} depends on undeclared layer {dep}")
    return graph


def closure(graph):
    """Each layer's allowed layers: itself and every layer it reaches."""
    allowed = {}

    def visit(layer, path):
        if layer in allowed:
            return allowed[layer]
        if layer in path:
            cycle = " -> ".join(path[path.index(layer):] + [layer])
            raise ValueError(f"the declared layers have a cycle: {cycle}")
        reach = {layer}
        for dep in graph[layer]["deps"]:
            reach |= visit(dep, path + [layer])
        allowed[layer] = reach
        return reach

    for layer in graph:
        visit(layer, [])
    return allowed


def layer_of(graph, relpath):
    """The layer owning `relpath` (source-root relative, '/'-separated)."""
    best, best_len = None, -1
    for layer, entry in graph.items():
        for owned in entry["paths"]:
            owned = owned.rstrip("/")
            if (relpath == owned or relpath.startswith(owned + "/")) and len(owned) > best_len:
                best, best_len = layer, len(owned)
    return best


def resolve(include, including_rel):
    """The source-root relative path an include names, or None for headers
    outside the project (MLIR, LLVM, the standard library)."""
    if include.startswith("conv3d/") or include.startswith("conv3d-c/"):
        return "include/" + include
    # A relative include: beside the including file.
    candidate = os.path.normpath(os.path.join(os.path.dirname(including_rel), include))
    return candidate.replace(os.sep, "/")


def check(graph, root):
    allowed = closure(graph)
    violations = []
    for top in ("include", "lib"):
        for folder, _, files in os.walk(os.path.join(root, top)):
            for name in sorted(files):
                if not name.endswith((".h", ".cpp")):
                    continue
                path = os.path.join(folder, name)
                rel = os.path.relpath(path, root).replace(os.sep, "/")
                source_layer = layer_of(graph, rel)
                if source_layer is None:
                    violations.append(f"{rel}: belongs to no declared layer")
                    continue
                with open(path, encoding="utf-8", errors="replace") as f:
                    for number, line in enumerate(f, 1):
                        match = INCLUDE.match(line)
                        if not match:
                            continue
                        target = resolve(match.group(1), rel)
                        if target is None:
                            continue
                        is_project = match.group(1).startswith(("conv3d/", "conv3d-c/"))
                        if not is_project and not os.path.exists(os.path.join(root, target)):
                            continue  # a system or generated header by a relative name
                        target_layer = layer_of(graph, target)
                        if target_layer is None:
                            continue  # generated headers of no layer's folder
                        if target_layer not in allowed[source_layer]:
                            violations.append(
                                f"{rel}:{number}: layer {source_layer} includes "
                                f'"{match.group(1)}" of layer {target_layer}, which it '
                                f"does not depend on (its layers: "
                                f"{', '.join(sorted(allowed[source_layer] - {source_layer})) or 'none'})")
    return violations


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--graph", required=True)
    parser.add_argument("--root")
    parser.add_argument("--stamp")
    parser.add_argument("--print", action="store_true", help="print the declared layers")
    args = parser.parse_args()
    try:
        graph = load_graph(args.graph)
        allowed = closure(graph)
    except (OSError, ValueError, KeyError) as error:
        print(f"check_layers: {args.graph}: {error}", file=sys.stderr)
        return 2
    if args.print:
        for layer in graph:
            deps = ", ".join(graph[layer]["deps"]) or "-"
            print(f"{layer:14} uses {deps}")
        return 0
    if not args.root:
        parser.error("--root is required to check")
    violations = check(graph, args.root)
    for violation in violations:
        print(f"check_layers: {violation}", file=sys.stderr)
    if violations:
        print(f"check_layers: {len(violations)} include(s) against the declared "
              f"layers (cmake/Conv3dLayers.cmake)", file=sys.stderr)
        return 1
    if args.stamp:
        with open(args.stamp, "w") as f:
            f.write("ok\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
