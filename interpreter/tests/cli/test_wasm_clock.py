"""dlab wasm run|bench --clock fixed:NS (issue 21, part 3): every WASI clock read advances NS
nanoseconds, so a program that sizes its work by the clock runs the same iterations in every
engine. Nothing here depends on this machine's speed."""
import json
import subprocess

import pytest

TIMEOUT = 60

# Two clock reads of clock `id` (0 realtime, 1 monotonic, 2 process, 3 thread), their difference.
CLOCK_DIFF = """(module
  (import "wasi_snapshot_preview1" "clock_time_get" (func $t (param i32 i64 i32) (result i32)))
  (memory (export "memory") 1)
  (func (export "diff") (param $id i32) (result i64)
    (drop (call $t (local.get $id) (i64.const 1) (i32.const 0)))
    (drop (call $t (local.get $id) (i64.const 1) (i32.const 8)))
    (i64.sub (i64.load (i32.const 8)) (i64.load (i32.const 0)))))"""


@pytest.fixture
def clock_module(tmp_path):
    src, out = tmp_path / "c.wat", tmp_path / "c.wasm"
    src.write_text(CLOCK_DIFF)
    subprocess.run(["wat2wasm", str(src), "-o", str(out)], check=True)
    return out


@pytest.mark.parametrize("dispatch", ["switch", "tail", pytest.param("goto", marks=pytest.mark.compared)])
@pytest.mark.parametrize("clock_id", ["0", "1", "2", "3"])
def test_a_fixed_clock_steps_by_its_step_in_every_engine_and_clock(dlab_bin, clock_module, dispatch, clock_id):
    out = subprocess.run([str(dlab_bin), "wasm", "run", "--dispatch", dispatch, "--clock", "fixed:1500", str(clock_module),
                          "--invoke", "diff", "--", clock_id], capture_output=True, text=True, timeout=TIMEOUT)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "1500"


@pytest.mark.parametrize("value,text", [("fixed:0", "is not a step in nanoseconds"), ("fixed:abc", "is not a step"),
                                        ("fixed:", "is not a step"), ("wallclock", "is not real or fixed:NS"),
                                        ("fixed:1000000000001", "1..1000000000000")])
def test_a_bad_clock_is_refused(dlab_bin, clock_module, value, text):
    for args in (["wasm", "run", str(clock_module), "--invoke", "diff", "--clock", value, "--", "1"],
                 ["wasm", "bench", "--clock", value, "--no-save"]):
        out = subprocess.run([str(dlab_bin), *args], capture_output=True, text=True, timeout=TIMEOUT)
        assert out.returncode == 2 and text in out.stderr, (args, out.stderr)


def test_bench_records_the_clock_in_every_row(dlab_bin, tmp_path):
    run_dir = subprocess.run([str(dlab_bin), "new-run", "--results", str(tmp_path)], check=True, capture_output=True,
                             text=True).stdout.strip()
    out = subprocess.run([str(dlab_bin), "wasm", "bench", "--quick", "--workloads", "fib", "--dispatch", "switch", "--no-native",
                          "--samples", "1", "--warmup", "0", "--clock", "fixed:1000", "--run-dir", run_dir],
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-800:]
    rows = open(f"{run_dir}/wasm.summary.csv").read().splitlines()[1:]
    assert rows and all("clock=fixed:1000" in r for r in rows)
