"""`dlab wasm run --invoke`: its arguments are checked against the export's parameter types (exit
status 2, one line), its results printed as the spec's scripts write them (a reference never as an
address), and the limits a module meets at instantiation and when it grows a table are said or kept
(docs/errors.md, *The rules* and *The spec runner*). Each case runs in well under a second."""
import subprocess

import pytest

from dlab_cli import run, run_dlab

ADD = '(module (func (export "add") (param i32 f32) (result i32) (i32.add (local.get 0) (i32.trunc_f32_s (local.get 1)))))'


@pytest.mark.parametrize("args,text", [
    (["4294967296", "1"], "out of range for i32"),
    (["1", "1e40"], "out of range for f32"),
    (["10.0abc", "1"], "is not an integer"),
    (["1", "abc"], "is not a number"),
])
def test_invoke_arguments_are_checked_against_their_type(dlab_bin, wat, args, text):
    out = run_dlab(dlab_bin, ["wasm", "run", str(wat(ADD)), "--invoke", "add", "--", *args])
    assert out.returncode == 2, out.stderr
    assert text in out.stderr


def test_invoke_accepts_both_spellings_of_a_32_bit_value(dlab_bin, wat):
    out = run_dlab(dlab_bin, ["wasm", "run", str(wat(ADD)), "--invoke", "add", "--", "4294967295", "1"])
    assert out.returncode == 0 and out.stdout.strip() == "0", (out.stdout, out.stderr)


def test_env_needs_key_value(dlab_bin, wat):
    out = run_dlab(dlab_bin, ["wasm", "run", str(wat(ADD)), "--env", "FOO", "--invoke", "add", "--", "1", "2"])
    assert out.returncode == 2 and "is not KEY=VALUE" in out.stderr


def test_a_reference_result_prints_no_address(dlab_bin, tmp_path):
    # (module (table 1 funcref) (func $f) (elem declare func $f)
    #   (func (export "r") (result funcref) ref.func $f))
    wat = tmp_path / "r.wat"
    wat.write_text('(module (func $f) (elem declare func $f) (func (export "r") (result funcref) ref.func $f))')
    wasm = tmp_path / "r.wasm"
    subprocess.run(["wat2wasm", str(wat), "-o", str(wasm)], check=True)
    outs = {run(dlab_bin, "wasm", "run", "--invoke", "r", "--dispatch", d, str(wasm)).stdout for d in ("tail", "switch", "tail")}
    assert outs == {"ref.func\n"}


def test_table_grow_past_any_limit_returns_minus_one_and_the_runtime_stays_usable(dlab_bin, wat):
    source = """(module (table $t 0 funcref)
      (func (export "grow") (param i32) (result i32) (table.grow $t (ref.null func) (local.get 0))))"""
    out = run_dlab(dlab_bin, ["wasm", "run", str(wat(source)), "--invoke", "grow", "--repeat", "3", "--", "4294967295"])
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "-1"


def test_a_table_past_the_implementation_limit_is_refused_at_instantiation(dlab_bin, wat):
    out = run_dlab(dlab_bin, ["wasm", "run", str(wat("(module (table 4294967295 funcref) (func (export \"f\")))")),
                              "--invoke", "f"])
    assert out.returncode == 1
    assert "implementation limit" in out.stderr and "10000000" in out.stderr


# --cachegrind-pair: what `dlab wasm bench --valgrind` counts, run here without valgrind. The
# child makes N calls and the parent 2N; neither prints, and a failure in either is the exit status.
def test_a_cachegrind_pair_makes_its_calls_and_prints_nothing(dlab_bin, wat):
    out = run_dlab(dlab_bin, ["wasm", "run", str(wat(ADD)), "--invoke", "add", "--cachegrind-pair", "2", "--", "3", "4"])
    assert out.returncode == 0, out.stderr
    assert out.stdout == ""


def test_a_cachegrind_pair_whose_calls_trap_fails(dlab_bin, wat):
    trap = '(module (func (export "t") unreachable))'
    out = run_dlab(dlab_bin, ["wasm", "run", str(wat(trap)), "--invoke", "t", "--cachegrind-pair", "1"])
    assert out.returncode == 1
    assert "unreachable" in out.stderr


@pytest.mark.parametrize("extra,text", [
    (["--repeat", "2"], "excludes"),
    (["--budget", "deadline"], "timer thread"),
    (["--cachegrind-pair", "0"], "not an integer in 1..1000000"),
])
def test_a_cachegrind_pair_is_refused_where_it_cannot_count(dlab_bin, wat, extra, text):
    args = ["wasm", "run", str(wat(ADD)), "--invoke", "add", "--cachegrind-pair", "1", *extra, "--", "1", "1"]
    out = run_dlab(dlab_bin, args)
    assert out.returncode == 2, out.stderr
    assert text in out.stderr, out.stderr


def test_a_cachegrind_pair_needs_an_export_to_call(dlab_bin, wat):
    out = run_dlab(dlab_bin, ["wasm", "run", str(wat(ADD)), "--cachegrind-pair", "1"])
    assert out.returncode == 2 and "needs --invoke" in out.stderr, out.stderr


def test_a_wasi_import_of_the_wrong_type_is_a_link_error_naming_the_file(dlab_bin, wat):
    module = wat('(module (import "wasi_snapshot_preview1" "fd_write" (func (param i32) (result i32))) (memory (export "memory") 1)'
                 ' (func (export "_start")))', "wrongtype")
    out = run_dlab(dlab_bin, ["wasm", "run", str(module)])
    assert out.returncode == 1, out.stderr
    assert f"{module}: cannot link: incompatible import type for wasi_snapshot_preview1.fd_write" in out.stderr, out.stderr


@pytest.mark.parametrize("option", ["--dir", "--dir-rw"])
def test_an_empty_dir_says_it_is_empty_and_a_bad_one_is_quoted_escaped(dlab_bin, wat, option):
    out = run_dlab(dlab_bin, ["wasm", "run", option, "", str(wat(ADD)), "--invoke", "add", "--", "1", "2"])
    assert out.returncode == 2 and "an empty folder: give HOST" in out.stderr and "'::'" not in out.stderr, out.stderr
    out = run_dlab(dlab_bin, ["wasm", "run", option, "::\x1b[31m", str(wat(ADD)), "--invoke", "add", "--", "1", "2"])
    assert out.returncode == 2 and "no host folder before '::'" in out.stderr and "\x1b" not in out.stderr, out.stderr
    assert "'::\\x1b[31m'" in out.stderr, out.stderr
