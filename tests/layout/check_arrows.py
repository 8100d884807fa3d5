#!/usr/bin/env python3
"""layout.arrows: every #include runs along the module graph that the CMake targets declare.

usage: check_arrows.py MODULES_FILE ROOT [DIR...]

MODULES_FILE is written by CMake (cmake/traincast_module.cmake): one line per module,
`FOLDER: DEP_FOLDER...`, read from each module target's own target_link_libraries, so the
graph checked here is the one the build links. ROOT is the repository root; DIRs (default:
sim models calibrate tools) are scanned for .h/.cc/.cu files.

A file belongs to the module whose folder is the longest prefix of its path. An include
`#include "a/b.h"` that names a file of the repository is allowed when it is in the same module
or in a module its module reaches through the declared dependencies; anything else, a module
graph with a cycle, an include cycle between files, or a source file under no module, is
reported as `path:line: ...` and the exit status is 1.
"""
import os
import re
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')
SOURCE_EXT = (".h", ".cc", ".cu", ".hpp", ".cpp")


def read_modules(path):
    modules = {}
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            folder, sep, deps = line.partition(":")
            if not sep:
                sys.exit(f"{path}:{n}: expected 'FOLDER: DEPS...'")
            modules[folder.strip()] = deps.split()
    return modules


def module_of(rel, modules):
    best = None
    for folder in modules:
        if rel == folder or rel.startswith(folder + "/"):
            if best is None or len(folder) > len(best):
                best = folder
    return best


def closure(modules):
    reach = {}

    def visit(m, stack):
        if m in reach:
            return reach[m]
        if m in stack:
            return set()
        stack.append(m)
        out = set()
        for d in modules.get(m, []):
            out.add(d)
            out |= visit(d, stack)
        stack.pop()
        reach[m] = out
        return out

    for m in modules:
        visit(m, [])
    return reach


def module_cycles(modules):
    errors, state = [], {}

    def dfs(m, path):
        state[m] = 1
        for d in modules.get(m, []):
            if d not in modules:
                errors.append(f"module {m}: depends on {d}, which is not a module")
            elif state.get(d) == 1:
                cyc = path[path.index(d):] + [d]
                errors.append("module cycle: " + " -> ".join(cyc))
            elif d not in state:
                dfs(d, path + [d])
        state[m] = 2

    for m in sorted(modules):
        if m not in state:
            dfs(m, [m])
    return errors


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    modules = read_modules(sys.argv[1])
    root = os.path.abspath(sys.argv[2])
    dirs = sys.argv[3:] or ["sim", "models", "calibrate", "tools"]
    reach = closure(modules)
    errors = module_cycles(modules)
    files, edges = [], {}
    for d in dirs:
        for base, _, names in os.walk(os.path.join(root, d)):
            for name in sorted(names):
                if name.endswith(SOURCE_EXT):
                    files.append(os.path.relpath(os.path.join(base, name), root))
    counted = 0
    for rel in sorted(files):
        mod = module_of(rel, modules)
        if mod is None:
            errors.append(f"{rel}:1: belongs to no module (no CMake module owns its folder)")
            continue
        with open(os.path.join(root, rel), encoding="utf-8", errors="replace") as f:
            for n, line in enumerate(f, 1):
                m = INCLUDE.match(line)
                if not m:
                    continue
                target = m.group(1)
                if not os.path.isfile(os.path.join(root, target)):
                    continue  # generated (traincast.pb.h) or system-style include
                counted += 1
                edges.setdefault(rel, []).append((target, n))
                tmod = module_of(target, modules)
                if tmod is None:
                    errors.append(f"{rel}:{n}: includes {target}, which belongs to no module")
                elif tmod != mod and tmod not in reach[mod]:
                    allowed = ", ".join(sorted(reach[mod])) or "nothing outside itself"
                    errors.append(f"{rel}:{n}: includes {target} of {tmod}, against the module graph "
                                  f"({mod} may include {allowed})")
    # Include cycles between files (a header pair including each other, or longer).
    state = {}

    def dfs(f, path):
        state[f] = 1
        for t, n in edges.get(f, []):
            if state.get(t) == 1:
                cyc = path[path.index(t):] + [t]
                errors.append(f"{f}:{n}: include cycle: " + " -> ".join(cyc))
            elif t not in state:
                dfs(t, path + [t])
        state[f] = 2

    for f in sorted(edges):
        if f not in state:
            dfs(f, [f])
    for e in errors:
        print(e)
    print(f"layout.arrows: {len(modules)} modules, {len(files)} files, {counted} includes checked, "
          f"{len(errors)} problem(s)")
    sys.exit(1 if errors else 0)


if __name__ == "__main__":
    main()
