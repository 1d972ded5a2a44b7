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
    cases = {r["variant"] for r in rows}
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


@pytest.mark.parametrize("extra", [["--workloads", "fib"], ["--valgrind"], ["--clock", "fixed:10"], ["--no-native"]])
def test_options_that_do_not_apply_are_refused(dlab_bin, extra):
    out = subprocess.run([str(dlab_bin), "wasm", "bench", "--calls", "--no-save", *extra], capture_output=True, text=True, timeout=60)
    assert out.returncode == 2 and "does not apply with --calls" in out.stderr
