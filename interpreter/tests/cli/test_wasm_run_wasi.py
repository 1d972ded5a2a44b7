"""WASI as real programs use it, through `dlab wasm run`: a C program (interpreter/tests/programs/io.c)
that reads standard input, files named on its command line and folders, and writes and seeks
files, gives the output of the same source built natively, in the default engine and a stack-IR
one; a module importing the older `wasi_unstable` name links and runs, and one opening files as the
libc of that era did (checking a preopen's rights itself) opens them; a guest cannot leave
its preopened folder (.., absolute paths, symbolic links, hard links), nor write in a read-only one;
fd_write takes more iovecs than a 16-bit count; and a command's proc_exit status is dlab's exit
status, one outside 0..255 a failure."""
import os
import time
import subprocess
from pathlib import Path

import pytest

from dlab_cli import run_dlab

REPO = Path(__file__).resolve().parents[3]
ENGINES = {"default": [], "tail-stack": ["--dispatch", "tail", "--ir", "stack"]}
EXIT_WITH = ('(module (import "wasi_snapshot_preview1" "proc_exit" (func $e (param i32))) (memory (export "memory") 1)'
             ' (func (export "_start") (call $e (i32.const {code}))))')


@pytest.fixture
def tree(tmp_path):
    """data/ (the preopen: two files and a folder) beside secret.txt, which no guest may read."""
    data = tmp_path / "data"
    (data / "sub").mkdir(parents=True)
    (data / "a.txt").write_text("alpha\nbeta gamma\n")
    (data / "b.txt").write_text("second file\n")
    (data / "sub" / "c.txt").write_text("in a folder\n")
    (tmp_path / "secret.txt").write_text("never read\n")
    return data


def dlab_run(dlab_bin, engine, *args, stdin=b""):
    return subprocess.run([str(dlab_bin), "wasm", "run", *ENGINES[engine], *args], input=stdin, capture_output=True, timeout=60)


@pytest.mark.parametrize("engine", ENGINES)
def test_stdin_is_read(dlab_bin, io_programs, engine):
    wasm, native = io_programs
    text = b"one two\nthree\n\nfour five six\n" * 1000
    want = subprocess.run([str(native), "stdin"], input=text, capture_output=True).stdout
    got = dlab_run(dlab_bin, engine, str(wasm), "--", "stdin", stdin=text)
    assert got.returncode == 0, got.stderr
    assert got.stdout == want


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("command", [["cat", "a.txt", "sub/c.txt"], ["ls", "."], ["ls", "sub"], ["seek", "b.txt"],
                                     ["cat", "missing.txt"]], ids=["cat", "ls", "ls-sub", "seek", "missing"])
def test_files_and_folders_give_the_native_output(dlab_bin, io_programs, tree, engine, command):
    wasm, native = io_programs
    want = subprocess.run([str(native), *command], capture_output=True, cwd=tree)
    got = dlab_run(dlab_bin, engine, "--dir", f"{tree}::.", str(wasm), "--", *command)
    assert got.stdout == want.stdout, got.stderr
    assert got.returncode == want.returncode


@pytest.mark.parametrize("engine", ENGINES)
def test_a_writable_preopen_is_written_a_read_only_one_refuses(dlab_bin, io_programs, tree, engine):
    wasm, _ = io_programs
    got = dlab_run(dlab_bin, engine, "--dir-rw", f"{tree}::.", str(wasm), "--", "write", "new.txt", "written")
    assert got.returncode == 0, got.stderr
    assert got.stdout == b"written" and (tree / "new.txt").read_text() == "written"
    got = dlab_run(dlab_bin, engine, "--dir", f"{tree}::.", str(wasm), "--", "write", "other.txt", "x")
    assert got.returncode == 1 and got.stdout.startswith(b"error: cannot create other.txt")
    assert not (tree / "other.txt").exists()


@pytest.mark.parametrize("path", ["../secret.txt", "/secret.txt", "sub/../../secret.txt", "link-out", "link-abs"])
def test_no_path_leaves_the_preopen(dlab_bin, io_programs, tree, path):
    wasm, _ = io_programs
    (tree / "link-out").symlink_to("../secret.txt")
    (tree / "link-abs").symlink_to(tree.parent / "secret.txt")
    got = dlab_run(dlab_bin, "default", "--dir-rw", f"{tree}::.", str(wasm), "--", "cat", path)
    assert got.returncode == 1, got.stdout
    assert b"never read" not in got.stdout
    assert got.stdout.startswith(b"error: cannot open")


def test_a_module_importing_wasi_unstable_runs(dlab_bin, wat):
    module = wat('''(module
      (import "wasi_unstable" "fd_write" (func $w (param i32 i32 i32 i32) (result i32)))
      (import "wasi_unstable" "proc_exit" (func $exit (param i32)))
      (memory (export "memory") 1)
      (data (i32.const 16) "hello from wasi_unstable\\n")
      (func (export "_start")
        (i32.store (i32.const 0) (i32.const 16))
        (i32.store (i32.const 4) (i32.const 25))
        (call $exit (call $w (i32.const 1) (i32.const 0) (i32.const 1) (i32.const 8)))))''')
    got = subprocess.run([str(dlab_bin), "wasm", "run", str(module)], capture_output=True, timeout=60)
    assert got.returncode == 0, got.stderr
    assert got.stdout == b"hello from wasi_unstable\n"


def test_a_program_of_the_old_rights_model_opens_files_and_read_only_still_refuses_writes(dlab_bin, tmp_path):
    # interpreter/tests/programs/old_libc_open.wat opens as wasi-libc of the wasi_unstable era did,
    # checking the preopen's rights itself first (issue 48 item 12: such a program opened nothing).
    module = tmp_path / "old_libc_open.wasm"
    subprocess.run(["wat2wasm", str(REPO / "interpreter" / "tests" / "programs" / "old_libc_open.wat"), "-o", str(module)], check=True)
    data = tmp_path / "data"
    data.mkdir()
    (data / "data.txt").write_text("inside\n")
    got = dlab_run(dlab_bin, "default", "--dir", f"{data}::.", str(module))
    assert got.returncode == 0, (got.returncode, got.stdout, got.stderr)
    assert got.stdout == b"read: inside\nwrite: refused 076\n"  # ENOTCAPABLE: --dir is read-only
    assert not (data / "made.txt").exists()
    for engine in ENGINES:
        got = dlab_run(dlab_bin, engine, "--dir-rw", f"{data}::.", str(module))
        assert got.returncode == 0, (got.returncode, got.stdout, got.stderr)
        assert got.stdout == b"read: inside\nwrite: made\n"
        assert (data / "made.txt").read_text() == "made"
        (data / "made.txt").unlink()


def test_a_deadline_stops_a_guest_blocked_reading_stdin(dlab_bin, io_programs):
    # stdin a pipe nobody writes to: the guest blocks in fd_read until the deadline stops it.
    wasm, _ = io_programs
    reader, writer = os.pipe()
    try:
        t0 = time.monotonic()
        got = subprocess.run([str(dlab_bin), "wasm", "run", "--deadline", "300", str(wasm), "--", "stdin"], stdin=reader,
                             capture_output=True, timeout=30)
        took = time.monotonic() - t0
    finally:
        os.close(reader)
        os.close(writer)
    assert got.returncode == 1, got.stderr
    assert b"deadline reached" in got.stderr
    assert took < 10, took


def test_fd_write_with_65537_iovecs_writes_them_all(dlab_bin, wat):
    # 65,537 iovecs of one byte each (one more than a 16-bit count), all pointing at "x".
    module = wat('''(module
      (import "wasi_snapshot_preview1" "fd_write" (func $w (param i32 i32 i32 i32) (result i32)))
      (memory (export "memory") 9)
      (data (i32.const 0) "x")
      (func (export "_start") (local $i i32)
        (loop $l
          (i32.store (i32.add (i32.const 16) (i32.shl (local.get $i) (i32.const 3))) (i32.const 0))
          (i32.store (i32.add (i32.const 20) (i32.shl (local.get $i) (i32.const 3))) (i32.const 1))
          (br_if $l (i32.lt_u (local.tee $i (i32.add (local.get $i) (i32.const 1))) (i32.const 65537))))
        (if (call $w (i32.const 1) (i32.const 16) (i32.const 65537) (i32.const 8)) (then unreachable))
        (if (i32.ne (i32.load (i32.const 8)) (i32.const 65537)) (then unreachable))))''')
    r = subprocess.run([str(dlab_bin), "wasm", "run", str(module)], capture_output=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert r.stdout == b"x" * 65537


@pytest.mark.parametrize("code,status,text", [(0, 0, ""), (3, 3, ""), (255, 255, ""), (256, 1, "outside 0..255"),
                                              (4294967295, 1, "exited with code 4294967295")])
def test_proc_exit_statuses_outside_a_byte_are_a_failure(dlab_bin, wat, code, status, text):
    out = run_dlab(dlab_bin, ["wasm", "run", str(wat(EXIT_WITH.format(code=code)))])
    assert out.returncode == status, (out.returncode, out.stderr)
    assert text in out.stderr
