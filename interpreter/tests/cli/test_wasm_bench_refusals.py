"""`dlab wasm bench` refusing what it cannot run, table-driven: a wrong command line (status 2,
nothing run, no run directory made; the table's last rows are the same rule, --no-save against a
result folder, for calibrate, models and probes), a module whose workload export is wrong or that
is missing (status 1, naming module, export and problem, before a run directory is made). Nothing
here depends on this CPU, its counters or its speed."""
import pytest

from dlab_cli import assert_clean, run_dlab


# ---- the command line: refused with status 2, nothing run, nothing created -------------------

USAGE = [
    (["wasm", "bench", "--dbinop", ",", "--no-save"], "--dbinop: an empty list"),
    (["wasm", "bench", "--dbinop", "", "--no-save"], "--dbinop: an empty list"),
    (["wasm", "bench", "--workloads", "", "--no-save"], "--workloads: an empty list"),
    (["wasm", "bench", "--workloads", ",", "--no-save"], "--workloads: an empty list"),
    (["wasm", "bench", "--valgrind", "--peer", "x=true", "--peer-calls", "2", "--no-save"], "--peer-calls: does not apply with --valgrind"),
    (["wasm", "bench", "--valgrind", "--samples", "7", "--no-save"], "--samples: does not apply with --valgrind"),
    (["wasm", "bench", "--valgrind", "--quick", "--no-save"], "--quick: does not apply with --valgrind"),
    (["wasm", "bench", "--peer-calls", "3", "--no-save"], "--peer-calls: applies only with --peer"),
    (["wasm", "bench", "--peer-timeout", "3", "--no-save"], "--peer-timeout: applies only with --peer"),
    (["wasm", "bench", "--valgrind-calls", "3", "--no-save"], "--valgrind-calls: applies only with --valgrind"),
    (["wasm", "bench", "--valgrind-reuse", "/tmp", "--no-save"], "--valgrind-reuse: applies only with --valgrind"),
    (["wasm", "bench", "--valgrind", "--max-samples", "9", "--no-save"], "--max-samples: does not apply with --valgrind"),
    (["wasm", "bench", "--stop-half-width", "0.01", "--no-save"], "--stop-half-width: applies only with --max-samples"),
    (["wasm", "bench", "--samples", "7", "--max-samples", "7", "--no-save"], "--max-samples: 7 is not above --samples 7"),
    (["wasm", "bench", "--max-samples", "100001", "--no-save"], "--max-samples"),
    (["wasm", "bench", "--valgrind", "--valgrind-reuse", "/nonexistent-dlab-folder", "--no-save"], "--valgrind-reuse: Directory does not exist"),
    (["wasm", "bench", "--peer", "a=true", "--peer", "a=false", "--no-save"], "the name 'a' is given twice"),
    (["wasm", "bench", "--peer", "s", "--no-save"], "'s' is not NAME=COMMAND"),
    (["wasm", "bench", "--no-save", "--run-dir", "/tmp"], "excludes"),
    (["calibrate", "--no-save", "--results", "/tmp"], "excludes"),
    (["models", "--no-save", "--run-dir", "/tmp"], "excludes"),
    (["probes", "--no-save", "--out", "/tmp/x"], "excludes"),
]


@pytest.mark.parametrize("args,text", USAGE, ids=[" ".join(a)[:60] for a, _ in USAGE])
def test_a_wrong_command_line_is_refused_with_status_2(dlab_bin, args, text):
    assert_clean(run_dlab(dlab_bin, args), 2, text)


def test_a_refused_command_line_creates_no_run_directory(dlab_bin, tmp_path):
    out = run_dlab(dlab_bin, ["wasm", "bench", "--workloads", "fib", "--peer", "s", "--results", str(tmp_path / "res")])
    assert_clean(out, 2, "is not NAME=COMMAND")
    assert not (tmp_path / "res").exists()


# ---- a module whose workload export is wrong, or no module -----------------------------------

BAD_WORKLOADS = [
    ('(module (global (export "fib") i32 (i32.const 1)))', "the export fib is not a function"),
    ('(module (func (export "fib") (param i32)))', "the export fib takes 1 parameters and returns 0 results"),
    ('(module (func (export "fib") (result i32) (i32.const 1)))', "the export fib takes 0 parameters and returns 1 results"),
    ('(module (func (export "fib") (param i64) (result i32) (i32.const 1)))', "a workload is a function (i32 size) -> (i32 checksum)"),
    ('(module (func (export "fib") (param i32) (result i32) unreachable))', "fib(24) trapped in switch"),
    ('(module (func (export "_initialize") unreachable) (func (export "fib") (param i32) (result i32) (i32.const 1)))',
     "cannot instantiate it in switch"),
    ('(module (func (export "other") (param i32) (result i32) (i32.const 1)))', "has no export fib"),
]


@pytest.mark.parametrize("source,text", BAD_WORKLOADS, ids=[t for _, t in BAD_WORKLOADS])
def test_a_bad_workload_export_is_named_with_module_export_and_problem(dlab_bin, wat, tmp_path, source, text):
    module = wat(source)
    out = run_dlab(dlab_bin, ["wasm", "bench", "--module", str(module), "--workloads", "fib", "--dispatch", "switch", "--quick",
                              "--no-native", "--samples", "1", "--results", str(tmp_path / "res")])
    assert_clean(out, 1, text)
    assert str(module) in out.stderr
    assert not (tmp_path / "res").exists()  # checked before a run directory is made


LATER_FAILURES = [
    ("unreachable", "fib(24) in switch, timed call 3: trapped: unreachable"),
    ("(call $exit (i32.const 7))", "fib(24) in switch, timed call 3: called proc_exit(7)"),
]


@pytest.mark.parametrize("fail,text", LATER_FAILURES, ids=["trap", "proc_exit"])
def test_a_workload_that_fails_on_a_later_call_is_named_with_module_workload_engine_and_call(dlab_bin, wat, tmp_path, fail, text):
    # Its checking call and the first two timed ones return; the third timed call fails (the
    # fourth call in all). It used to be reported as "dlab: error: unreachable", nothing else.
    module = wat(f'''(module
      (import "wasi_snapshot_preview1" "proc_exit" (func $exit (param i32)))
      (memory (export "memory") 1)
      (global $calls (mut i32) (i32.const 0))
      (func (export "fib") (param i32) (result i32)
        (global.set $calls (i32.add (global.get $calls) (i32.const 1)))
        (if (i32.ge_u (global.get $calls) (i32.const 4)) (then {fail}))
        (i32.const 42)))''', "later")
    out = run_dlab(dlab_bin, ["wasm", "bench", "--module", str(module), "--workloads", "fib", "--dispatch", "switch", "--quick",
                              "--no-native", "--samples", "5", "--warmup", "0", "--results", str(tmp_path / "res")])
    assert_clean(out, 1, text)
    assert str(module) in out.stderr and "(its checking call had returned)" in out.stderr
    # the run directory it made holds no result: removed, not left with only machine.json
    assert not list((tmp_path / "res").rglob("machine.json"))


def test_wasm_bench_names_a_missing_module_without_blaming_bootstrap(dlab_bin):
    out = run_dlab(dlab_bin, ["wasm", "bench", "--module", "/nonexistent.wasm", "--no-save"])
    assert out.returncode == 1
    assert "/nonexistent.wasm not found (--module)" in out.stderr and "bootstrap" not in out.stderr
