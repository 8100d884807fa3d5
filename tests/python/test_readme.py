"""The README's example outputs are what traincast prints today (issue 21: a fresh user found a
stale nccl-tests excerpt). Each code block whose lines start with `$ traincast ARGS` is run in
process (traincast.cli); every other line of the block must appear in the output of the command
above it: whole, or up to a trailing " ..." that marks a shortened line. The tour's first block
is `traincast run` (the README says so in the sentence before it)."""

import os
import pathlib
import re
import shlex

import pytest

import traincast

SRC = pathlib.Path(os.environ.get("TRAINCAST_SOURCE_DIR", pathlib.Path(__file__).resolve().parents[2]))


def readme_examples():
    text = (SRC / "README.md").read_text()
    tour = text[text.index("## A five-minute tour"):text.index("## What it does")]
    examples = []
    for i, block in enumerate(re.findall(r"```\n(.*?)```", tour, re.S)):
        command, expected = (["run"] if i == 0 else None), []
        for line in block.splitlines():
            if line.startswith("$ traincast "):
                if command is not None and expected:
                    examples.append((command, expected))
                command, expected = shlex.split(line[len("$ traincast "):]), []
            elif line.strip() and command is not None:
                expected.append(line)
        if command is not None and expected:
            examples.append((command, expected))
    return examples


@pytest.mark.parametrize("command,expected", readme_examples(), ids=[" ".join(c) for c, _ in readme_examples()])
def test_readme_excerpt_matches_the_output(command, expected):
    os.chdir(SRC)
    r = traincast.cli(*command)
    assert r.status == 0, r.stderr
    lines = r.stdout.splitlines()
    for want in expected:
        shortened = want.endswith(" ...")
        core = want[:-4] if shortened else want
        assert any((core in line) if shortened else (line.rstrip() == core.rstrip() or core.strip() == line.strip())
                   for line in lines), f"README line not in `traincast {' '.join(command)}` output:\n{want}\n---\n{r.stdout}"


def test_the_readme_has_examples():
    assert len(readme_examples()) >= 4
