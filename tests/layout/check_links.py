#!/usr/bin/env python3
"""Fails when a module's compiled code calls into a module the module graph does not let it use.

  check_links.py MODULE_GRAPH MODULE_LIBS

MODULE_GRAPH: `FOLDER: DEP_FOLDER...` per module (cmake/traincast_module.cmake writes it).
MODULE_LIBS: `FOLDER: LIBRARY_FILE` per module with sources, the static library the build made.

For every module M, each symbol M's objects leave undefined (nm, after removing what M itself
defines) that another module X defines must be defined in M's dependencies, direct or transitive:
if every module that defines it is outside them, M calls upward or sideways and the check fails,
naming the module, the symbol (demangled) and where it is defined. Symbols no module defines (the
C++ runtime, Boost, TBB, protobuf) are not judged. This is the link the shared-library build with
-Wl,--no-undefined would refuse, checked on the release build's own static libraries in seconds
(docs/layout.md). Exit status 0 when clean, 1 on a violation, 2 on unreadable input.
"""
import subprocess
import sys


def read_pairs(path):
    """{folder: [words after the colon]} from a `FOLDER: WORD...` file; '#' lines are comments."""
    out = {}
    try:
        with open(path, encoding="utf-8") as f:
            for number, line in enumerate(f, 1):
                line = line.strip()
                if not line or line.startswith("#"):
                    continue
                if ":" not in line:
                    sys.exit(f"{path}:{number}: expected 'FOLDER: ...', got {line!r}")
                folder, rest = line.split(":", 1)
                out[folder.strip()] = rest.split()
    except OSError as e:
        print(f"{path}: {e.strerror}", file=sys.stderr)
        sys.exit(2)
    return out


def symbols(lib):
    """(defined, undefined) global symbol names of a static library (mangled)."""
    try:
        text = subprocess.run(["nm", "-g", "-P", lib], check=True, capture_output=True, text=True).stdout
    except (OSError, subprocess.CalledProcessError) as e:
        print(f"{lib}: nm failed: {e}", file=sys.stderr)
        sys.exit(2)
    defined, undefined = set(), set()
    for line in text.splitlines():
        parts = line.split()
        # "name type [value size]"; archive member headers end in ':' or '[member]:'.
        if len(parts) < 2 or line.endswith(":"):
            continue
        name, kind = parts[0], parts[1]
        if kind in ("U", "w", "v"):
            undefined.add(name)
        else:
            defined.add(name)
    return defined, undefined


def closure(graph, folder):
    seen, todo = set(), list(graph.get(folder, []))
    while todo:
        d = todo.pop()
        if d not in seen:
            seen.add(d)
            todo.extend(graph.get(d, []))
    return seen


def demangle(names):
    try:
        out = subprocess.run(["c++filt"], input="\n".join(names), check=True, capture_output=True, text=True).stdout
        return out.splitlines()
    except (OSError, subprocess.CalledProcessError):
        return list(names)


def main():
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    graph = read_pairs(sys.argv[1])
    libs = {folder: words[0] for folder, words in read_pairs(sys.argv[2]).items() if words}
    unknown = sorted(set(libs) - set(graph))
    if unknown:
        print(f"{sys.argv[2]}: modules missing from {sys.argv[1]}: {', '.join(unknown)}", file=sys.stderr)
        return 2
    table = {folder: symbols(lib) for folder, lib in libs.items()}
    owners = {}
    for folder, (defined, _) in table.items():
        for name in defined:
            owners.setdefault(name, set()).add(folder)
    problems = []
    for folder in sorted(table):
        defined, undefined = table[folder]
        allowed = closure(graph, folder)
        bad = {}
        for name in sorted(undefined - defined):
            where = owners.get(name, set()) - {folder}
            if where and not (where & allowed):
                bad[name] = sorted(where)
        for (name, where), pretty in zip(bad.items(), demangle(list(bad))):
            problems.append(f"{folder} ({libs[folder]}) uses {pretty}, defined only in {', '.join(where)}: "
                            f"against the module graph ({folder} may use: {' '.join(sorted(allowed)) or 'nothing'})")
    for p in problems:
        print(p)
    if problems:
        print(f"{len(problems)} call(s) against the module graph", file=sys.stderr)
        return 1
    print(f"{len(table)} module libraries: every call stays within the module graph")
    return 0


if __name__ == "__main__":
    sys.exit(main())
