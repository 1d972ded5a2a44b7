"""`dlab wasm profile`'s pair counts: no pair is counted that never ran (the first op of an
invocation pairs with nothing), and the committed pair profile, which tools/superinstructions.py
chooses the superinstructions from, has no pair from `unreachable`. (Its --json output file:
harness/tests/cli/test_files.py; its op and pair counts on a kernel:
test_wasm_bench.py::test_profile_counts_ops_and_pairs_in_the_counting_engine.)"""
from pathlib import Path

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
