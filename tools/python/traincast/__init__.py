"""traincast in Python: the simulator's commands, in this process, returning Python data.

    import traincast
    report = traincast.run()                                    # the embedded default scenario
    report["iteration_time_s"]                                  # keys: docs/outputs.md
    traincast.run("scenarios/llama3_70b_dgx_h100_8nodes.textproto",
                  overrides={"cluster.num_nodes": 16, "workload.parallel.dp": 16})
    points = traincast.sweep("scenarios/sweeps/layout_64gpu.sweep.textproto")   # pandas DataFrame

Each function runs the same code as the `traincast` subcommand of the same name (the compiled
module traincast._traincast calls the CLI's subcommand functions in this process; no `traincast`
binary is needed) and returns what that subcommand writes with --json or --csv, as Python data:
run, plan, compare and catalog give dicts, nccl_tests a list of dicts, sweep and validate a pandas
DataFrame equal to the CLI's CSV. A scenario is a file path, the text of a scenario (protobuf
text format, or JSON when it starts with "{") or a dict in the JSON form; overrides are a dict
{field: value} or a list of "field=value" strings, as --set takes them. Bad input raises
ScenarioError (exit status 2 of the CLI) with .file, .line, .column and .field of its first
problem and every problem in .errors; Ctrl-C raises KeyboardInterrupt. Calls are serialised (one
at a time per process). See docs/python.md.
"""

from __future__ import annotations

import csv
import io
import json
import os
import re
import tempfile
import threading
from dataclasses import dataclass
from typing import Any, Iterable, Mapping, Optional, Sequence, Union

from . import _traincast

__all__ = ["run", "plan", "compare", "cluster", "sweep", "nccl_tests", "catalog", "validate", "cli", "version",
           "ScenarioError", "TraincastError", "Problem", "CommandResult"]

Scenario = Union[None, str, os.PathLike, Mapping[str, Any]]
Overrides = Union[None, Mapping[str, Any], Iterable[str]]

_lock = threading.Lock()  # one subcommand at a time: they install signal handlers and use TBB globally


@dataclass(frozen=True)
class Problem:
    """One problem of an input, as the CLI prints it: `file:line:column: field: message`.
    file is the path, "<dict>" or "<text>" for a scenario given as data, "overrides" for an override,
    or None; line and column are 1-based (None when the problem has no position); field is the
    field's path (e.g. "workload.parallel.tp") or None."""
    text: str
    file: Optional[str] = None
    line: Optional[int] = None
    column: Optional[int] = None
    field: Optional[str] = None


_POSITIONED = re.compile(r"^(?P<file>.+?):(?P<line>\d+):(?P<col>\d+): (?:(?P<field>[A-Za-z_][\w.\[\]]*): )?")
_FIELD_ONLY = re.compile(r"^(?P<file>overrides|vary|--set|--vary|.+?\.(?:textproto|txtpb|pbtxt|txt|json|csv)|<dict>|<text>): "
                         r"(?:(?P<field>[A-Za-z_][\w.\[\]]*): )?")


def _parse_problem(text: str, known_files: Sequence[str] = ()) -> Problem:
    for path in sorted(known_files, key=len, reverse=True):  # a path as given may hold ':' or '.'
        if path and text.startswith(path + ":"):
            rest = text[len(path):]
            m = re.match(r"^:(?P<line>\d+):(?P<col>\d+): (?:(?P<field>[A-Za-z_][\w.\[\]]*): )?", rest)
            if m:
                return Problem(text, path, int(m["line"]), int(m["col"]), m["field"])
            m = re.match(r"^: (?:(?P<field>[a-z_][\w.\[\]]*): )?", rest)
            return Problem(text, path, None, None, m["field"] if m else None)
    m = _POSITIONED.match(text)
    if m:
        return Problem(text, m["file"], int(m["line"]), int(m["col"]), m["field"])
    m = _FIELD_ONLY.match(text)
    if m:
        return Problem(text, m["file"], None, None, m["field"])
    return Problem(text)


class ScenarioError(ValueError):
    """Bad input (the CLI's exit status 2): a scenario, override, sweep, case file or argument that
    cannot be used. .errors lists every problem (Problem); .file, .line, .column and .field are the
    first one's."""

    def __init__(self, message: str, known_files: Sequence[str] = ()):
        lines = [ln[len("traincast: "):] if ln.startswith("traincast: ") else ln
                 for ln in message.strip("\n").split("\n") if ln.strip()]
        self.errors = [_parse_problem(ln, known_files) for ln in lines] or [Problem(message)]
        first = self.errors[0]
        self.file, self.line, self.column, self.field = first.file, first.line, first.column, first.field
        super().__init__("\n".join(lines) if lines else message)


class TraincastError(RuntimeError):
    """A subcommand that ran but failed: a check it makes failed, or an internal error (exit
    status 1, or another non-zero status). .status is the exit status, .stderr what it printed."""

    def __init__(self, status: int, stderr: str, stdout: str = ""):
        self.status, self.stderr, self.stdout = status, stderr, stdout
        super().__init__(f"traincast exited {status}: {stderr.strip() or stdout.strip()[-2000:]}")


@dataclass(frozen=True)
class CommandResult:
    """What cli() gives back: the exit status and the text the subcommand printed."""
    status: int
    stdout: str
    stderr: str


def cli(*args: Any) -> CommandResult:
    """Runs `traincast ARGS...` in this process, exactly as the command line does (any subcommand,
    e.g. cli("calibrate", "fit", ...)); never raises for its exit status. Ctrl-C stops it (status
    130) and raises KeyboardInterrupt."""
    with _lock:
        status, out, err = _traincast.call([os.fspath(a) if isinstance(a, os.PathLike) else str(a) for a in args])
    if status in (130, 143):
        raise KeyboardInterrupt(err.strip())
    return CommandResult(status, out, err)


def version() -> str:
    """The version line `traincast --version` prints."""
    return cli("--version").stdout.strip()


def _python_names(message: str, names: Mapping[str, str]) -> str:
    """The CLI's message with each option this call passed named as the Python argument that gave
    it (names: {"--set": "overrides", "--threads": "threads", ...}): where a line starts with it
    ("--set: workload.parallel.tp: ..." -> "overrides: workload.parallel.tp: ...", "--threads: got
    -1" -> "threads: got -1"), in a note's "as changed by --set x=1" and in compare's note "--set F
    failed on this scenario; compare applies every --set ..." ("overrides entry F ..."). The rest
    of a message (an example such as "e.g. --set cluster.num_nodes=2") stays the CLI's."""
    lines = []
    for line in message.split("\n"):
        lead = "traincast: " if line.startswith("traincast: ") else ""
        body = line[len(lead):]
        for flag, name in names.items():
            if body.startswith(flag) and body[len(flag):len(flag) + 1] in (":", " "):
                body = name + body[len(flag):]
                break
        note = body.find(": note: --set ")
        if note >= 0 and "--set" in names:
            # compare's note at a scenario a --set failed on ("b.textproto: note: --set FIELD failed
            # on this scenario; compare applies every --set to each scenario"): the overrides entry.
            entry = names["--set"] + " entry "
            body = body[:note] + body[note:].replace("--set ", entry)
        at = body.find(" as changed by ")
        if at >= 0:
            tail = body[at:]
            for flag, name in names.items():
                tail = tail.replace(f" {flag} ", f" {name} ")
            body = body[:at] + tail
        lines.append(lead + body)
    return "\n".join(lines)


class _Call:
    """One subcommand call with a private temporary directory for the files it writes and for
    scenarios given as text or dicts; their temporary paths are named "<dict>"/"<text>" in errors,
    and the options in `names` ({"--set": "overrides", ...}) as the Python arguments that gave them."""

    def __init__(self, names: Optional[Mapping[str, str]] = None):
        self._names = dict(names or {})
        self._dir = tempfile.TemporaryDirectory(prefix="traincast-")
        self.dir = self._dir.name
        self._labels: dict[str, str] = {}
        self._inputs: list = []  # paths as the caller gave them, for ScenarioError.file
        self._count = 0
        self._arguments: dict[str, str] = {}  # a path on the command line -> the argument that gave it

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self._dir.cleanup()

    def out(self, name: str) -> str:
        return os.path.join(self.dir, name)

    def _write(self, text: str, suffix: str, label: str) -> str:
        self._count += 1
        path = os.path.join(self.dir, f"input{self._count}{suffix}")
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
        self._labels[path] = label
        return path

    def scenario(self, scenario: Scenario, argument: str = "scenario") -> Optional[str]:
        """A path for the command line: the file itself, or a temporary copy of text or a dict (its
        relative `profile` made absolute against the current directory, where a file's would be
        taken against the file's directory). argument: the Python argument that gave it, for errors."""
        if scenario is None:
            return None
        if isinstance(scenario, os.PathLike):
            self._inputs.append(os.fspath(scenario))
            self._arguments[os.fspath(scenario)] = argument
            return os.fspath(scenario)
        if isinstance(scenario, Mapping):
            data = dict(scenario)
            _check_json_data(data, "")
            if isinstance(data.get("profile"), str) and data["profile"] and not os.path.isabs(data["profile"]):
                data["profile"] = os.path.abspath(data["profile"])
            return self._write(json.dumps(data, allow_nan=False), ".json", "<dict>")
        if not isinstance(scenario, str):
            raise TypeError(f"scenario: got {type(scenario).__name__} (expected a path, scenario text or a dict)")
        if not scenario.strip():
            raise ScenarioError("scenario: got an empty string (expected a path, scenario text or a dict; None for "
                                "the embedded default)")
        if "\n" not in scenario and "{" not in scenario:
            self._inputs.append(scenario)
            self._arguments[scenario] = argument
            return scenario  # a path (a missing file is the command's error, named as given)
        is_json = scenario.lstrip().startswith("{")
        return self._write(_absolute_paths(scenario, ("profile",), is_json), ".json" if is_json else ".textproto",
                           "<text>")

    def sweep_file(self, sweep: Union[str, os.PathLike]) -> str:
        if isinstance(sweep, os.PathLike):
            self._inputs.append(os.fspath(sweep))
            self._arguments[os.fspath(sweep)] = "sweep_file"
            return os.fspath(sweep)
        if isinstance(sweep, str) and not sweep.strip():
            raise ScenarioError("sweep: got an empty string (expected a path or sweep text)")
        if isinstance(sweep, str) and "\n" not in sweep and "{" not in sweep:
            self._inputs.append(sweep)
            self._arguments[sweep] = "sweep_file"
            return sweep
        if not isinstance(sweep, str):
            raise TypeError(f"sweep: got {type(sweep).__name__} (expected a path or sweep text)")
        return self._write(_absolute_paths(sweep, ("scenario_file", "profile"), False), ".sweep.textproto", "<text>")

    def _refuse_nul(self, args: Sequence[Any]) -> None:
        """Raises ScenarioError naming the Python argument (overrides, scenario, ...) whose text
        holds a NUL character: the CLI would say "argument 3", a position on a command line this
        call never showed."""
        for i, a in enumerate(args):
            text = os.fspath(a) if isinstance(a, os.PathLike) else str(a)
            at = text.find("\0")
            if at < 0:
                continue
            before = str(args[i - 1]) if i > 0 else ""
            name = self._names.get(before) or self._arguments.get(text, "an argument")
            shown = text if len(text) <= 60 else text[:60] + "..."
            raise ScenarioError(f"{name}: {shown!r} contains a NUL character at offset {at} (expected a str without "
                                "NUL: traincast is given it as a command-line argument, which cannot carry one)")

    def run(self, args: Sequence[Any], ok: Sequence[int] = (0,)) -> CommandResult:
        self._refuse_nul(args)
        r = cli(*args)
        if r.status == 2:
            err = r.stderr
            for path, label in self._labels.items():
                err = err.replace(path, label)
            # The CLI's flag, as this module spells it (run(..., force=True)).
            err = err.replace("(pass --force to overwrite it)", "(pass force=True to overwrite it)")
            err = _python_names(err, self._names)
            raise ScenarioError(err or r.stdout, [*self._inputs, *self._labels.values()])
        if r.status not in ok:
            raise TraincastError(r.status, r.stderr, r.stdout)
        return r


def _absolute_paths(text: str, fields: Sequence[str], is_json: bool) -> str:
    """Text with each relative path in `fields` made absolute against the current directory."""
    for name in fields:
        pattern = (r'("%s"\s*:\s*")([^"]+)(")' if is_json else r'(\b%s\s*:\s*")([^"]+)(")') % re.escape(name)
        text = re.sub(pattern, lambda m: m[1] + (m[2] if os.path.isabs(m[2]) else os.path.abspath(m[2])) + m[3], text)
    return text


def _check_json_data(value: Any, where: str) -> None:
    """Refuses, naming the field, what JSON cannot hold or a scenario never takes (NaN, infinity,
    sets, objects), before anything is written."""
    if isinstance(value, Mapping):
        for k, v in value.items():
            if not isinstance(k, str):
                raise ScenarioError(f"<dict>: {where or '(top)'}: key {k!r} is a {type(k).__name__} (expected a "
                                    "field name, a string)")
            _check_json_data(v, f"{where}.{k}" if where else k)
    elif isinstance(value, (list, tuple)):
        for i, v in enumerate(value):
            _check_json_data(v, f"{where}[{i}]")
    elif isinstance(value, float):
        if value != value or value in (float("inf"), float("-inf")):
            raise ScenarioError(f"<dict>: {where}: got {value} (expected a finite number)")
    elif not isinstance(value, (str, bool, int)) and value is not None:
        raise ScenarioError(f"<dict>: {where}: got a {type(value).__name__} (expected a number, string, bool, "
                            "list or dict)")


def _int_arg(name: str, value: Any) -> Optional[int]:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name}: got {value!r} (expected an integer)")
    return value


def _value_text(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    return str(v)


def _set_args(overrides: Overrides) -> list:
    if overrides is None:
        return []
    if isinstance(overrides, str):
        raise TypeError('overrides: got a string (expected a dict {field: value} or a list of "field=value")')
    if isinstance(overrides, Mapping):
        items = [f"{k}={_value_text(v)}" for k, v in overrides.items()]
    elif isinstance(overrides, Iterable) and all(isinstance(o, str) for o in overrides):
        items = list(overrides)
    else:
        raise TypeError(f"overrides: got {overrides!r} (expected a dict {{field: value}} or a list of "
                        '"field=value" strings)')
    return [a for item in items for a in ("--set", item)]


def _path_arg(name: str, value: Any) -> Optional[str]:
    if value is None:
        return None
    if not isinstance(value, (str, os.PathLike)):
        raise TypeError(f"{name}: got {value!r} (expected a file path)")
    return os.fspath(value)


def _opt(flag: str, value: Any) -> list:
    return [] if value is None else [flag, _value_text(value)]


def _flag(flag: str, value: Any) -> list:
    if not isinstance(value, bool):
        raise TypeError(f"{flag.lstrip('-')}: got {value!r} (expected True or False)")
    return [flag] if value else []


def _read_json(path: str) -> Any:
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def _pandas(function: str):
    """The pandas module, checked before `function` (sweep, validate) runs anything: only those two
    need it. Raises ModuleNotFoundError (an ImportError) saying what to install when it is missing."""
    try:
        import pandas as pd
    except ModuleNotFoundError as e:
        raise ModuleNotFoundError(f"traincast.{function}() returns a pandas DataFrame, but pandas is not installed (expected "
                          "pandas importable: `pip install pandas`, or `apt-get install python3-pandas` on Debian/"
                          "Ubuntu; tools/setup installs it)", name="pandas") from e
    return pd


def _read_csv_frame(path: str, pd):
    """A CSV the CLI wrote, as a DataFrame (pd: the pandas module): its '#' provenance lines dropped,
    values typed by pandas."""
    with open(path, encoding="utf-8") as f:
        return pd.read_csv(io.StringIO("".join(line for line in f if not line.startswith("#"))))


def run(scenario: Scenario = None, overrides: Overrides = None, *, profile: Optional[str] = None,
        threads: Optional[int] = None, trace: Optional[str] = None, force: bool = False) -> dict:
    """`traincast run`: one training iteration of `scenario` (the embedded default when None) with
    `overrides`; returns the JSON report as a dict (keys and units: docs/outputs.md), e.g.
    run()["iteration_time_s"]. profile: a calibration profile file; trace: also write a
    Chrome/Perfetto trace to this path (an existing file is refused unless force=True)."""
    with _Call({"--set": "overrides", "--threads": "threads", "--profile": "profile", "--trace": "trace"}) as c:
        path = c.scenario(scenario)
        args = ["run"] + ([path] if path else []) + _set_args(overrides) + _opt("--profile", _path_arg("profile", profile))
        args += _opt("--threads", _int_arg("threads", threads)) + _opt("--trace", trace) + _flag("--force", force)
        args += ["--json", c.out("report.json")]
        c.run(args)
        return _read_json(c.out("report.json"))


def plan(scenario: Scenario = None, overrides: Overrides = None, *, top: int = 5, jobs: Optional[int] = None,
         max_simulations: Optional[int] = None, max_tp: Optional[int] = None,
         max_micro_batch: Optional[int] = None) -> dict:
    """`traincast plan`: the best TP x PP x DP layouts for the scenario's model and cluster; returns
    the --json document as a dict (its ranked layouts empty, with the reasons, when none fits)."""
    with _Call({"--set": "overrides", "--top": "top", "--jobs": "jobs", "--max-simulations": "max_simulations",
                "--max-tp": "max_tp", "--max-micro-batch": "max_micro_batch"}) as c:
        path = c.scenario(scenario)
        args = ["plan"] + ([path] if path else []) + _set_args(overrides) + ["--top", str(_int_arg("top", top))]
        args += _opt("--jobs", _int_arg("jobs", jobs)) + _opt("--max-simulations", _int_arg("max_simulations", max_simulations)) + _opt("--max-tp", _int_arg("max_tp", max_tp))
        args += _opt("--max-micro-batch", _int_arg("max_micro_batch", max_micro_batch)) + ["--json", c.out("plan.json")]
        c.run(args, ok=(0, 1))  # 1: no layout fits; the JSON says why
        if not os.path.exists(c.out("plan.json")):
            raise TraincastError(1, "traincast plan wrote no result")
        return _read_json(c.out("plan.json"))


def compare(*scenarios: Scenario, vary: Union[None, str, Mapping[str, Sequence[Any]]] = None,
            overrides: Overrides = None, tokens: Optional[float] = None, jobs: Optional[int] = None) -> dict:
    """`traincast compare`: scenarios side by side for a buyer (time, days and dollars to train,
    power, prices with their sources, verdicts); returns {"rows": [...], "verdicts": [...]} as
    --json writes it. vary: one field and its values, "field=v1,v2" or {field: [v1, v2]}, on the
    one scenario given (or the embedded default)."""
    if isinstance(vary, Mapping):
        if len(vary) != 1:
            raise ScenarioError(f"vary: got {len(vary)} fields (expected one field and its values)")
        (name, values), = vary.items()
        if isinstance(values, (str, bytes)) or not isinstance(values, Iterable):
            raise TypeError(f"vary: {name}: got {values!r} (expected a list of values)")
        vary = f"{name}=" + ",".join(_value_text(v) for v in values)
    with _Call({"--set": "overrides", "--vary": "vary", "--tokens": "tokens", "--jobs": "jobs"}) as c:
        paths = [c.scenario(s, "scenarios") for s in scenarios]
        if any(p is None for p in paths):
            raise ScenarioError("compare: a scenario is None (give a path, text or dict; no scenario at all "
                                "compares the embedded default with vary=)")
        args = ["compare", *paths] + _set_args(overrides) + _opt("--vary", vary) + _opt("--tokens", tokens)
        args += _opt("--jobs", _int_arg("jobs", jobs)) + ["--json", c.out("compare.json")]
        c.run(args)
        return _read_json(c.out("compare.json"))


def cluster(scenario: Scenario, overrides: Overrides = None, *, policy: Optional[str] = None,
            threads: Optional[int] = None, trace: Optional[str] = None, force: bool = False) -> dict:
    """`traincast cluster`: the scenario's `job` entries on its cluster under a scheduler
    (docs/cluster.md); returns {"runs": [...]} as --json writes it, one run per policy ("fifo",
    "backfill" or "both"; None = the scenario's scheduler.policy), each with its jobs' waits and
    run times, utilisation and busy GPUs over time. trace: also write a Chrome/Perfetto trace with
    one process per job to this path (an existing file is refused unless force=True)."""
    if scenario is None:
        raise ScenarioError("cluster: a scenario is None (expected one with `job` entries; the embedded default has none)")
    with _Call({"--set": "overrides", "--policy": "policy", "--threads": "threads", "--trace": "trace"}) as c:
        path = c.scenario(scenario)
        args = ["cluster", path] + _set_args(overrides) + _opt("--policy", policy)
        args += _opt("--threads", _int_arg("threads", threads)) + _opt("--trace", trace) + _flag("--force", force)
        args += ["--json", c.out("cluster.json")]
        c.run(args)
        return _read_json(c.out("cluster.json"))


def sweep(sweep_file: Union[str, os.PathLike], *, jobs: Optional[int] = None):
    """`traincast sweep`: every point of a sweep file (a path or the file's text); returns a pandas
    DataFrame equal to the CSV `traincast sweep --out` writes (one row per point, in point order;
    its '#' provenance line dropped). Rows of points that are out of memory or invalid have their
    status and reason. Raises ModuleNotFoundError before running anything when pandas is missing."""
    pd = _pandas("sweep")
    with _Call({"--jobs": "jobs"}) as c:
        path = c.sweep_file(sweep_file)
        c.run(["sweep", path, "--out", c.out("sweep.csv"), "--progress", "never"] + _opt("--jobs", _int_arg("jobs", jobs)))
        return _read_csv_frame(c.out("sweep.csv"), pd)


def nccl_tests(scenario: Scenario, *, op: str = "all_reduce", min_bytes: Union[int, str] = "32M",
               max_bytes: Union[int, str] = "32M", step_factor: Optional[float] = None,
               datatype: str = "float", gpus: Union[None, str, Sequence[int]] = None, overrides: Overrides = None,
               profile: Optional[str] = None) -> list:
    """`traincast nccl-tests`: nccl-tests simulated on the scenario's GPUs; returns one dict per size
    (size_bytes, count, type, redop, root, time_us, algbw_gb_per_s, busbw_gb_per_s, algorithm,
    protocol, channels), numbers as int or float. gpus: "0,8-15" as --gpus takes it, or a list of
    GPU ids such as [0, 8]."""
    if gpus is not None and not isinstance(gpus, str):
        if isinstance(gpus, bytes) or not isinstance(gpus, Iterable) or \
                any(isinstance(g, bool) or not isinstance(g, int) for g in gpus):
            raise TypeError(f"gpus: got {gpus!r} (expected a list of GPU ids such as [0, 8], or a string such as \"0,8-15\")")
        gpus = ",".join(str(g) for g in gpus)
    with _Call({"--op": "op", "-b": "min_bytes", "-e": "max_bytes", "-f": "step_factor", "-d": "datatype",
                "--gpus": "gpus", "--set": "overrides", "--profile": "profile"}) as c:
        path = c.scenario(scenario)
        args = ["nccl-tests"] + ([path] if path else []) + ["--op", op, "-b", str(min_bytes), "-e", str(max_bytes)]
        args += _opt("-f", step_factor) + ["-d", datatype] + _opt("--gpus", gpus) + _set_args(overrides)
        args += _opt("--profile", _path_arg("profile", profile)) + ["--csv", c.out("nccl.csv")]
        c.run(args)
        with open(c.out("nccl.csv"), encoding="utf-8") as f:
            return [{k: _number(v) for k, v in row.items()} for row in csv.DictReader(f)]


def _number(text: str) -> Any:
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


def catalog() -> dict:
    """`traincast catalog --json`: {"gpus", "nics", "node_templates", "prices"}, every figure in SI
    units with its source; a missing price is {"usd": None, "missing": why}."""
    with _Call() as c:
        c.run(["catalog", "--json", c.out("catalog.json")])
        return _read_json(c.out("catalog.json"))


def validate(*case_files: Union[str, os.PathLike], jobs: Optional[int] = None, half: Optional[str] = None):
    """`traincast validate`: the cases' predictions against their published measurements; returns
    the --csv table (file, case, metric, measured, predicted, error_pct, source) as a DataFrame,
    also when a case misses its tolerance (the CLI's exit status 1). Raises ModuleNotFoundError
    before running anything when pandas is missing."""
    pd = _pandas("validate")
    with _Call({"--jobs": "jobs", "--half": "half"}) as c:
        c._inputs += [os.fspath(f) if isinstance(f, os.PathLike) else str(f) for f in case_files]  # for ScenarioError.file, as run and sweep
        c._arguments.update((path, "case_files") for path in c._inputs)
        args = ["validate", *case_files] + _opt("--jobs", _int_arg("jobs", jobs)) + _opt("--half", half) + ["--csv", c.out("v.csv")]
        c.run(args, ok=(0, 1))
        return _read_csv_frame(c.out("v.csv"), pd)
