"""The traincast Python module (tools/python, docs/python.md) against the CLI it wraps.

Run by CTest as `python.api` with PYTHONPATH at the built package and TRAINCAST_SOURCE_DIR at the
repository; by hand: PYTHONPATH=build/release/python /usr/bin/python3 -m pytest tests/python.
"""

import io
import json
import os
import pathlib
import subprocess
import sys

import pytest

import traincast

SRC = pathlib.Path(os.environ.get("TRAINCAST_SOURCE_DIR", pathlib.Path(__file__).resolve().parents[2]))
DEFAULT_GOLDEN = SRC / "tests/golden/expected/run_default/out__report.json"


def cli_json(tmp_path, *args):
    """What the CLI (in process) writes with --json, parsed."""
    out = tmp_path / f"cli{len(list(tmp_path.iterdir()))}.json"
    r = traincast.cli(*args, "--json", out)
    assert r.status == 0, r.stderr
    return json.loads(out.read_text())


def test_run_default_is_the_golden_report():
    report = traincast.run()
    golden = json.loads(DEFAULT_GOLDEN.read_text())
    assert report == golden
    assert report["iteration_time_s"] == pytest.approx(14.219319615, rel=0, abs=1e-9)


def test_run_path_dict_and_text_give_the_cli_report(tmp_path):
    overrides = {"workload.parallel.tp": 4, "workload.parallel.dp": 2, "workload.training.recompute": "full"}
    expected = cli_json(tmp_path, "run", *[a for k, v in overrides.items() for a in ("--set", f"{k}={v}")])
    assert traincast.run(overrides=overrides) == expected
    assert traincast.run(overrides=[f"{k}={v}" for k, v in overrides.items()]) == expected
    # The default scenario as a dict and as text, overridden the same way.
    scenario = cli_json(tmp_path, "run", "--print-scenario")
    assert traincast.run(scenario, overrides) == expected
    text = traincast.cli("run", "--print-scenario").stdout
    assert traincast.run(text, overrides) == expected
    path = tmp_path / "s.textproto"
    path.write_text(text)
    assert traincast.run(path, overrides) == expected
    assert traincast.run(str(path), overrides) == expected


def test_bad_field_in_a_file_names_file_line_and_field(tmp_path):
    text = (SRC / "scenarios/llama3_70b_one_node_oom.textproto").read_text()
    line = next(i for i, ln in enumerate(text.splitlines(), 1) if "parallel { tp: 8" in ln)
    path = tmp_path / "bad.textproto"
    path.write_text(text.replace("parallel { tp: 8", "parallel { tp: 0"))
    with pytest.raises(traincast.ScenarioError) as e:
        traincast.run(path)
    assert e.value.file == str(path)
    assert e.value.line == line
    assert e.value.field == "workload.parallel.tp"
    assert f"{path}:{line}:" in str(e.value)


def test_bad_input_given_as_data_names_it_and_never_the_temporary_file():
    with pytest.raises(traincast.ScenarioError) as e:
        traincast.run('name: "x"\nworkload { parallel { tpp: 2 } }\n')
    assert e.value.file == "<text>" and e.value.line == 2 and "tpp" in str(e.value)
    assert "traincast-" not in str(e.value)
    with pytest.raises(traincast.ScenarioError) as e:
        traincast.run({"workload": {"training": {"micro_batch": 2}}})
    assert e.value.file == "<dict>"
    assert "micro_batch_size" in str(e.value)  # the did-you-mean of the CLI
    with pytest.raises(traincast.ScenarioError) as e:
        traincast.run(overrides={"workload.parallel.tpp": 4})
    assert e.value.file == "overrides" and e.value.field == "workload.parallel.tpp" and e.value.line is None
    with pytest.raises(traincast.ScenarioError) as e:
        traincast.run("no/such/scenario.textproto")
    assert "cannot read file" in str(e.value)
    with pytest.raises(TypeError):
        traincast.run(overrides="workload.parallel.tp=4")


def test_sweep_and_validate_say_pandas_is_missing_before_running(monkeypatch, tmp_path):
    # Before: both ran everything, then raised a bare "No module named 'pandas'". The files do not
    # exist: a check made after running would raise ScenarioError instead.
    monkeypatch.setitem(sys.modules, "pandas", None)  # `import pandas` raises ModuleNotFoundError
    for call in (lambda: traincast.sweep(tmp_path / "none.sweep.textproto"),
                 lambda: traincast.validate(tmp_path / "none.cases.textproto")):
        with pytest.raises(ModuleNotFoundError, match=r"pandas is not installed.*apt-get install python3-pandas"):
            call()


def test_validate_names_a_missing_case_file(tmp_path):
    # Before: ScenarioError.file was None for validate (run and sweep set it).
    pytest.importorskip("pandas")
    for missing in (tmp_path / "none.cases.textproto", str(tmp_path / "no-extension")):
        with pytest.raises(traincast.ScenarioError) as e:
            traincast.validate(missing)
        assert e.value.file == str(missing)
        assert "cannot read file" in str(e.value)


def test_sweep_dataframe_equals_the_cli_csv(tmp_path):
    pd = pytest.importorskip("pandas")
    sweep_file = SRC / "tests/tools/data/small.sweep.textproto"
    frame = traincast.sweep(sweep_file, jobs=2)
    out = tmp_path / "cli.csv"
    r = traincast.cli("sweep", sweep_file, "--out", out, "--progress", "never")
    assert r.status == 0, r.stderr
    lines = [ln for ln in out.read_text().splitlines(keepends=True) if not ln.startswith("#")]
    pd.testing.assert_frame_equal(frame, pd.read_csv(io.StringIO("".join(lines))))
    assert len(frame) == 28
    assert set(frame["status"]) == {"ok", "oom", "invalid"}


def test_plan_compare_nccl_tests_and_catalog(tmp_path):
    result = traincast.plan(top=2, jobs=2, max_simulations=8)
    assert result == cli_json(tmp_path, "plan", "--top", "2", "--jobs", "2", "--max-simulations", "8")
    a, b = SRC / "scenarios/llama3_70b_dgx_h100_8nodes.textproto", SRC / "scenarios/gpt3_175b_dgx_a100_128nodes.textproto"
    cmp = traincast.compare(a, b)
    assert cmp == cli_json(tmp_path, "compare", a, b)
    assert len(cmp["rows"]) == 2 and len(cmp["verdicts"]) == 1
    rows = traincast.nccl_tests(SRC / "scenarios/nccl/dgx_h100.textproto", min_bytes="1M", max_bytes="64M",
                                step_factor=4)
    assert [r["size_bytes"] for r in rows] == [1 << 20, 4 << 20, 16 << 20, 64 << 20]
    assert all(r["busbw_gb_per_s"] > 0 for r in rows)
    assert rows[-1]["busbw_gb_per_s"] > rows[0]["busbw_gb_per_s"]
    # gpus as a list of ids equals the CLI's string form (fresh-user finding: a list was refused).
    two = dict(min_bytes="1M", max_bytes="1M")
    assert traincast.nccl_tests(SRC / "scenarios/nccl/dgx_h100.textproto", gpus=[0, 1], **two) == \
        traincast.nccl_tests(SRC / "scenarios/nccl/dgx_h100.textproto", gpus="0,1", **two)
    with pytest.raises(TypeError):
        traincast.nccl_tests(SRC / "scenarios/nccl/dgx_h100.textproto", gpus=[0.5], **two)
    with pytest.raises(TypeError, match="profile: got 5"):  # not read as a file named "5"
        traincast.run(profile=5)
    cat = traincast.catalog()
    h100 = next(g for g in cat["gpus"] if g["name"] == "H100-SXM5-80GB")
    assert h100["peak_bf16_flops"] == 989.4e12 and h100["tdp_w"] == 700
    h200 = next(p for p in cat["prices"] if p["gpu"] == "H200-SXM-141GB")
    assert h200["rent_per_gpu_hour"]["usd"] == 3.99 and h200["rent_per_gpu_hour"]["date"] == "2026-08-26"
    assert h200["node_price"]["usd"] is None and h200["node_price"]["missing"]


def test_cluster_equals_the_cli_json_and_writes_the_trace(tmp_path):
    six = SRC / "scenarios/cluster/six_jobs_fifo_vs_backfill.textproto"
    trace = tmp_path / "six.json"
    result = traincast.cluster(six, policy="both", trace=str(trace))
    assert result == cli_json(tmp_path, "cluster", six, "--policy", "both")
    # The hand-worked starts (tests/models/scheduler/scheduler_test.cc): FIFO J2 at 15 s, backfill J2 at 2 s.
    starts = {r["policy"]: {j["name"]: j["start_s"] for j in r["jobs"]} for r in result["runs"]}
    assert starts["fifo"]["J2"] == 15 and starts["backfill"]["J2"] == 2
    names = [e["args"]["name"] for e in json.loads(trace.read_text())["traceEvents"] if e["name"] == "process_name"]
    assert len(names) == 14 and "backfill: job J5 (8 GPUs)" in names
    # An existing trace is refused with this module's spelling of the way out, and force=True overwrites it.
    with pytest.raises(traincast.ScenarioError, match=r"file exists \(pass force=True to overwrite it\)"):
        traincast.cluster(six, trace=str(trace))
    traincast.cluster(six, trace=str(trace), force=True)
    with pytest.raises(traincast.ScenarioError):
        traincast.cluster(None)


def test_works_without_the_cli_binary(tmp_path):
    # No traincast on PATH (an empty directory) and no TRAINCAST variable: the module needs neither.
    env = {k: v for k, v in os.environ.items() if k != "TRAINCAST"}
    env["PATH"] = str(tmp_path)
    env["PYTHONPATH"] = str(pathlib.Path(traincast.__file__).resolve().parents[1])
    code = ("import shutil, traincast; assert shutil.which('traincast') is None; "
            "print(traincast.run()['iteration_time_s'])")
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert float(r.stdout) == pytest.approx(14.219319615, abs=1e-9)


def test_version_and_cli_escape_hatch():
    assert traincast.version().startswith("traincast ")
    r = traincast.cli("catalog", "--pricez")
    assert r.status == 2 and "--pricez" in r.stderr


def test_wrong_types_and_values_are_refused_clearly(tmp_path):
    # (Found by a fresh user: these ran the default, leaked Python or Boost text, or named no file.)
    with pytest.raises(traincast.ScenarioError, match="empty string"):
        traincast.run("")
    with pytest.raises(traincast.ScenarioError) as e:
        traincast.run("cluster {")
    assert e.value.file == "<text>"
    with pytest.raises(traincast.ScenarioError) as e:
        traincast.run({"workload": {"training": {"train_tokens": float("nan")}}})
    assert e.value.file == "<dict>" and e.value.field == "workload.training.train_tokens"
    with pytest.raises(traincast.ScenarioError) as e:
        traincast.run({"workload": {"training": {"train_tokens": {1, 2}}}})
    assert e.value.field == "workload.training.train_tokens"
    with pytest.raises(traincast.ScenarioError) as e:
        traincast.run(str(tmp_path))  # a directory
    assert e.value.file == str(tmp_path)
    # A NUL would cut the C argument there, hiding what follows (here an escape sequence).
    with pytest.raises(traincast.ScenarioError, match="contains a NUL character"):
        traincast.run(overrides={"name": "x\x00y\x1b[31m"})
    # Named as the Python argument that gave it, not as the CLI's "argument 3" (fresh user 43).
    with pytest.raises(traincast.ScenarioError) as e:
        traincast.run(overrides={"name": "x\x00y"})
    assert str(e.value).startswith("overrides: 'name=x\\x00y' contains a NUL character at offset 6 (expected a str")
    assert "argument" not in str(e.value).split("(")[0]
    with pytest.raises(traincast.ScenarioError) as e:
        traincast.run("x\x00y")
    assert str(e.value).startswith("scenario: 'x\\x00y' contains a NUL character at offset 1")
    with pytest.raises(traincast.ScenarioError) as e:
        traincast.compare("a.textproto", "b\x00.textproto")
    assert str(e.value).startswith("scenarios: 'b\\x00.textproto' contains a NUL character")
    for bad in (lambda: traincast.run(overrides=5), lambda: traincast.run(threads="x"),
                lambda: traincast.plan(jobs="two"), lambda: traincast.compare(vary={"cluster.num_nodes": 4})):
        with pytest.raises(TypeError):
            bad()


def test_vary_errors_name_vary():
    with pytest.raises(traincast.ScenarioError) as e:
        traincast.compare(vary={"workload.parallel.tpx": [1, 2]})
    assert e.value.file == "vary" and e.value.field == "workload.parallel.tpx"
    assert str(e.value).startswith("vary: workload.parallel.tpx: ")


def test_errors_name_the_python_argument_not_the_cli_option():
    # Before (session 42): "--set: workload.parallel.tp: ..." and "--threads: got -1 (...)".
    with pytest.raises(traincast.ScenarioError) as e:
        traincast.run(overrides={"workload.parallel.tp": 3})
    assert str(e.value).startswith("overrides: workload.parallel.tp: "), str(e.value)
    assert e.value.file == "overrides" and e.value.field == "workload.parallel.tp"
    assert "--set" not in str(e.value).split("\n")[0].split("(")[0]
    with pytest.raises(traincast.ScenarioError) as e:
        traincast.run(threads=-1)
    assert str(e.value).startswith("threads: got -1 (expected an integer from 0 to 1024"), str(e.value)
    with pytest.raises(traincast.ScenarioError) as e:
        traincast.nccl_tests(SRC / "scenarios/nccl/dgx_h100.textproto", op="allreduce")
    assert str(e.value).startswith('op: got "allreduce", did you mean "all_reduce"?'), str(e.value)


def test_compare_note_on_a_failed_override_names_it_without_above(tmp_path):
    # Before (session 44): "one.textproto: note: the --set above failed on this scenario; compare
    # applies every --set to each scenario": no "--set" in a Python call, no "above" in a list.
    text = ('cluster {{ node_template: "dgx_h100" num_nodes: {n} }}\nworkload {{\n  model {{ num_layers: 4 '
            'hidden_size: 2048 num_attention_heads: 16 vocab_size: 32000 seq_length: 2048 }}\n  parallel {{ tp: 8 '
            'dp: {n} }}\n  training {{ global_batch_size: 16 }}\n}}\n')
    one, two = tmp_path / "one.textproto", tmp_path / "two.textproto"
    one.write_text(text.format(n=1))
    two.write_text(text.format(n=2))
    with pytest.raises(traincast.ScenarioError) as e:
        traincast.compare(one, two, overrides={"cluster.overrides[0].select": "node1/gpu1",
                                               "cluster.overrides[0].clock_factor": 0.8})
    assert [p.text for p in e.value.errors] == [
        "overrides: cluster.overrides[0].select: no node1 (the cluster has node0)",
        f"{one}: note: overrides entry cluster.overrides[0].select failed on this scenario; compare applies every "
        "overrides entry to each scenario"], str(e.value)
