"""Budgets as an engine axis (issue 21, part 1): `dlab wasm run --fuel/--deadline`, `dlab wasm bench
--budgets` (each budget paired with the same engine unbudgeted, in one interleaved run), the report's
budget table and `dlab probes fit --engines`. Shapes and facts only: nothing depends on this
machine's speed."""
import csv
import subprocess

import pytest
from dlab_cli import kernels, run


@pytest.mark.parametrize("budget", ["fuel", pytest.param("fuel_machine", marks=pytest.mark.compared)])
def test_fuel_stops_a_run_cleanly_and_refills_resume_it_to_the_same_result(dlab_bin, budget):
    plain = run(dlab_bin, "wasm", "run", "--invoke", "fib", kernels(dlab_bin), "20")
    assert plain.returncode == 0, plain.stderr
    out = run(dlab_bin, "wasm", "run", "--fuel", "100", "--budget", budget, "--invoke", "fib", kernels(dlab_bin), "20")
    assert out.returncode == 1 and "trap: fuel exhausted" in out.stderr, out.stderr
    out = run(dlab_bin, "wasm", "run", "--fuel", "1000", "--refills", "1000", "--budget", budget, "--invoke", "fib",
              kernels(dlab_bin), "20")
    assert out.returncode == 0, out.stderr
    assert out.stdout == plain.stdout
    assert "resuming with the same budget" in out.stderr and "suspensions" in out.stderr


def test_a_deadline_stops_a_long_run(dlab_bin):
    out = run(dlab_bin, "wasm", "run", "--deadline", "20", "--invoke", "fib", kernels(dlab_bin), "45")
    assert out.returncode == 1 and "trap: deadline reached" in out.stderr, out.stderr


@pytest.mark.parametrize("args, message", [
    (["--fuel", "10", "--budget", "deadline"], "spends no fuel"),
    (["--deadline", "10", "--budget", "fuel"], "has no deadline"),
    (["--refills", "3"], "needs --fuel or --deadline"),
    (["--fuel", "10", "--dispatch", "goto"], "is not built"),
    (["--fuel", "0"], "--fuel"),
])
def test_budget_options_are_checked(dlab_bin, args, message):
    out = run(dlab_bin, "wasm", "run", *args, "--invoke", "fib", kernels(dlab_bin), "10")
    assert out.returncode != 0 and message in out.stderr, out.stderr


@pytest.mark.compared
def test_bench_pairs_every_budget_with_the_same_engine_unbudgeted(dlab_bin, tmp_path):
    rd = run(dlab_bin, "new-run", "--results", str(tmp_path)).stdout.strip()
    out = run(dlab_bin, "wasm", "bench", "--quick", "--budgets", "none,fuel,deadline", "--dispatch", "tail,switch,goto",
              "--workloads", "fib", "--samples", "2", "--warmup", "0", "--no-native", "--run-dir", rd, timeout=300)
    assert out.returncode == 0, out.stderr
    assert "not run: goto x sp with the fuel budget is not built" in out.stderr
    with open(f"{rd}/wasm.summary.csv") as f:
        rows = [r for r in csv.DictReader(f) if r["metric"] == "tsc_ticks"]
    baseline = {r["case"]: r["baseline"] for r in rows}
    assert baseline["fib/tail/fuel"] == "fib/tail/none" and baseline["fib/tail/deadline"] == "fib/tail/none"
    assert baseline["fib/switch/fuel"] == "fib/switch/none"
    assert baseline["fib/goto/none"] == "fib/tail/none"  # the engine's own first budget pairs with the run's first case
    assert all("budget=" in r["params"] for r in rows)
    assert all(r["ratio"] for r in rows if r["case"] != r["baseline"])
    from dispatchlab_analysis.results import load_run
    from dispatchlab_analysis.tables import budgets_markdown
    text = budgets_markdown(load_run(rd))
    assert "fuel vs none" in text and "deadline vs none" in text and "| fib | tail |" in text


@pytest.mark.compared
def test_probes_fit_shows_the_fuel_argument_spilling_on_windows_x64(dlab_bin):
    out = run(dlab_bin, "probes", "fit", "--engines", "tail,tail_fuel,tail_fuel_machine", "--targets", "x86_64-pc-windows-msvc,x86_64-linux-gnu")
    assert out.returncode == 0, out.stderr
    sections = {s.split("\n", 1)[0].split(" ")[0]: s for s in out.stdout.split("### ")[1:]}
    assert set(sections) == {"tail", "tail_fuel", "tail_fuel_machine"}
    win = lambda s: next(line for line in s.splitlines() if line.startswith("| x86_64-pc-windows-msvc"))
    # a4 is the register IR's accumulator (the sp engines' fifth argument), a5 and a6 its float
    # ones, a7 the fuel counter: Windows x64's four argument positions are shared by integers and floats
    assert "| 4/7 | a4:u64, a5:f64, a6:f32 |" in win(sections["tail"])
    assert "| 4/8 | a4:u64, a5:f64, a6:f32, a7:u64 |" in win(sections["tail_fuel"])  # the research's +7%: the counter on the stack
    assert "| 4/7 | a4:u64, a5:f64, a6:f32 |" in win(sections["tail_fuel_machine"])
    linux = next(line for line in sections["tail_fuel"].splitlines() if line.startswith("| x86_64-linux-gnu"))
    assert "| 8/8 | none |" in linux  # six integer registers and two vector ones


def test_the_spec_suite_runs_in_a_budgeted_engine(dlab_bin):
    out = run(dlab_bin, "wasm", "spec", "--dispatch", "tail_pn", "--budget", "fuel", "--only", "fac", timeout=300)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "fuel budget" in out.stdout and " 0 failed" in out.stdout


def test_a_zero_length_read_on_a_pipe_returns_at_once_under_a_deadline(dlab_bin, wat):
    # fd_read of one iovec of length 0 from stdin, a pipe nothing is ever written to: 0 bytes at
    # once, as without a deadline (it used to wait for data, or for the deadline to trap).
    module = wat('''(module
      (import "wasi_snapshot_preview1" "fd_read" (func $r (param i32 i32 i32 i32) (result i32)))
      (memory (export "memory") 1)
      (data (i32.const 0) "\\40\\00\\00\\00\\00\\00\\00\\00")
      (data (i32.const 16) "\\ff\\ff\\ff\\ff")
      (func (export "empty_read") (result i32)
        (i32.add (i32.mul (call $r (i32.const 0) (i32.const 0) (i32.const 1) (i32.const 16)) (i32.const 1000))
                 (i32.load (i32.const 16)))))''', "emptyread")
    p = subprocess.Popen([str(dlab_bin), "wasm", "run", "--deadline", "30000", "--invoke", "empty_read", str(module)],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        p.wait(timeout=10)  # stdin stays open: a read that waits for data would wait the 30 s
    finally:
        if p.poll() is None:
            p.kill()
        p.stdin.close()
    out, err = p.stdout.read(), p.stderr.read()
    assert p.returncode == 0, err
    assert out.strip() == "0", (out, err)  # errno 0 and nread 0
