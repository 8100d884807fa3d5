#!/usr/bin/env python3
"""Golden outputs of the traincast CLI: every command's stdout, stderr, exit status and files.

  golden.py check  TRAINCAST   run every case of cases.txt, compare with expected/ (exit 1 on a
                               difference, printing the first differing lines of each output)
  golden.py update TRAINCAST   run every case, rewrite expected/, and list every figure that moved
                               by more than 0.1 % (file:line, before, after, %) plus lines added or
                               removed; paste that list, with a cause per line, in the closing note

Each line of cases.txt is `NAME: ARGS...` (shell words). In ARGS, $SRC is the repository root,
$SHARED the shared data directory (../shared/data) and $OUT a fresh scratch directory of the case;
every file the command writes under $OUT is kept as expected/NAME/<file> (binary files as their
SHA-256). Outputs are normalised before comparison: the two roots are written as $SRC/$SHARED/$OUT,
and wall-clock figures (`in 0.06 s wall (3,806,348 events/s)`, `wall_s`) are masked, as they
differ from run to run. Nothing else is masked: any other byte that changes is a change.
"""
import difflib
import hashlib
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.dirname(os.path.dirname(HERE))
SHARED = os.path.normpath(os.path.join(SRC, "..", "shared", "data"))
EXPECTED = os.path.join(HERE, "expected")

# Wall-clock figures: the only run-to-run variation in traincast's outputs.
WALL_PATTERNS = [
    (re.compile(r"in [0-9.,]+ (m?s|min|h) wall \([0-9.,]+ events/s\)"), "in <wall> wall (<rate> events/s)"),
    (re.compile(r"[0-9.,]+ (m?s|min|h) wall"), "<wall> wall"),
    (re.compile(r"in [0-9.,]+ s, [0-9.,]+ points/s"), "in <wall> s, <rate> points/s"),
    (re.compile(r"^Wall time +[0-9.,]+ (m?s|min|h)$", re.M), "Wall time  <wall>"),
    (re.compile(r'"(wall_s|wall_time_s|events_per_s)": *[-0-9.eE+]+'), r'"\1": <wall>'),
    (re.compile(r"^(wall_s|wall_time_s|events_per_s),.*$", re.M), r"\1,<wall>"),
]
NUMBER = re.compile(r"[-+]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:[eE][-+]?\d+)?")


def read_cases():
    cases = []
    with open(os.path.join(HERE, "cases.txt"), encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            name, sep, args = line.partition(":")
            if not sep or not re.fullmatch(r"[a-z0-9_]+", name.strip()):
                sys.exit(f"cases.txt:{n}: expected 'name: args' with name in [a-z0-9_]")
            cases.append((name.strip(), args.strip()))
    return cases


def normalise(text, out_dir):
    text = text.replace(out_dir, "$OUT").replace(SHARED, "$SHARED").replace(SRC, "$SRC")
    for pattern, repl in WALL_PATTERNS:
        text = pattern.sub(repl, text)
    return text


def run_case(traincast, name, args, scratch):
    out_dir = os.path.join(scratch, name)
    os.makedirs(out_dir)
    words = [w.replace("$SRC", SRC).replace("$SHARED", SHARED).replace("$OUT", out_dir) for w in shlex.split(args)]
    env = dict(os.environ, TRAINCAST_SOURCE_DIR=SRC)
    env.pop("TRAINCAST_THREADS", None)
    p = subprocess.run([traincast] + words, cwd=SRC, env=env, capture_output=True, timeout=600, stdin=subprocess.DEVNULL)
    files = {
        "stdout.txt": normalise(p.stdout.decode("utf-8", "replace"), out_dir),
        "stderr.txt": normalise(p.stderr.decode("utf-8", "replace"), out_dir),
        "exit_status.txt": f"{p.returncode}\n",
    }
    for root, _, names in os.walk(out_dir):
        for fname in sorted(names):
            path = os.path.join(root, fname)
            rel = os.path.relpath(path, out_dir).replace(os.sep, "__")
            data = open(path, "rb").read()
            try:
                files["out__" + rel] = normalise(data.decode("utf-8"), out_dir)
            except UnicodeDecodeError:
                files["out__" + rel + ".sha256"] = hashlib.sha256(data).hexdigest() + "\n"
    return files


def load_expected(name):
    d = os.path.join(EXPECTED, name)
    if not os.path.isdir(d):
        return None
    return {f: open(os.path.join(d, f), encoding="utf-8").read() for f in sorted(os.listdir(d))}


def figure_changes(label, before, after):
    """Lines whose numbers moved by more than 0.1 %, and lines added or removed."""
    rows = []
    a_lines, b_lines = before.splitlines(), after.splitlines()
    masked = lambda lines: [NUMBER.sub("#", l) for l in lines]
    sm = difflib.SequenceMatcher(None, masked(a_lines), masked(b_lines), autojunk=False)
    for op, i1, i2, j1, j2 in sm.get_opcodes():
        if op == "equal":
            pairs = zip(range(i1, i2), range(j1, j2))
        elif op == "replace" and i2 - i1 == j2 - j1:
            pairs = zip(range(i1, i2), range(j1, j2))
        else:
            for i in range(i1, i2):
                rows.append(f"{label}:{i + 1}: removed: {a_lines[i].strip()[:120]}")
            for j in range(j1, j2):
                rows.append(f"{label}:{j + 1}: added: {b_lines[j].strip()[:120]}")
            continue
        for i, j in pairs:
            if a_lines[i] == b_lines[j]:
                continue
            na, nb = NUMBER.findall(a_lines[i]), NUMBER.findall(b_lines[j])
            if len(na) != len(nb) or masked([a_lines[i]]) != masked([b_lines[j]]):
                rows.append(f"{label}:{j + 1}: text: '{a_lines[i].strip()[:100]}' -> '{b_lines[j].strip()[:100]}'")
                continue
            for x, y in zip(na, nb):
                fx, fy = float(x.replace(",", "")), float(y.replace(",", ""))
                if fx == fy:
                    continue
                pct = (fy - fx) / abs(fx) * 100 if fx != 0 else float("inf")
                if abs(pct) > 0.1:
                    rows.append(f"{label}:{j + 1}: {x} -> {y} ({pct:+.2f} %)  [{b_lines[j].strip()[:80]}]")
    return rows


def main():
    if len(sys.argv) != 3 or sys.argv[1] not in ("check", "update"):
        sys.exit(__doc__)
    mode, traincast = sys.argv[1], os.path.abspath(sys.argv[2])
    cases = read_cases()
    scratch = tempfile.mkdtemp(prefix="traincast_golden_")
    failures, failed, changes = [], set(), []
    try:
        for name, args in cases:
            got = run_case(traincast, name, args, scratch)
            want = load_expected(name)
            if mode == "check":
                if want is None:
                    failures.append(f"{name}: no expected output (run golden.py update)")
                    failed.add(name)
                    continue
                for f in sorted(set(got) | set(want)):
                    if got.get(f) != want.get(f):
                        diff = difflib.unified_diff((want.get(f) or "").splitlines(), (got.get(f) or "").splitlines(),
                                                    f"expected/{name}/{f}", f"got/{name}/{f}", lineterm="", n=1)
                        failures.append("\n".join(list(diff)[:40]))
                        failed.add(name)
            else:
                want = want or {}
                for f in sorted(set(got) | set(want)):
                    if got.get(f) != want.get(f):
                        if f not in want:
                            changes.append(f"{name}/{f}: new file")
                        elif f not in got:
                            changes.append(f"{name}/{f}: removed")
                        else:
                            changes += figure_changes(f"{name}/{f}", want[f], got[f]) or [f"{name}/{f}: changed (no figure > 0.1 %)"]
                d = os.path.join(EXPECTED, name)
                shutil.rmtree(d, ignore_errors=True)
                os.makedirs(d)
                for f, text in got.items():
                    with open(os.path.join(d, f), "w", encoding="utf-8") as fh:
                        fh.write(text)
        if mode == "update":
            known = {n for n, _ in cases}
            for stale in sorted(set(os.listdir(EXPECTED)) - known) if os.path.isdir(EXPECTED) else []:
                shutil.rmtree(os.path.join(EXPECTED, stale))
                changes.append(f"{stale}: case removed")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    if mode == "check":
        for f in failures:
            print(f, "\n")
        print(f"golden: {len(cases) - len(failed)} of {len(cases)} cases identical")
        sys.exit(1 if failures else 0)
    print(f"golden: {len(cases)} cases written to {os.path.relpath(EXPECTED, SRC)}; {len(changes)} change(s):")
    for c in changes:
        print("  " + c)


if __name__ == "__main__":
    main()
