#!/usr/bin/python3
"""The layers' include order: no file includes a header of a layer above its own.

    layer_order.py [--root DIR]    check DIR (default: this checkout); exit 1 on a violation
    layer_order.py --self-test     check that a wrong include in a scratch tree is reported

The order is read from the table of docs/design.md section 1 (lowest layer first). A file
belongs to the layer of its folder: include/fracmfg/<layer>/, src/<layer>/ (with
src/kernels/cuda in kernels), drivers/ (the top). Every `#include "fracmfg/<layer>/..."`,
`#include <fracmfg/<layer>/...>` and private `#include "<layer>/..."` must name the file's
own layer or one listed before it; each violation is printed as file:line.
"""
import argparse
import os
import re
import sys
import tempfile

SOURCE_SUFFIXES = (".hpp", ".h", ".cpp", ".cu", ".cuh")
INCLUDE = re.compile(r'^\s*#\s*include\s*["<]((?:fracmfg/)?([A-Za-z_0-9]+)/[^">]+)[">]')
TABLE_ROW = re.compile(r"^\|\s*`([a-z_]+)`\s*\|")
CHAIN = re.compile(r"^\s+[a-z_]+(\s*->\s*[a-z_]+)+\s*$")


def layer_order(design):
    """The layer names of the table in section 1 of docs/design.md, lowest first; the
    section's `a -> b -> ...` line, where there is one, must list the same order."""
    order, chains, in_section = [], [], False
    with open(design, encoding="utf-8") as f:
        for line in f:
            if line.startswith("## "):
                in_section = line.startswith("## 1.")
                continue
            if not in_section:
                continue
            m = TABLE_ROW.match(line)
            if m:
                order.append(m.group(1))
            elif CHAIN.match(line):
                chains.append(line.split("->"))
    if not order:
        sys.exit(f"layer_order: no layer table found in section 1 of {design}")
    for chain in chains:
        if [name.strip() for name in chain] != order:
            sys.exit(f"layer_order: {design} section 1 lists the order "
                     f"{' -> '.join(n.strip() for n in chain)} but its table "
                     f"{' -> '.join(order)}")
    return order


def file_layer(rel, layers):
    parts = rel.split("/")
    if parts[0] == "drivers":
        return "drivers"
    if parts[0] == "include" and len(parts) > 3 and parts[1] == "fracmfg":
        return parts[2] if parts[2] in layers else None
    if parts[0] == "src" and len(parts) > 2:
        return parts[1] if parts[1] in layers else None
    return None


def check(root):
    order = layer_order(os.path.join(root, "docs", "design.md"))
    rank = {name: i for i, name in enumerate(order)}
    problems, files = [], 0
    for top in ("include", "src", "drivers"):
        for dirpath, dirnames, filenames in os.walk(os.path.join(root, top)):
            dirnames.sort()
            for name in sorted(filenames):
                if not name.endswith(SOURCE_SUFFIXES):
                    continue
                path = os.path.join(dirpath, name)
                rel = os.path.relpath(path, root).replace(os.sep, "/")
                own = file_layer(rel, rank)
                if own is None:
                    problems.append(f"{rel}: in no layer folder of docs/design.md section 1")
                    continue
                files += 1
                with open(path, encoding="utf-8", errors="replace") as f:
                    for number, line in enumerate(f, 1):
                        m = INCLUDE.match(line)
                        if not m or m.group(2) not in rank:
                            continue
                        target = m.group(2)
                        if rank[target] > rank[own]:
                            problems.append(
                                f"{rel}:{number}: layer {own} includes {m.group(1)} of layer "
                                f"{target}, which is above it")
    return order, files, problems


def self_test():
    with tempfile.TemporaryDirectory() as root:
        os.makedirs(os.path.join(root, "docs"))
        with open(os.path.join(root, "docs", "design.md"), "w") as f:
            f.write("## 1. Layers\n\n| layer | what |\n|---|---|\n"
                    "| `core` | a |\n| `exec` | b |\n| `frac` | c |\n\n    core -> exec -> frac\n\n"
                    "## 2. Next\n| `mfg` | d |\n")
        files = {
            "include/fracmfg/core/a.hpp": "#pragma once\n",
            "include/fracmfg/exec/b.hpp": '#pragma once\n#include "fracmfg/core/a.hpp"\n',
            "src/exec/b.cpp": '#include "fracmfg/exec/b.hpp"\n\n#include "core/private.hpp"\n'
                              '#  include <fracmfg/frac/c.hpp>\n',
            "src/frac/c.cpp": '#include "fracmfg/exec/b.hpp"\n#include "mfg/unknown.hpp"\n',
        }
        for rel, text in files.items():
            os.makedirs(os.path.dirname(os.path.join(root, rel)), exist_ok=True)
            with open(os.path.join(root, rel), "w") as f:
                f.write(text)
        order, _, problems = check(root)
        want = ["src/exec/b.cpp:4: layer exec includes fracmfg/frac/c.hpp of layer frac, "
                "which is above it"]
        if order != ["core", "exec", "frac"] or problems != want:
            print(f"layer_order: self-test failed: order {order}, problems {problems}")
            return 1
    print("layer_order: self-test: the wrong include was reported as file:line")
    return 0


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--root", default=os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                  "..", ".."))
    p.add_argument("--self-test", action="store_true")
    a = p.parse_args()
    if a.self_test:
        return self_test()
    order, files, problems = check(os.path.abspath(a.root))
    for line in problems:
        print(line)
    print(f"layer_order: {files} files, order {' < '.join(order)}: "
          + (f"{len(problems)} violation(s)" if problems else "no file includes a layer above its own"))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
