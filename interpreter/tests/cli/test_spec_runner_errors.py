"""The spec runner from the command line (`dlab wasm spec`): hostile scripts are failures or errors
at their file and line, and every other script still runs; a suite that is no folder, a folder
named like an option and an --only that matches nothing are said as such (docs/errors.md, *The
spec runner*)."""
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from dlab_cli import assert_clean, run_dlab

# (module (func (export "f") (result i32) i32.const 42) (memory (export "mem") 1)
#         (global (export "g") i32 (i32.const 7)))
MODULE = (
    '(module binary "\\00asm\\01\\00\\00\\00" "\\01\\05\\01\\60\\00\\01\\7f" "\\03\\02\\01\\00" "\\05\\03\\01\\00\\01" '
    '"\\06\\06\\01\\7f\\00\\41\\07\\0b" "\\07\\0f\\03\\01f\\00\\00\\01g\\03\\00\\03mem\\02\\00" "\\0a\\06\\01\\04\\00\\41\\2a\\0b")\n'
)
GOOD = MODULE + '(assert_return (invoke "f") (i32.const 42))\n'


def spec(dlab_bin, suite, *extra, user=None):
    args = [str(dlab_bin), "wasm", "spec", "--stage", "execute", "--dispatch", "tail", "--suite", str(suite), *extra]
    if user:
        args = ["setpriv", f"--reuid={user}", f"--regid={user}", "--clear-groups", *args]
    return subprocess.run(args, capture_output=True, text=True, timeout=120)


def write(folder, name, text):
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_wrong_export_kinds_and_arguments_fail_at_their_lines_and_the_suite_goes_on(dlab_bin, tmp_path):
    write(tmp_path, "a.bin.wast", MODULE + '(assert_return (get "f") (i32.const 42))\n(invoke "g")\n(invoke "mem")\n'
          '(invoke "f" (i32.const 1) (i32.const 2))\n')
    write(tmp_path, "b.bin.wast", GOOD)
    r = spec(dlab_bin, tmp_path)
    assert r.returncode == 1
    assert r.stderr.count("\n") == 1 and r.stderr.startswith("dlab: error: 4 spec commands failed")
    for line, what in [(2, "export f is a function, not a global"), (3, "export g is a global, not a function"),
                       (4, "export mem is a memory, not a function"), (5, "f: expected 0 arguments, got 2")]:
        assert f"a.bin.wast:{line}: {what}" in r.stdout, r.stdout
    assert "ok    b.bin.wast" in r.stdout  # the next file still ran


@pytest.mark.parametrize("text", ["(" * 50000 + ")" * 50000,
                                  MODULE + '(assert_return (invoke "f") ' + "(either " * 300000 + "(i32.const 42)" + ")" * 300001 + "\n"],
                         ids=["parentheses-50000", "either-300000"])
def test_deep_nesting_is_an_error_at_its_line_not_a_crash(dlab_bin, tmp_path, text):
    write(tmp_path, "deep.bin.wast", text)
    write(tmp_path, "z.bin.wast", GOOD)
    r = spec(dlab_bin, tmp_path)
    assert r.returncode == 1, r.stderr  # not a signal
    assert "deep.bin.wast:" in r.stdout and "lists nested deeper than 1000" in r.stdout
    assert "ok    z.bin.wast" in r.stdout


def test_an_unreadable_folder_is_named_and_the_rest_runs(dlab_bin):
    # Not under pytest's tmp_path: its folders are the user's alone, so nobody could read none of it.
    top = Path(tempfile.mkdtemp(prefix="dlab-unreadable-"))
    top.chmod(0o755)
    suite = top / "suite"
    write(suite, "a.bin.wast", GOOD)
    write(suite, "locked/b.bin.wast", GOOD)
    suite.chmod(0o755)
    (suite / "a.bin.wast").chmod(0o644)
    (suite / "locked").chmod(0)
    try:
        # root reads every folder: the test runs dlab as nobody there (CI runs as root).
        user = "65534" if os.geteuid() == 0 else None  # nobody
        if user and not shutil.which("setpriv"):
            pytest.skip("running as root without setpriv: no way to be refused a folder")
        r = spec(dlab_bin, suite, user=user)
    finally:
        (suite / "locked").chmod(0o755)
        shutil.rmtree(top)
    assert r.returncode == 1
    assert f"ERROR {suite / 'locked'}: cannot read this folder: Permission denied" in r.stdout, r.stdout + r.stderr
    assert "ok    a.bin.wast" in r.stdout


def test_an_empty_script_says_so_and_a_suite_of_only_empty_scripts_fails_saying_why(dlab_bin, tmp_path):
    write(tmp_path, "empty.bin.wast", "")
    r = spec(dlab_bin, tmp_path)
    assert "empty empty.bin.wast" in r.stdout and "no commands" in r.stdout
    assert r.returncode == 1
    assert r.stderr.strip() == "dlab: error: the 1 scripts run hold no commands: nothing was tested"
    write(tmp_path, "good.bin.wast", GOOD)
    r = spec(dlab_bin, tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "empty empty.bin.wast" in r.stdout


def test_a_symlinked_script_is_listed_under_its_own_name(dlab_bin, tmp_path):
    elsewhere = write(tmp_path / "elsewhere", "real.bin.wast", GOOD)
    suite = tmp_path / "suite"
    suite.mkdir()
    (suite / "link.bin.wast").symlink_to(elsewhere)
    r = spec(dlab_bin, suite)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "ok    link.bin.wast" in r.stdout
    assert ".." not in r.stdout


def test_a_huge_literal_is_not_echoed_whole(dlab_bin, tmp_path):
    write(tmp_path, "big.bin.wast", MODULE + '(assert_return (invoke "f") (i32.const 1' + "0" * 100000 + "))\n")
    r = spec(dlab_bin, tmp_path)
    assert r.returncode == 1
    assert "big.bin.wast:2: integer out of range: 1000000000000000000000000000000000000000... (100001 characters)" in r.stdout
    assert len(r.stdout) < 2000


def test_a_script_over_the_size_limit_is_refused_naming_it_and_the_limit(dlab_bin, tmp_path):
    big = tmp_path / "huge.bin.wast"
    with open(big, "wb") as f:
        f.truncate((256 << 20) + 1)  # sparse
    write(tmp_path, "z.bin.wast", GOOD)
    r = spec(dlab_bin, tmp_path)
    assert r.returncode == 1
    assert f"{big}: {(256 << 20) + 1} bytes: larger than a script may be (256 MiB)" in r.stdout
    assert "ok    z.bin.wast" in r.stdout


# Hostile scripts that held before the fourth reliability pass (issue 32), kept: each is an error or failure at its file and
# line (one line on stderr, exit 1), never a crash, and the next script still runs.
HELD = {
    "truncated-string": (MODULE + '(assert_return (invoke "f) (i32.const 42))\n', "newline in a string"),
    "truncated-at-end": (MODULE + '(assert_return (invoke "f', "unterminated string"),
    "bad-escape": (MODULE + '(assert_return (invoke "\\q") (i32.const 42))\n', "malformed escape"),
    "nul-byte": (MODULE + '(assert_return (invoke "f"\x00) (i32.const 42))\n', ":2:"),
    "assert_return-no-action": (MODULE + "(assert_return)\n", "assert_return needs an action"),
    "assert_trap-no-message": (MODULE + '(assert_trap (invoke "f"))\n', "assert_trap takes an action (or module) and a message"),
    "assert_exhaustion-three": (MODULE + '(assert_exhaustion (invoke "f") "x" "y")\n', "assert_exhaustion takes"),
    "assert_invalid-one": (MODULE + "(assert_invalid)\n", "assert_invalid"),
    "assert_malformed-one": (MODULE + '(assert_malformed (module binary ""))\n', "assert_malformed takes a module and a message"),
    "assert_unlinkable-one": (MODULE + "(assert_unlinkable)\n", "assert_unlinkable"),
    "register-none": (MODULE + "(register)\n", "(register \"name\" $instance?)"),
}


@pytest.mark.parametrize("case", HELD)
def test_hostile_scripts_that_held_are_errors_at_their_line(dlab_bin, tmp_path, case):
    text, want = HELD[case]
    write(tmp_path, "bad.bin.wast", text)
    write(tmp_path, "z.bin.wast", GOOD)
    r = spec(dlab_bin, tmp_path)
    assert r.returncode == 1, r.stdout + r.stderr
    assert r.stderr.count("\n") == 1, r.stderr
    bad = next(line for line in r.stdout.splitlines() if "bad.bin.wast" in line)
    assert want in r.stdout, r.stdout
    assert "bad.bin.wast:" in bad or "FAIL" in bad, bad
    assert "ok    z.bin.wast" in r.stdout


def test_300k_commands_and_a_50_mb_module_string(dlab_bin, tmp_path):
    write(tmp_path, "many.bin.wast", MODULE + '(assert_return (invoke "f") (i32.const 42))\n' * 300000)
    write(tmp_path, "huge.bin.wast", '(module binary "' + "a" * (50 << 20) + '")\n')
    r = spec(dlab_bin, tmp_path)
    assert "ok    many.bin.wast                            300001 passed" in r.stdout, r.stdout[-2000:]
    assert "huge.bin.wast:1: module should instantiate: malformed" in r.stdout, r.stdout[-2000:]
    assert r.returncode == 1 and r.stderr.count("\n") == 1


# ---- the suite folder and --only -----------------------------------------------------------------

def test_spec_suite_that_is_a_file_is_not_a_directory(dlab_bin, tmp_path):
    f = tmp_path / "suite.wast"
    f.write_text("(module)\n")
    assert_clean(run_dlab(dlab_bin, ["wasm", "spec", "--suite", str(f)]), 1, "is not a directory")


def test_a_suite_folder_named_like_an_option_reaches_wast2json_as_a_path(dlab_bin, tmp_path):
    (tmp_path / "-s").mkdir()
    (tmp_path / "-s" / "a.wast").write_text('(module (func (export "f") (result i32) (i32.const 7)))\n'
                                            '(assert_return (invoke "f") (i32.const 7))\n')
    out = run_dlab(dlab_bin, ["wasm", "spec", "--suite=-s", "--dispatch", "switch"], cwd=tmp_path)
    assert out.returncode == 0, out.stdout[-800:] + out.stderr[-800:]
    assert "2 passed, 0 failed" in out.stdout  # the module and its assertion


def test_spec_with_no_matching_file_is_an_error(dlab_bin, tmp_path):
    (tmp_path / "a.wast").write_text("(module)\n")
    out = run_dlab(dlab_bin, ["wasm", "spec", "--suite", str(tmp_path), "--only", "nomatch"])
    assert out.returncode == 1 and "no spec file's path contains 'nomatch'" in out.stderr
