"""dlab wasm bench --calls (issue 21, part 2): the call path in every chosen engine, in the bench's
result schema, and each instance's memory in the sidecar. Only the shape is checked: nothing here
depends on this machine's speed."""
import csv
import json
import subprocess

import pytest

KINDS = ["host_to_wasm_nop", "host_to_wasm_i32x4", "loop_empty", "wasm_to_host", "wasm_call", "call_indirect", "call_ref",
         "import_call", "instantiate"]


def test_every_kind_of_call_in_every_engine(dlab_bin, tmp_path):
    run = subprocess.run([str(dlab_bin), "new-run", "--results", str(tmp_path)], capture_output=True, text=True, check=True).stdout.strip()
    out = subprocess.run([str(dlab_bin), "wasm", "bench", "--calls", "--quick", "--dispatch", "switch,tail", "--samples", "2",
                          "--warmup", "0", "--run-dir", run], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    with open(f"{run}/wasm_calls.summary.csv") as f:
        rows = [r for r in csv.DictReader(f) if r["metric"] == "tsc_ticks"]
    cases = {r["case"] for r in rows}
    assert cases == {f"{k}/{e}" for k in KINDS for e in ("switch", "tail")}
    for r in rows:
        assert float(r["median"]) > 0, r
        assert "call=" in r["params"] and r["baseline"].endswith("/switch")
    sidecar = json.loads(open(f"{run}/wasm_calls.json").read())
    assert [m["engine"] for m in sidecar["instance_memory"]] == ["switch", "tail"]
    assert all(m["heap_bytes_per_instance"] > 0 for m in sidecar["instance_memory"])
    assert {c["call"] for c in sidecar["calls"]} == set(KINDS)
    from dispatchlab_analysis.report import render
    from dispatchlab_analysis.results import load_run
    text = render(load_run(run))
    assert "### call_ref" in text and "### Memory per instance" in text


@pytest.mark.parametrize("extra", [["--workloads", "fib"], ["--clock", "fixed:10"], ["--no-native"]])
def test_options_that_do_not_apply_are_refused(dlab_bin, extra):
    out = subprocess.run([str(dlab_bin), "wasm", "bench", "--calls", "--no-save", *extra], capture_output=True, text=True, timeout=60)
    assert out.returncode == 2 and "does not apply with --calls" in out.stderr


def test_under_cachegrind_the_repetitions_are_the_call_paths_own(dlab_bin):
    out = subprocess.run([str(dlab_bin), "wasm", "bench", "--calls", "--valgrind", "--valgrind-calls", "3", "--no-save"],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 2 and "its own repetitions" in out.stderr


@pytest.mark.parametrize("kind", KINDS)
def test_the_cachegrind_child_makes_one_kind_of_call_in_one_engine(dlab_bin, kind):
    """What `--calls --valgrind` runs under cachegrind with N and 2N (the counting itself is
    `just rfc`'s: valgrind is slow), in a budgeted engine too."""
    for budget in ("none", "fuel"):
        out = subprocess.run([str(dlab_bin), "wasm", "bench", "--calls", "--no-save", "--calls-child", kind, "--calls-child-n", "50",
                              "--dispatch", "tail", "--budgets", budget], capture_output=True, text=True, timeout=60)
        assert out.returncode == 0, out.stderr


def test_the_cachegrind_child_needs_a_known_kind_and_one_engine(dlab_bin):
    out = subprocess.run([str(dlab_bin), "wasm", "bench", "--calls", "--no-save", "--calls-child", "teleport", "--calls-child-n", "5",
                          "--dispatch", "tail"], capture_output=True, text=True, timeout=60)
    assert out.returncode != 0 and "no kind of call named teleport" in out.stderr
    out = subprocess.run([str(dlab_bin), "wasm", "bench", "--calls", "--no-save", "--calls-child", "wasm_call", "--calls-child-n", "5",
                          "--dispatch", "tail,switch"], capture_output=True, text=True, timeout=60)
    assert out.returncode == 2 and "needs one engine" in out.stderr
