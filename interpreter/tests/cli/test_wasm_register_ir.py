"""The register IR at the command line (issue 22): `--ir` on run / profile / spec, `--irs` on bench
with `ir` in every row, run's default engine (the configuration measured fastest, said in --help),
the placements that refuse it, and `--suite corpus` saying how to build the corpus when it is not
built. Shapes and facts only: nothing depends on this machine's speed. (What the register IR writes
and that every engine agrees under it: interpreter/tests/register_ir_test.cc, lowering_test.cc and
ctest's spec_<engine>_register.)"""
import csv
from pathlib import Path

import pytest

from dispatchlab_analysis.results import parse_params
from dlab_cli import kernels, run


@pytest.mark.parametrize("dispatch", ["switch", "tail", pytest.param("goto", marks=pytest.mark.compared)])
def test_every_ir_computes_the_same_checksum_and_run_says_its_default(dlab_bin, dispatch):
    default = run(dlab_bin, "wasm", "run", "--invoke", "sort", kernels(dlab_bin), "3000")
    assert default.returncode == 0, default.stderr
    for ir in ("stack", "register"):
        out = run(dlab_bin, "wasm", "run", "--dispatch", dispatch, "--ir", ir, "--invoke", "sort", kernels(dlab_bin), "3000")
        if ir == "register" and dispatch != "tail" and out.returncode == 2:
            # a default build leaves the register forms out of the one-function engines, and says so
            assert "DLAB_ALL_ENGINES=ON" in out.stderr, out.stderr
            continue
        assert out.returncode == 0 and out.stdout == default.stdout, (dispatch, ir, out.stderr)
    help_text = run(dlab_bin, "wasm", "run", "--help").stdout
    assert "fastest measured" in help_text and "--ir" in help_text


@pytest.mark.compared
def test_a_placement_other_than_sp_runs_the_stack_ir_unless_the_register_ir_is_asked_for(dlab_bin):
    out = run(dlab_bin, "wasm", "run", "--placement", "sp_wt", "--invoke", "fib", kernels(dlab_bin), "15")
    assert out.returncode == 0, out.stderr
    refused = run(dlab_bin, "wasm", "run", "--placement", "sp_wt", "--ir", "register", "--invoke", "fib", kernels(dlab_bin), "15")
    assert refused.returncode == 2 and "sp placement only" in refused.stderr, refused.stderr
    bad = run(dlab_bin, "wasm", "run", "--ir", "registers", "--invoke", "fib", kernels(dlab_bin), "15")
    assert bad.returncode == 2, bad.stderr


def test_the_profile_counts_register_ops_when_asked(dlab_bin):
    stack = run(dlab_bin, "wasm", "profile", "--invoke", "fib", kernels(dlab_bin), "15")
    register = run(dlab_bin, "wasm", "profile", "--ir", "register", "--invoke", "fib", kernels(dlab_bin), "15")
    assert stack.returncode == 0 and register.returncode == 0, register.stderr
    assert "_r" in register.stderr and "return_r1" in register.stderr
    assert "return_r1" not in stack.stderr


@pytest.mark.compared
def test_bench_rows_name_their_ir_and_placements_without_it_are_said(dlab_bin, tmp_path):
    run_dir = run(dlab_bin, "new-run", "--results", str(tmp_path)).stdout.strip()
    out = run(dlab_bin, "wasm", "bench", "--quick", "--samples", "2", "--warmup", "0", "--dispatch", "tail", "--placements", "sp,sp_wt",
              "--irs", "stack,register", "--workloads", "fib", "--name", "wasm_ir", "--run-dir", run_dir)
    assert out.returncode == 0, out.stderr
    assert "not run: tail x sp_wt: the register IR is built for the sp placement only" in out.stderr
    with open(f"{run_dir}/wasm_ir.summary.csv") as f:
        rows = list(csv.DictReader(f))
    irs = {r["case"]: parse_params(r["params"]).get("ir") for r in rows}
    assert irs["fib/tail/sp/stack"] == "stack" and irs["fib/tail/sp/register"] == "register"
    assert irs["fib/tail/sp_wt/stack"] == "stack" and "fib/tail/sp_wt/register" not in irs


@pytest.mark.compared
def test_spec_runs_the_register_ir_and_says_which_placements_it_skips(dlab_bin):
    out = run(dlab_bin, "wasm", "spec", "--ir", "register", "--dispatch", "tail", "--placement", "all", "--only", "i32.bin")
    assert out.returncode == 0, out.stdout + out.stderr
    assert "register IR): " in out.stdout and "0 failed" in out.stdout
    assert out.stdout.count("== not run: the register IR is built for the sp placement only") == 4


def test_the_corpus_suite_says_how_to_build_it_when_it_is_not_built(dlab_bin, tmp_path):
    corpus = Path(dlab_bin).parent / "interpreter" / "corpus" / "corpus.wasm"
    out = run(dlab_bin, "wasm", "bench", "--suite", "corpus", "--quick", "--samples", "1", "--warmup", "0", "--dispatch", "tail",
              "--workloads", "lua", "--no-save")
    if corpus.exists():
        assert out.returncode == 0, out.stderr
        assert "lua/tail" in out.stdout and "lua/native" in out.stdout
    else:
        assert out.returncode != 0 and "just corpus" in out.stderr, out.stderr
