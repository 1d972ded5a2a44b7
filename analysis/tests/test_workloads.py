"""The workload suites' one list (interpreter/workloads/workloads.def, the corpus's corpus.def):
Python reads the same rows dlab compiles in, and a row it cannot read is named at its file:line."""
import pytest

from dispatchlab_analysis.workloads import DefError, corpus_selection_sizes, profile_sizes, read_suites
from dlab_cli import run


def test_the_rows_parse_into_suites_with_their_workloads():
    suites = read_suites()
    assert list(suites) == ["kernels", "3.0", "corpus"]
    assert suites["kernels"].command == "kernels_cmd.wasm" and suites["3.0"].command == ""
    assert {w.role for w in suites["corpus"].workloads} == {"selection", "held_out"}
    assert all(w.size > 0 for s in suites.values() for w in s.workloads)


def test_only_the_kernels_are_profiled_for_superinstructions():
    # superinstructions are chosen on the selection set; the 3.0 suite and the corpus are held out
    sizes = profile_sizes()
    assert set(sizes) == {w.name for w in read_suites()["kernels"].workloads}


def test_the_register_irs_superinstructions_are_profiled_on_the_corpus_selection_program_only():
    # never on a held-out program (lz4, lua): those are what the superinstructions are timed on
    sizes = corpus_selection_sizes()
    corpus = read_suites()["corpus"].workloads
    assert set(sizes) == {w.name for w in corpus if w.role == "selection"} and sizes
    assert not set(sizes) & {w.name for w in corpus if w.role == "held_out"}


def test_dlab_lists_every_suite_and_workload_of_the_rows(dlab_bin):
    help_text = " ".join(run(dlab_bin, "wasm", "bench", "--help").stdout.split())
    for suite in read_suites().values():
        listed = ",".join(w.name for w in suite.workloads)
        assert f"{listed} (--suite {suite.name})" in help_text, suite.name
        assert suite.what in help_text


def test_a_suite_without_a_command_module_refuses_peers_and_names_itself(dlab_bin):
    out = run(dlab_bin, "wasm", "bench", "--suite", "3.0", "--peer", "x=/bin/true", "--no-save")
    assert out.returncode == 2 and "this suite has none: not with --suite 3.0" in out.stderr, out.stderr


def test_a_bad_row_is_an_error_at_its_line(tmp_path):
    good = 'SUITE(kernels, "kernels", "k.wasm", "", "k")\n'
    cases = {
        'WORKLOAD(kernels, fib, 27, 24, 20)\n': "takes 6 arguments, this row has 5",
        'WORKLOAD(kernels, fib, 2x, 0, 0, "w")\n': "'2x' is not a non-negative integer",
        'WORKLOAD(other, fib, 1, 0, 0, "w")\n': "names suite other, which no SUITE row above declares",
        'WORKLOAD(kernels, fib, 1, 0, 0, "w")\nWORKLOAD(kernels, fib, 1, 0, 0, "w")\n': "workloads listed twice: fib",
        'WORKLOAD(kernels, fib, 1, 0, 0, "w) x\n': "not a row",
        'WORKLOAD(kernels, fib, 1, 0, 0, "w" "x")\n': "cannot read the arguments at column 23",
    }
    for rows, message in cases.items():
        f = tmp_path / "workloads.def"
        f.write_text("// a comment\n" + good + rows)
        with pytest.raises(DefError, match=message) as e:
            read_suites(f, tmp_path / "none.def")
        if "twice" not in message:
            assert f"{f}:3:" in str(e.value)
