"""Hostile input, table-driven: every bad option or input file gets a clear one-line error naming
what is wrong, with exit status 2 for a wrong command line and 1 for a failed command; nothing
hangs, crashes, or writes a partial result. (Issue 11's cases; each runs in well under a second.)"""
import os
import subprocess
from pathlib import Path

import pytest

TIMEOUT = 60  # seconds: a hang is a failure, not a stuck CI

# (arguments, exit status, text the error must contain)
USAGE_ERRORS = [
    (["calibrate", "--iterations", "0", "--no-save"], 2, "--iterations"),
    (["calibrate", "--iterations", "-1", "--no-save"], 2, "--iterations"),
    (["calibrate", "--iterations", "18446744073709551615", "--no-save"], 2, "--iterations"),
    (["calibrate", "--warmup", "-1", "--no-save"], 2, "--warmup"),
    (["calibrate", "--pin", "9999", "--no-save"], 2, "is not one this process may run on"),
    (["calibrate", "--results", ""], 2, "needs a directory"),
    (["new-run", "--results", ""], 2, "needs a directory"),
    (["models", "--dispatches", "-1", "--no-save"], 2, "--dispatches"),
    (["models", "--dispatches", "0", "--no-save"], 2, "--dispatches"),
    (["models", "--valgrind", "--valgrind-reps", "0", "--no-save"], 2, "--valgrind-reps"),
    (["models", "--copies", "abc", "--no-save"], 2, "'abc' is not an integer"),
    (["models", "--copies", "513", "--no-save"], 2, "--copies"),
    (["models", "--orders", "block8x", "--no-save"], 2, "block size must be a number"),
    (["models", "--dispatch", "tail,tail", "--model", "kcopy", "--no-save"], 2, "listed twice"),
    (["models", "--dispatch", "nope", "--model", "kcopy", "--no-save"], 2, "valid: tail, tail_pn, goto, goto_nodup, switch"),
    (["models", "--model", "stack", "--dispatch", "switch", "--no-save"], 2, "applies to the K-copy models"),
    (["models", "--model", "kcopy", "--statements", "64", "--no-save"], 2, "applies to the stack model"),
    (["models", "--model", "nope", "--no-save"], 2, "unknown 'nope'"),
    (["models", "--variants", "foo", "--model", "stack", "--no-save"], 2, "unknown 'foo'"),
    (["probes", "--conventions", "foo", "--no-save"], 2, "unknown 'foo' (valid: default"),
    (["probes", "--variants", "foo", "--no-save"], 2, "unknown 'foo'"),
    (["probes", "--count", "0", "--no-save"], 2, "--count"),
    (["probes", "--count", "-1", "--no-save"], 2, "--count"),
    (["probes", "--count", "100000", "--no-save"], 2, "--count"),
    (["probes", "fit", "--args", ",".join(["u64"] * 5000)], 2, "at most 256"),
    (["wasm", "bench", "--workloads", "fib,foo", "--no-save"], 2, "unknown 'foo'"),
    (["wasm", "bench", "--dispatch", "tail,tail", "--no-save"], 2, "listed twice"),
    (["wasm", "bench", "--valgrind-calls", "9" * 300, "--no-save"], 2, "--valgrind-calls"),
    (["calibrate", "--samples", "9" * 300, "--no-save"], 2, "--samples"),
]


def run_dlab(dlab_bin, args, **kw):
    return subprocess.run([str(dlab_bin), *args], capture_output=True, text=True, timeout=TIMEOUT, **kw)


@pytest.mark.parametrize("args,status,text", USAGE_ERRORS, ids=[" ".join(a)[:60] for a, _, _ in USAGE_ERRORS])
def test_bad_options_get_a_clear_error_and_the_usage_status(dlab_bin, args, status, text):
    out = run_dlab(dlab_bin, args)
    assert out.returncode == status, (out.returncode, out.stderr[-500:])
    assert text in out.stderr, out.stderr[-500:]
    assert len(out.stderr.splitlines()) == 1, out.stderr[-500:]  # every error is one line (docs/errors.md)
    for raw in ("stoi", "stod", "basic_filebuf", "terminate called", "json.exception", "not in range", "Could not convert"):
        assert raw not in out.stderr


@pytest.fixture
def wat_module(tmp_path):
    def build(wat: str) -> Path:
        src, out = tmp_path / "m.wat", tmp_path / "m.wasm"
        src.write_text(wat)
        subprocess.run(["wat2wasm", str(src), "-o", str(out)], check=True)
        return out
    return build


ADD = '(module (func (export "add") (param i32 f32) (result i32) (i32.add (local.get 0) (i32.trunc_f32_s (local.get 1)))))'


@pytest.mark.parametrize("args,text", [
    (["4294967296", "1"], "out of range for i32"),
    (["1", "1e40"], "out of range for f32"),
    (["10.0abc", "1"], "is not an integer"),
    (["1", "abc"], "is not a number"),
])
def test_invoke_arguments_are_checked_against_their_type(dlab_bin, wat_module, args, text):
    out = run_dlab(dlab_bin, ["wasm", "run", str(wat_module(ADD)), "--invoke", "add", "--", *args])
    assert out.returncode == 2, out.stderr
    assert text in out.stderr


def test_invoke_accepts_both_spellings_of_a_32_bit_value(dlab_bin, wat_module):
    out = run_dlab(dlab_bin, ["wasm", "run", str(wat_module(ADD)), "--invoke", "add", "--", "4294967295", "1"])
    assert out.returncode == 0 and out.stdout.strip() == "0", (out.stdout, out.stderr)


def test_table_grow_past_any_limit_returns_minus_one_and_the_runtime_stays_usable(dlab_bin, wat_module):
    wat = """(module (table $t 0 funcref)
      (func (export "grow") (param i32) (result i32) (table.grow $t (ref.null func) (local.get 0))))"""
    out = run_dlab(dlab_bin, ["wasm", "run", str(wat_module(wat)), "--invoke", "grow", "--repeat", "3", "--", "4294967295"])
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "-1"


def test_a_table_past_the_implementation_limit_is_refused_at_instantiation(dlab_bin, wat_module):
    out = run_dlab(dlab_bin, ["wasm", "run", str(wat_module("(module (table 4294967295 funcref) (func (export \"f\")))")),
                              "--invoke", "f"])
    assert out.returncode == 1
    assert "implementation limit" in out.stderr and "10000000" in out.stderr


def test_env_needs_key_value(dlab_bin, wat_module):
    out = run_dlab(dlab_bin, ["wasm", "run", str(wat_module(ADD)), "--env", "FOO", "--invoke", "add", "--", "1", "2"])
    assert out.returncode == 2 and "is not KEY=VALUE" in out.stderr


def test_wasm_bench_names_a_missing_module_without_blaming_bootstrap(dlab_bin):
    out = run_dlab(dlab_bin, ["wasm", "bench", "--module", "/nonexistent.wasm", "--no-save"])
    assert out.returncode == 1
    assert "/nonexistent.wasm not found (--module)" in out.stderr and "bootstrap" not in out.stderr


def test_spec_with_no_matching_file_is_an_error(dlab_bin, tmp_path):
    (tmp_path / "a.wast").write_text("(module)\n")
    out = run_dlab(dlab_bin, ["wasm", "spec", "--suite", str(tmp_path), "--only", "nomatch"])
    assert out.returncode == 1 and "no spec file's path contains 'nomatch'" in out.stderr


@pytest.mark.parametrize("content,text", [
    ("x,y\n1,2\n2,nan\n3,4\n", ":3: column 'y': nan is not a finite value"),
    ("x,y\n1,2\n2,inf\n3,4\n", "is not a finite value"),
    ("x,y\n1,2\n2,10.0abc\n3,4\n", ":3: column 'y': '10.0abc' is not a number"),
    ("x,y\n1,2\n2\n3,4\n", ":3: 1 fields, the header has 2"),
    ("x,y\nabc,2\n", ":2: column 'x': 'abc' is not a number"),
    ("x,y\n1,2\n", "a knee needs at least 3"),
    ("a,b\n1,2\n", "no column 'x' (columns: a, b)"),
])
def test_knee_input_is_parsed_strictly_with_file_and_line(dlab_bin, tmp_path, content, text):
    f = tmp_path / "k.csv"
    f.write_text(content)
    out = run_dlab(dlab_bin, ["knee", "--csv", str(f)])
    assert out.returncode == 1, out.stdout
    assert text in out.stderr, out.stderr


def test_a_full_stdout_is_a_failure(dlab_bin):
    with open("/dev/full", "w") as full:
        out = subprocess.run([str(dlab_bin), "machine", "--json"], stdout=full, stderr=subprocess.PIPE, text=True, timeout=TIMEOUT)
    assert out.returncode == 1 and "cannot write standard output: No space left on device" in out.stderr


def test_an_existing_experiment_is_refused_before_measuring_and_nothing_is_written(dlab_bin, tmp_path):
    run_dir = Path(run_dlab(dlab_bin, ["new-run", "--results", str(tmp_path)]).stdout.strip())
    assert (run_dir / "machine.json").exists()  # a run directory is born with its fingerprint
    (run_dir / "calibrate.json").write_text("{}\n")
    out = run_dlab(dlab_bin, ["calibrate", "--quick", "--run-dir", str(run_dir)])
    assert out.returncode == 1 and "calibrate.json exists" in out.stderr
    assert "[calibrate] sample" not in out.stderr  # refused before the first sample
    assert sorted(p.name for p in run_dir.iterdir()) == ["calibrate.json", "machine.json"]


def test_a_missing_run_dir_is_refused_before_measuring(dlab_bin, tmp_path):
    out = run_dlab(dlab_bin, ["models", "--valgrind", "--model", "kcopy", "--copies", "1", "--run-dir", str(tmp_path / "missing")])
    assert out.returncode == 1 and "is not a run directory" in out.stderr
    assert "[models --valgrind]" not in out.stderr


def test_probes_refuse_an_unwritable_output_folder_first(dlab_bin, tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    out = run_dlab(dlab_bin, ["probes", "--targets", "x86_64-linux-gnu", "--skip-placement", "--out", str(blocker / "sub")])
    assert out.returncode == 1 and "cannot create" in out.stderr
    assert "[probes] register budget" not in out.stderr


def test_gbench_run_directory_is_passed_as_an_argument_not_shell_text(dlab_bin, tmp_path):
    hostile = tmp_path / "a';touch INJECTED;'"
    hostile.mkdir()
    out = run_dlab(dlab_bin, ["models", "--gbench", "--model", "stack", "--stack-copies", "1", "--statements", "16",
                              "--mode-variants", "none", "--variants", "sp", "--samples", "1", "--run-dir", str(hostile)],
                   cwd=tmp_path)
    assert out.returncode == 0, out.stderr[-500:]
    assert not (tmp_path / "INJECTED").exists()
    assert (hostile / "models.gbench.json").exists()
