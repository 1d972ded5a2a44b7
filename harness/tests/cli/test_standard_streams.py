"""Standard streams that cannot be written (docs/errors.md, *Standard streams*): with stderr closed
or full an error still exits 1 or 2, never aborts; standard output closed, full or its reader gone
is one line and exit 1 (a WASI program's own exit status kept), an open one still a success; and
`dlab wasm run --deadline` waits for a blocked host write, as its --help says. Shown for `machine`,
`knee`, `wasm run|profile|bench`, `calibrate` and `--help`. Nothing here depends on this CPU, its
counters or its speed (TIMEOUT only turns a hang into a failure)."""
import os
import subprocess
import time

import pytest

from dlab_cli import TIMEOUT, assert_one_error, run_dlab, step_csv

TRAPS = '(module (func (export "f") unreachable))'


# A WASI command that writes "hello\n" `count` times (ignoring fd_write's errno, as most C
# programs do), then exits with `code` (proc_exit only when it is not 0).
HELLO = """(module
  (import "wasi_snapshot_preview1" "fd_write" (func $w (param i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "proc_exit" (func $exit (param i32)))
  (memory (export "memory") 1)
  (data (i32.const 16) "hello\\n")
  (func (export "_start") (local $i i32)
    (i32.store (i32.const 0) (i32.const 16))
    (i32.store (i32.const 4) (i32.const 6))
    (loop $l
      (drop (call $w (i32.const 1) (i32.const 0) (i32.const 1) (i32.const 8)))
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br_if $l (i32.lt_u (local.get $i) (i32.const {count}))))
    (if (i32.ne (i32.const {code}) (i32.const 0)) (then (call $exit (i32.const {code}))))))"""


# ---- stderr closed or full: the error is not a second failure --------------------------------

def _close_stderr():
    os.close(2)


@pytest.mark.parametrize("how", ["full", "closed"])
@pytest.mark.parametrize("args", [
    ["wasm", "run", "{traps}", "--invoke", "f"],
    ["wasm", "profile", "{traps}", "--invoke", "f"],
    ["wasm", "bench", "--workloads", "nope", "--no-save"],
    ["calibrate", "--iterations", "0", "--no-save"],
    ["knee", "--csv", "/nonexistent.csv"],
])
def test_an_error_with_stderr_full_or_closed_exits_1_or_2_without_aborting(dlab_bin, wat, args, how):
    traps = wat(TRAPS)
    argv = [str(dlab_bin), *[a.replace("{traps}", str(traps)) for a in args]]
    if how == "full":
        with open("/dev/full", "w") as full:
            out = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=full, timeout=TIMEOUT)
    else:
        out = subprocess.run(argv, stdout=subprocess.DEVNULL, preexec_fn=_close_stderr, timeout=TIMEOUT)
    assert out.returncode in (1, 2), out.returncode  # never -6 (SIGABRT)


# ---- standard output that cannot be written --------------------------------------------------

def _close_stdout():
    os.close(1)


def knee_args(tmp_path):
    return ["knee", "--csv", str(step_csv(tmp_path / "k.csv"))]


@pytest.mark.parametrize("command", ["machine", "knee", "wasm run", "help"])
def test_closed_stdout(dlab_bin, tmp_path, wat, command):
    args = {"machine": ["machine"], "knee": knee_args(tmp_path), "help": ["--help"],
            "wasm run": ["wasm", "run", str(wat(HELLO.format(count=3, code=0)))]}[command]
    out = subprocess.run([str(dlab_bin), *args], stderr=subprocess.PIPE, text=True, timeout=TIMEOUT,
                         preexec_fn=_close_stdout)
    assert_one_error(out, 1, "cannot write standard output: it is closed")


@pytest.mark.parametrize("command", ["knee", "wasm run"])
def test_full_stdout(dlab_bin, tmp_path, wat, command):
    args = knee_args(tmp_path) if command == "knee" else ["wasm", "run", str(wat(HELLO.format(count=3, code=0)))]
    with open("/dev/full", "w") as full:
        out = subprocess.run([str(dlab_bin), *args], stdout=full, stderr=subprocess.PIPE, text=True, timeout=TIMEOUT)
    assert_one_error(out, 1, "cannot write standard output: No space left on device")


def test_a_full_stdout_is_a_failure(dlab_bin):
    with open("/dev/full", "w") as full:
        out = subprocess.run([str(dlab_bin), "machine", "--json"], stdout=full, stderr=subprocess.PIPE, text=True, timeout=TIMEOUT)
    assert out.returncode == 1 and "cannot write standard output: No space left on device" in out.stderr


@pytest.mark.parametrize("command", ["machine", "wasm run"])
def test_a_reader_that_quits_is_reported_as_output_closed(dlab_bin, wat, command):
    """`dlab ... | head -1`: SIGPIPE no longer kills dlab without a word; one line says so."""
    args = ["machine"] if command == "machine" else ["wasm", "run", str(wat(HELLO.format(count=200000, code=0)))]
    p = subprocess.Popen([str(dlab_bin), *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if command == "wasm run":
        assert p.stdout.readline() == b"hello\n"
    p.stdout.close()  # before `machine` has written anything (its TSC calibration takes a while)
    _, err = p.communicate(timeout=TIMEOUT)
    out = subprocess.CompletedProcess(p.args, p.returncode, "", err.decode())
    assert p.returncode != -13, "killed by SIGPIPE"
    assert_one_error(out, 1, "output closed")


def test_a_programs_own_exit_status_is_kept_when_stdout_fails(dlab_bin, wat):
    out = subprocess.run([str(dlab_bin), "wasm", "run", str(wat(HELLO.format(count=3, code=3)))], stderr=subprocess.PIPE,
                         text=True, timeout=TIMEOUT, preexec_fn=_close_stdout)
    assert_one_error(out, 3, "cannot write standard output: it is closed")


def test_an_open_stdout_is_still_a_success(dlab_bin, tmp_path, wat):
    out = run_dlab(dlab_bin, ["wasm", "run", str(wat(HELLO.format(count=3, code=0)))])
    assert out.returncode == 0 and out.stdout == "hello\n" * 3 and out.stderr == "", out
    out = run_dlab(dlab_bin, knee_args(tmp_path))
    assert out.returncode == 0 and "steps up between" in out.stdout, out


def test_the_deadline_does_not_cover_a_blocked_host_write_and_help_says_so(dlab_bin, wat):
    """Documented, not fixed: a write to a stalled pipe is waited for; the deadline traps after it."""
    help_text = run_dlab(dlab_bin, ["wasm", "run", "--help"]).stdout
    assert "a host call that blocks" in " ".join(help_text.split()), help_text
    module = wat(HELLO.format(count=200000, code=0))
    start = time.monotonic()
    p = subprocess.Popen([str(dlab_bin), "wasm", "run", "--deadline", "100", str(module)], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE)
    time.sleep(1.5)  # the reader stalls: dlab blocks in the write once the pipe is full
    p.stdout.read()
    _, err = p.communicate(timeout=TIMEOUT)
    assert time.monotonic() - start >= 1.5
    assert p.returncode == 1 and b"deadline reached" in err, err
