"""`dlab wasm profile`'s pair counts: no pair is counted that never ran (the first op of an
invocation pairs with nothing), and the committed pair profile, which tools/superinstructions.py
chooses the superinstructions from, has no pair from `unreachable`. (Its --json output file:
harness/tests/cli/test_files.py; its op and pair counts on a kernel:
test_wasm_bench.py::test_profile_counts_ops_and_pairs_in_the_counting_engine.)"""
import json
import platform
import shutil
from pathlib import Path

import pytest

from dlab_cli import run_dlab

REPO = Path(__file__).resolve().parents[3]


def test_profile_counts_no_pair_that_never_ran(dlab_bin, wat, tmp_path):
    # A call from _start: the first op of an invocation pairs with nothing (it used to pair with
    # op 0, `unreachable`).
    module = wat('(module (func $g (result i32) (i32.const 1)) (func (export "f") (result i32) (call $g)))')
    j = tmp_path / "p.json"
    out = run_dlab(dlab_bin, ["wasm", "profile", str(module), "--invoke", "f", "--repeat", "3", "--lowering", "plain",
                              "--json", str(j)])
    assert out.returncode == 0, out.stderr
    import json
    pairs = json.loads(j.read_text())["pairs"]
    assert pairs and not [p for p in pairs if p["from"] == "unreachable"], pairs


def test_profile_reports_the_codes_density_from_the_declared_lengths(dlab_bin, wat, tmp_path):
    # The code words lowered, and the words per dispatch over the ops whose length is declared:
    # the JSON's totals are its ops' counts times their words, and an op lowered by hand (call)
    # has no `words` and is left out of them.
    module = wat('(module (func $g (param i32) (result i32) (i32.add (local.get 0) (i32.const 1)))'
                 ' (func (export "f") (result i32) (call $g (i32.const 2))))')
    j = tmp_path / "p.json"
    out = run_dlab(dlab_bin, ["wasm", "profile", str(module), "--invoke", "f", "--repeat", "3", "--ir", "register",
                              "--json", str(j)])
    assert out.returncode == 0, out.stderr
    assert "words per dispatch over the" in out.stderr, out.stderr
    import json
    p = json.loads(j.read_text())
    assert p["code_words"] > 0
    declared = [o for o in p["ops"] if "words" in o]
    assert declared and all(o["words"] >= 1 for o in declared)
    assert p["declared"]["dispatches"] == sum(o["count"] for o in declared)
    assert p["declared"]["words"] == sum(o["count"] * o["words"] for o in declared)
    assert not [o for o in p["ops"] if o["op"].startswith("call") and "words" in o]


def test_the_committed_pair_profile_has_no_pair_from_unreachable():
    csv = REPO / "interpreter" / "src" / "engines" / "handlers" / "superinstructions.pairs.csv"
    lines = csv.read_text().splitlines()
    assert not [line for line in lines[1:] if line.split(",")[1:2] == ["unreachable"]]


@pytest.mark.skipif(platform.machine() != "x86_64" or shutil.which("valgrind") is None,
                    reason="--predict traces amd64 binaries under valgrind")
def test_profile_predict_simulates_the_same_program_in_real_engines(dlab_bin, tmp_path):
    """`wasm profile --predict` (issue 46, item 3): after the counting engine's profile, the same
    call in switch and tail under dlabtrace. A dispatch is an indirect jump run in the engine's
    code: as many as the profile's dispatches (give or take the entry's and exit's jumps); the
    last-target table misses every dispatch of switch's one jump. Sampled, fewer dispatches are
    traced, the result says how, and a table cleared every N instructions is cleared per traced
    instruction (its flushes per dispatch stay near the whole trace's, not PERIOD/ON times them)."""
    module = Path(dlab_bin).parent / "interpreter" / "workloads" / "kernels.wasm"
    whole, sampled = tmp_path / "whole.json", tmp_path / "sampled.json"
    for json_path, extra in ((whole, []), (sampled, ["--predict-sample", "100000/1000000"])):
        out = run_dlab(dlab_bin, ["wasm", "profile", str(module), "--invoke", "bytecode", "--predict", "btb_512x1,store_sets",
                                  "--predict-dispatch", "switch,tail", "--json", str(json_path), *extra, "--", "30000"])
        assert out.returncode == 0, out.stderr[-2000:]
        assert "per 1,000 dispatches, SIMULATED" in out.stderr
    j = json.loads(whole.read_text())
    cases = {c["case"]: c for c in j["simulated"]["cases"]}
    assert set(cases) == {"kernels.wasm/switch", "kernels.wasm/tail"}
    for c in cases.values():
        assert j["dispatches"] <= int(c["params"]["dispatches"]) <= j["dispatches"] + 4, (c["params"], j["dispatches"])
        assert {m["metric"] for m in c["counts"]} == {"simulated_indirect_mispredicts[btb_512x1]", "simulated_memory_order_flushes[store_sets]"}
    per_1k = lambda c, m: next(x["per_1k_dispatches"] for x in c["counts"] if x["metric"] == m)
    assert per_1k(cases["kernels.wasm/switch"], "simulated_indirect_mispredicts[btb_512x1]") > 999
    s = json.loads(sampled.read_text())["simulated"]
    assert s["sample"] == {"on": 100000, "period": 1000000} and "SAMPLED" in s["traced"]
    for c in s["cases"]:
        whole_case = cases[c["case"]]
        assert int(c["params"]["dispatches"]) < int(whole_case["params"]["dispatches"]) / 3
        assert c["params"]["sampled"] == "100000/1000000" and "branches_dropped_at_gaps" in c["params"]
        m = "simulated_memory_order_flushes[store_sets]"
        # Store sets clear every 10^6 instructions: were the gaps counted whole, each 10^5-instruction
        # window would start on a cleared table and flush several times the whole trace's rate (on a
        # run this long; in a short one the pairs' first flushes alone raise a sample's rate).
        assert per_1k(c, m) < 2 * per_1k(whole_case, m) + 0.5, (per_1k(c, m), per_1k(whole_case, m))
