"""Hostile input to tools/superinstructions.py, table-driven (issue 23): `generate` refuses a
malformed or empty pairs file with one line naming the file and line, before anything is written,
and a wrong command line without a traceback; a pair that starts with `unreachable` is never
chosen, and the committed profile generates the committed file."""
import importlib.util
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
TIMEOUT = 60  # seconds: a hang is a failure, not a stuck CI


@pytest.fixture
def superinstructions(tmp_path, monkeypatch):
    """tools/superinstructions.py with its files in tmp_path and handlers.def replaced by a few
    entries (no compiler needed): returns (module, pairs CSV, generated file)."""
    spec = importlib.util.spec_from_file_location("superinstructions_under_test", REPO / "tools" / "superinstructions.py")
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)
    pairs, out = tmp_path / "pairs.csv", tmp_path / "superinstructions.def"
    monkeypatch.setattr(tool, "PAIRS", pairs)
    monkeypatch.setattr(tool, "OUT", out)
    monkeypatch.setattr(tool, "REGISTER_PAIRS", tmp_path / "register.pairs.csv")  # absent unless a test writes it
    monkeypatch.setattr(tool, "REGISTER_TRIPLES", tmp_path / "register_triples.pairs.csv")  # absent unless a test writes it
    ops = {
        "local_get": ("TOS", "PUSH_VALUE(fp[(ip[1])]); NEXT_KEEP(2);"),
        "i32_add": ("TOS", "{ SET_TOP(TOP_VALUE + sp[-2]); --sp; NEXT_KEEP(1); }"),
        "call": ("OP", "{ GOTO(callee); }"),
        # A top-of-stack entry here on purpose: a pair starting with it must be left out for what
        # its body does (it never steps on), not only because handlers.def makes it an OP.
        "unreachable": ("TOS", 'TRAP("unreachable");'),
    }
    monkeypatch.setattr(tool, "entries", lambda clang, handlers: ops)
    return tool, pairs, out


def run_tool(tool, argv):
    """main in this process: (exit status, message). sys.exit("text") is status 1 with text on stderr."""
    try:
        return tool.main(argv), ""
    except SystemExit as e:
        return (1, e.code) if isinstance(e.code, str) else (e.code, "")


HEADER = "workload,first,second,count,dispatches\n"
GOOD_ROW = "fib,local_get,i32_add,50,1000\n"

# (pairs file content, text the error must contain, after "<file>:")
PAIRS_REFUSALS = [
    (HEADER + "fib,local_get,i32_add,5\n", "2: malformed row (4 fields, the header has 5)"),
    (HEADER + "fib,local_get,i32_add,5,100,9\n", "2: malformed row (6 fields, the header has 5)"),
    (HEADER + "fib\n", "2: malformed row (1 fields, the header has 5)"),
    (HEADER + "fib,local_get,i32_add,five,100\n", "2: malformed row (count 'five' is not an integer)"),
    (HEADER + "fib,local_get,i32_add,5,1e3\n", "2: malformed row (dispatches '1e3' is not an integer)"),
    (HEADER + "fib,local_get,i32_add, 5,100\n", "count ' 5' is not an integer"),
    (HEADER + "fib,local_get,i32_add,-5,100\n", "2: malformed row (count -5 of 100 dispatches)"),
    (HEADER + "fib,local_get,i32_add,5,0\n", "2: malformed row (count 5 of 0 dispatches)"),
    (HEADER + "fib,local_get,i32_add,500,100\n", "2: malformed row (count 500 of 100 dispatches)"),
    (HEADER + "fib,local_get,nope,5,100\n", "2: malformed row (op 'nope' is not in handlers.def"),
    (HEADER + "fib,,i32_add,5,100\n", "2: malformed row (first is empty)"),
    (HEADER + ",local_get,i32_add,5,100\n", "2: malformed row (workload is empty)"),
    (HEADER + "fib,local_get,i32_add,,100\n", "2: malformed row (count is empty)"),
    (HEADER + GOOD_ROW + "\n" + "fib,local_get,i32_add,5\n", "4: malformed row (4 fields"),  # the line, blank ones counted
    (HEADER + GOOD_ROW * 200 + "fib,call,nope,1,1000\n", "202: malformed row (op 'nope'"),  # a row never chosen is checked too
    ("", "1: the header is missing (empty file)"),
    ("first,second,count\n" + GOOD_ROW, "1: the header is first,second,count, expected workload,first,second,count,dispatches"),
    (HEADER, "no pairs"),
    (HEADER + "\n\n", "no pairs"),
    (HEADER + "fib,call,local_get,5,100\n", "none of its 1 pairs is two top-of-stack ops"),
    (HEADER + "fib,unreachable,local_get,5,100\n", "none of its 1 pairs is two top-of-stack ops"),
]


@pytest.mark.parametrize("check", [False, True], ids=["generate", "generate --check"])
@pytest.mark.parametrize("content,text", PAIRS_REFUSALS, ids=[t[:40] for _, t in PAIRS_REFUSALS])
def test_generate_refuses_a_malformed_or_empty_pairs_file_with_file_and_line(superinstructions, content, text, check):
    tool, pairs, out = superinstructions
    pairs.write_text(content)
    if check:
        out.write_text("the committed file\n")
    status, message = run_tool(tool, ["generate"] + (["--check"] if check else []))
    assert status == 1 and message.startswith(f"{pairs}:") and text in message, message
    assert "\n" not in message
    assert (out.read_text() == "the committed file\n") if check else not out.exists()  # nothing written


def test_generate_refuses_a_file_that_is_not_text(superinstructions):
    tool, pairs, out = superinstructions
    pairs.write_bytes(HEADER.encode() + b"fib,\xff\xfe,i32_add,1,2\n")
    status, message = run_tool(tool, ["generate"])
    assert status == 1 and "cannot read it" in message and not out.exists(), message


def test_a_pair_that_starts_with_unreachable_is_never_chosen(superinstructions):
    tool, pairs, out = superinstructions
    # The profiler has counted unreachable -> call (a pair that never ran); here it is even the
    # most frequent pair, and its second op a top-of-stack one.
    pairs.write_text(HEADER + "fib,unreachable,local_get,900,1000\nfib,unreachable,call,900,1000\n" + GOOD_ROW)
    assert run_tool(tool, ["generate", "--count", "8"]) == (0, "")
    text = out.read_text()
    assert "SUPER(local_get__i32_add," in text and "unreachable" not in text


def test_the_register_irs_pairs_become_super_r_entries_after_the_stack_ones(superinstructions):
    tool, pairs, out = superinstructions
    pairs.write_text(HEADER + GOOD_ROW)
    # From the register IR's profile: a pair the stack section already has is not written twice,
    # one whose first op never steps on is left out, and an OP entry may take part (sp placement).
    tool.REGISTER_PAIRS.write_text(HEADER + "sqlite,local_get,i32_add,500,1000\nsqlite,call,local_get,400,1000\n"
                                   "sqlite,i32_add,call,300,1000\n")
    assert run_tool(tool, ["generate", "--count", "8"]) == (0, "")
    text = out.read_text()
    assert "SUPER_R(local_get__i32_add," not in text and "SUPER_R(i32_add__call, i32_add, call," in text
    assert "call__local_get" not in text
    assert text.index("SUPER(local_get__i32_add,") < text.index("SUPER_R(")
    assert "Chosen from: sqlite" in text


def test_the_register_count_is_honoured(superinstructions):
    tool, pairs, out = superinstructions
    pairs.write_text(HEADER + GOOD_ROW)
    tool.REGISTER_PAIRS.write_text(HEADER + "sqlite,i32_add,call,300,1000\nsqlite,i32_add,local_get,200,1000\n")
    assert run_tool(tool, ["generate", "--count", "8", "--register-count", "1"]) == (0, "")
    assert out.read_text().count("\nSUPER_R(") == 1 and "SUPER_R(i32_add__call," in out.read_text()
    assert run_tool(tool, ["generate", "--count", "8", "--register-count", "0"]) == (0, "")
    assert "\nSUPER_R(" not in out.read_text()


def test_a_pair_and_the_op_after_it_become_a_triple_whose_pair_steps_through_a_label(superinstructions):
    tool, pairs, out = superinstructions
    pairs.write_text(HEADER + GOOD_ROW)
    tool.REGISTER_PAIRS.write_text(HEADER + "sqlite,i32_add,local_get,300,1000\n")
    # From the profile with superinstructions: the pair made above and an op (kept), a pair not made
    # (left out: the profile may be older than the pair list), a third that never runs (kept: a
    # triple's pair must step on, not its third), and an op handlers.def lacks (refused).
    tool.REGISTER_TRIPLES = tool.REGISTER_PAIRS.with_name("triples.csv")
    tool.REGISTER_TRIPLES.write_text(HEADER + "sqlite,i32_add__local_get,i32_add,200,1000\n"
                                     "sqlite,local_get__call,i32_add,100,1000\nsqlite,i32_add__local_get,unreachable,50,1000\n")
    assert run_tool(tool, ["generate", "--count", "8"]) == (0, "")
    text = out.read_text()
    assert "SUPER_R(i32_add__local_get__i32_add, i32_add__local_get, i32_add, ({" in text
    assert "DLW_SUPER_i32_add__local_get__i32_add_1: {PUSH_VALUE" in text  # the pair's second body after its label
    assert "DLW_STEP_KEEP(i32_add__local_get__i32_add_1, 1)" in text and "DLW_STEP_KEEP(i32_add__local_get__i32_add, 2)" in text
    assert "local_get__call__" not in text and "SUPER_R(i32_add__local_get__unreachable," in text
    assert text.index("SUPER_R(i32_add__local_get,") < text.index("SUPER_R(i32_add__local_get__i32_add,")
    assert run_tool(tool, ["generate", "--count", "8", "--register-triples", "0"]) == (0, "")
    assert "__local_get__" not in out.read_text()
    tool.REGISTER_TRIPLES.write_text(HEADER + "sqlite,i32_add__local_get,nope,200,1000\n")
    status, message = run_tool(tool, ["generate", "--count", "8"])
    assert status == 1 and "op 'nope' is not in handlers.def" in message


def test_the_triples_profile_is_of_a_build_with_pairs_only(superinstructions):
    tool, _, out = superinstructions
    out.write_text("SUPER(a__b, a, b, (x), (y))\nSUPER_R(c__d, c, d, (x), (y))\n")
    keep = tool.triples_profile_filter(out)
    assert keep("c__d", "e") and not keep("a__b", "e") and not keep("c__d", "a__b") and not keep("c", "d")
    # A build with triples runs them: its profile would lack their rows. Refused, with what to do.
    out.write_text("SUPER_R(c__d, c, d, (x), (y))\nSUPER_R(c__d__e, c__d, e, (x), (y))\n")
    with pytest.raises(SystemExit) as e:
        tool.triples_profile_filter(out)
    assert "generate --register-triples 0" in str(e.value)
    out.write_text("SUPER(a__b, a, b, (x), (y))\n")
    with pytest.raises(SystemExit) as e:
        tool.triples_profile_filter(out)
    assert "no register-IR pair superinstructions" in str(e.value)
    # An empty triples profile names the command that makes it.
    tool.REGISTER_TRIPLES.write_text(HEADER)
    with pytest.raises(SystemExit) as e:
        tool.read_triples(tool.REGISTER_TRIPLES, {}, {})
    assert "profile-register --triples" in str(e.value)


def test_the_interpreter_runs_triples_and_gets_the_same_result(dlab_bin):
    # fib's loop is a triple's (i32.add, i32.sub, a compare and branch) in the committed list; the
    # result with superinstructions is the one without.
    kernels = dlab_bin.parent / "interpreter" / "workloads" / "kernels.wasm"
    results = {}
    for lowering in ("fold+fuse+super+acc+elide", "fold+fuse+acc+elide"):
        out = subprocess.run([str(dlab_bin), "wasm", "profile", "--ir", "register", "--lowering", lowering, "--top", "1000",
                              "--invoke", "fib", str(kernels), "20"], capture_output=True, text=True, timeout=TIMEOUT)
        assert out.returncode == 0, out.stderr
        results[lowering] = out.stdout
        ops = [line.split()[-1] for line in out.stderr.splitlines() if line.strip().endswith(tuple("abcdefghijklmnopqrstuvwxyz_"))]
        if "super" in lowering:
            assert any(op.count("__") >= 2 for op in ops), out.stderr
    assert results["fold+fuse+super+acc+elide"] == results["fold+fuse+acc+elide"] == "6765\n"


def test_a_profile_that_fails_or_cannot_start_is_one_line_naming_it(superinstructions):
    tool, _, _ = superinstructions
    with pytest.raises(SystemExit) as e:
        tool.run_profile(["/nonexistent/dlab", "wasm", "profile"])
    assert str(e.value) == "/nonexistent/dlab: cannot run it (No such file or directory); give --dlab"
    with pytest.raises(SystemExit) as e:
        tool.run_profile([sys.executable, "-c", "import sys; sys.stderr.write('no such export'); sys.exit(3)"])
    assert "exited with status 3: no such export" in str(e.value)


def test_a_group_of_workloads_weighs_as_one(superinstructions):
    tool, _, _ = superinstructions
    # local_get,i32_add: 10% of sqlite's dispatches; i32_add,call: 6% of each of three kernels'.
    # Over four workloads the kernels' pair would come first (4.5% against 2.5%); over the two
    # groups sqlite's does (5% against 3%).
    tool.REGISTER_PAIRS.write_text(HEADER + "sqlite,local_get,i32_add,100,1000\n" +
                                   "".join(f"kernels/{k},i32_add,call,60,1000\n" for k in ("a", "b", "c")))
    assert [(a, b, round(s, 4)) for a, b, s in tool.read_pairs(tool.REGISTER_PAIRS)] == [
        ("local_get", "i32_add", 0.05), ("i32_add", "call", 0.03)]


def test_the_register_irs_whole_programs_are_the_selection_ones_and_must_be_fetched(superinstructions, tmp_path, monkeypatch):
    tool, _, _ = superinstructions
    listed = tool.selection_programs()
    assert listed and all(p["role"] == "selection" for p in listed)  # never a held-out or start-up one
    roles = {p["name"]: p["role"] for p in __import__("json").loads(tool.PROGRAMS_LIST.read_text())["programs"]}
    assert {p["name"] for p in listed} == {n for n, r in roles.items() if r == "selection"}
    # Not fetched: one line naming the folder and the command that fetches it, nothing run.
    monkeypatch.setenv("DLAB_PROGRAMS_CACHE", str(tmp_path / "empty-cache"))
    with pytest.raises(SystemExit) as e:
        tool.profile_program("/nonexistent/dlab", listed[0], "fold", tmp_path / "p.json")
    assert f"tools/fetch-programs --only {listed[0]['name']}" in str(e.value) and str(tmp_path / "empty-cache") in str(e.value)


@pytest.mark.skipif(shutil.which("clang++-19") is None, reason="needs clang++-19 (./tools/bootstrap installs it)")
def test_the_committed_profile_passes_the_checks_and_generates_the_committed_file():
    # The committed pairs CSV holds `unreachable,call` rows; the generated file must not change for them.
    out = subprocess.run([sys.executable, str(REPO / "tools" / "superinstructions.py"), "generate", "--check"],
                         capture_output=True, text=True, timeout=TIMEOUT)
    assert out.returncode == 0, out.stderr
    assert "unreachable" not in (REPO / "interpreter" / "src" / "engines" / "handlers" / "superinstructions.def").read_text()


# (arguments, exit status, text the error must contain): the tool run as a program
TOOL_REFUSALS = [
    (["generate", "--count", "0"], 2, "--count must be 1..200"),
    (["generate", "--count", "x"], 2, "invalid int value"),
    (["generate", "--register-count", "1001"], 2, "--register-count must be 0..1000"),
    (["generate", "--register-triples", "401"], 2, "--register-triples must be 0..400"),
    (["generate", "--register-count", "-1"], 2, "--register-count must be 0..1000"),
    (["generate", "--check", "--clang", "/nonexistent/clang++"], 1, "/nonexistent/clang++: cannot run it"),
]


@pytest.mark.parametrize("args,status,text", TOOL_REFUSALS, ids=[" ".join(a) for a, _, _ in TOOL_REFUSALS])
def test_the_tool_refuses_a_wrong_command_line_without_a_traceback(args, status, text):
    out = subprocess.run([sys.executable, str(REPO / "tools" / "superinstructions.py"), *args],
                         capture_output=True, text=True, timeout=TIMEOUT)
    assert out.returncode == status and text in out.stderr and "Traceback" not in out.stderr, out.stderr
