"""Guard pages at the command line (issue 22): `--bounds check|guard` on run and spec, `--bounds` as
a list on bench with `bounds` in every row, run's default (guard where the engine has it), the
engines without a guard row refusing it, and an out-of-bounds access being the same trap either
way. Shapes and facts only: nothing depends on this machine's speed. (The faults themselves,
nested invocations and grown memories: interpreter/tests/guard_pages_test.cc; the whole spec suite
in the guard engines: ctest's spec_tail_guard*, spec_tail_pn_guard*.)"""
import csv
import shutil
import subprocess

import pytest

from dispatchlab_analysis.results import parse_params
from dlab_cli import kernels, run

OOB_WAT = """(module (memory 1)
  (func (export "load") (param i32) (result i32) (i32.load (local.get 0)))
  (func (export "store") (param i32 i64) (i64.store (local.get 0) (local.get 1))))"""


@pytest.fixture
def oob_module(tmp_path):
    wat2wasm = shutil.which("wat2wasm")
    if not wat2wasm:
        pytest.skip("wat2wasm (wabt) is not installed")
    src = tmp_path / "oob.wat"
    src.write_text(OOB_WAT)
    out = tmp_path / "oob.wasm"
    subprocess.run([wat2wasm, str(src), "-o", str(out)], check=True)
    return str(out)


def test_both_bounds_compute_the_same_and_trap_the_same(dlab_bin, oob_module):
    default = run(dlab_bin, "wasm", "run", "--invoke", "sort", kernels(dlab_bin), "3000")
    assert default.returncode == 0, default.stderr
    for dispatch in ("tail", "tail_pn"):
        for bounds in ("check", "guard"):
            out = run(dlab_bin, "wasm", "run", "--dispatch", dispatch, "--bounds", bounds, "--invoke", "sort", kernels(dlab_bin), "3000")
            assert out.returncode == 0 and out.stdout == default.stdout, (dispatch, bounds, out.stderr)
            ok = run(dlab_bin, "wasm", "run", "--dispatch", dispatch, "--bounds", bounds, "--invoke", "load", oob_module, "65532")
            assert ok.returncode == 0 and ok.stdout.strip() == "0", ok.stderr
            for args in (["load", oob_module, "65533"], ["store", oob_module, "65530", "1"], ["load", oob_module, "4294967295"]):
                trap = run(dlab_bin, "wasm", "run", "--dispatch", dispatch, "--bounds", bounds, "--invoke", *args)
                assert trap.returncode != 0 and "out of bounds memory access" in trap.stderr, (dispatch, bounds, args, trap.stderr)


def test_engines_without_a_guard_row_refuse_it_and_run_says_its_default(dlab_bin):
    refused = run(dlab_bin, "wasm", "run", "--dispatch", "switch", "--bounds", "guard", "--invoke", "fib", kernels(dlab_bin), "10")
    assert refused.returncode == 2 and "with guard pages is not built" in refused.stderr, refused.stderr
    budgeted = run(dlab_bin, "wasm", "run", "--fuel", "100000", "--bounds", "guard", "--invoke", "fib", kernels(dlab_bin), "10")
    assert budgeted.returncode == 2 and "--bounds" in budgeted.stderr, budgeted.stderr
    # Without --bounds a budgeted or switch run falls back to check rather than failing.
    assert run(dlab_bin, "wasm", "run", "--fuel", "100000", "--invoke", "fib", kernels(dlab_bin), "10").returncode == 0
    assert run(dlab_bin, "wasm", "run", "--dispatch", "switch", "--invoke", "fib", kernels(dlab_bin), "10").returncode == 0
    bad = run(dlab_bin, "wasm", "run", "--bounds", "guarded", "--invoke", "fib", kernels(dlab_bin), "10")
    assert bad.returncode == 2, bad.stderr
    help_text = run(dlab_bin, "wasm", "run", "--help").stdout
    assert "--bounds" in help_text and "--bounds guard" in help_text


def test_bench_rows_name_their_bounds(dlab_bin, tmp_path):
    run_dir = run(dlab_bin, "new-run", "--results", str(tmp_path)).stdout.strip()
    out = run(dlab_bin, "wasm", "bench", "--quick", "--samples", "2", "--warmup", "0", "--dispatch", "tail_pn,switch",
              "--bounds", "check,guard", "--workloads", "sieve", "--name", "wasm_bounds", "--run-dir", run_dir)
    assert out.returncode == 0, out.stderr
    assert "not run: switch x sp with guard pages is not built" in out.stderr
    with open(f"{run_dir}/wasm_bounds.summary.csv") as f:
        rows = list(csv.DictReader(f))
    bounds = {r["case"]: parse_params(r["params"]).get("bounds") for r in rows}
    assert bounds["sieve/tail_pn/check"] == "check" and bounds["sieve/tail_pn/guard"] == "guard"
    assert bounds["sieve/switch/check"] == "check" and "sieve/switch/guard" not in bounds
    baselines = {r["case"]: r["baseline"] for r in rows}
    assert baselines["sieve/tail_pn/guard"] == "sieve/tail_pn/check"


def test_spec_runs_the_trap_scripts_with_guard_pages(dlab_bin):
    out = run(dlab_bin, "wasm", "spec", "--dispatch", "tail_pn", "--bounds", "guard", "--only", "memory_trap")
    assert out.returncode == 0, out.stdout + out.stderr
    assert "guard bounds): " in out.stdout and " 0 failed" in out.stdout


def test_a_limited_address_space_makes_run_fall_back_to_check(dlab_bin):
    if "asan" in str(dlab_bin):
        pytest.skip("AddressSanitizer's shadow memory does not fit under an address-space limit")
    # 3 GB of address space: enough for dlab, not for one 8 GiB reservation.
    script = 'ulimit -v 3000000; exec "$@"'
    default = subprocess.run(["bash", "-c", script, "limited", str(dlab_bin), "wasm", "run", "--invoke", "fib", kernels(dlab_bin), "10"],
                             capture_output=True, text=True, timeout=120)
    assert default.returncode == 0 and default.stdout.strip() == "55", default.stderr
    guard = subprocess.run(["bash", "-c", script, "limited", str(dlab_bin), "wasm", "run", "--bounds", "guard", "--invoke", "fib",
                            kernels(dlab_bin), "10"], capture_output=True, text=True, timeout=120)
    assert guard.returncode == 2 and "cannot reserve it" in guard.stderr and "--bounds check" in guard.stderr, guard.stderr
