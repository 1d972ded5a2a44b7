"""Issue 32 (reliability pass 4), the harness's items: knee data at the limits of double (9),
input quoted in messages (10), a checkout git refuses (11), standard output that cannot be written
(12), output folders and option values in messages (14). Nothing here depends on this CPU, its
counters or its speed (TIMEOUT only turns a hang into a failure)."""
import os
import pwd
import re
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

TIMEOUT = 60
REPO = Path(__file__).resolve().parents[2]
RAW = ("terminate called", "std::", "Traceback", "basic_string", "not in range", "Could not convert")


def run_dlab(dlab_bin, args, **kw):
    kw.setdefault("capture_output", True)
    return subprocess.run([str(dlab_bin), *args], text=True, timeout=TIMEOUT, **kw)


def assert_one_error(out, status, text):
    """Exit `status` and exactly one line on stderr, containing `text`, no raw library text."""
    assert out.returncode == status, (out.returncode, out.stderr[-800:])
    lines = out.stderr.splitlines()
    assert len(lines) == 1, out.stderr[-800:]
    assert text in lines[0], out.stderr[-800:]
    for raw in RAW:
        assert raw not in out.stderr, out.stderr[-800:]


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


def step_csv(path: Path, y_scale: float = 1.0, x_scale: float = 1.0, header: str = "x,y") -> Path:
    """Five noisy samples per x of a step from 1 to 3 between x = 19 and 22."""
    rows = [header]
    for i, x in enumerate([5, 8, 11, 13, 15, 17, 19, 22, 26, 30, 35, 40, 45]):
        for k in range(5):
            noise = ((i * 5 + k) * 7919 % 101 - 50) / 1000.0
            rows.append(f"{x * x_scale!r},{((1.0 if x < 20 else 3.0) + noise) * y_scale!r}")
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return path


def between(summary: str) -> str:
    m = re.search(r"steps up between (\S+) and (\S+) ", summary)
    assert m, summary
    return f"{float(m.group(1)):.6g}..{float(m.group(2)):.6g}"


# ---- 9: knee data near the limits of double ------------------------------------------------------

@pytest.mark.parametrize("scale", [1e150, 1e160, 1e300, 1e-170, 1e-300])
def test_knee_finds_the_same_knee_at_any_scale(dlab_bin, tmp_path, scale):
    base = run_dlab(dlab_bin, ["knee", "--csv", str(step_csv(tmp_path / "base.csv"))])
    assert base.returncode == 0, base.stderr
    scaled = run_dlab(dlab_bin, ["knee", "--csv", str(step_csv(tmp_path / "scaled.csv", y_scale=scale))])
    assert scaled.returncode == 0, scaled.stderr
    assert "flat" not in scaled.stdout and "(0 bootstrap" not in scaled.stdout, scaled.stdout
    assert between(scaled.stdout) == between(base.stdout), (base.stdout, scaled.stdout)
    both = run_dlab(dlab_bin, ["knee", "--csv", str(step_csv(tmp_path / "both.csv", y_scale=scale, x_scale=scale))])
    assert both.returncode == 0, both.stderr
    lo, hi = (float(v) / scale for v in between(both.stdout).split(".."))
    assert f"{lo:.6g}..{hi:.6g}" == between(base.stdout), (base.stdout, both.stdout)


# ---- 10: a byte-order mark, and input quoted with what does not show escaped ---------------------

def test_a_bom_before_the_header_is_not_part_of_the_first_column(dlab_bin, tmp_path):
    csv = step_csv(tmp_path / "bom.csv", header="\ufeffx,y")
    assert csv.read_bytes().startswith(b"\xef\xbb\xbfx,y")
    out = run_dlab(dlab_bin, ["knee", "--csv", str(csv)])
    assert out.returncode == 0, out.stderr
    assert "steps up between" in out.stdout


@pytest.mark.parametrize("header,args,text", [
    ("x,\ufeffy", [], r"no column 'y' (columns: x, \ufeffy)"),
    ("x,\x1b[31my", [], r"no column 'y' (columns: x, \x1b[31my)"),
    ("x,y\u200b", [], r"(columns: x, y\u200b)"),
    ("x,y", ["--y", "y\x07"], r"no column 'y\x07'"),
])
def test_unprintable_bytes_in_quoted_input_are_escaped(dlab_bin, tmp_path, header, args, text):
    csv = step_csv(tmp_path / "k.csv", header=header)
    out = run_dlab(dlab_bin, ["knee", "--csv", str(csv), *args])
    assert_one_error(out, 1, text)
    assert not any(c in out.stderr for c in "\x1b\x07\ufeff\u200b")


def test_a_bad_value_in_a_csv_is_quoted_escaped(dlab_bin, tmp_path):
    csv = tmp_path / "k.csv"
    csv.write_text("x,y\n1,2\n2,3\x1b]0;pwned\x07\n3,4\n4,5\n")
    out = run_dlab(dlab_bin, ["knee", "--csv", str(csv)])
    assert_one_error(out, 1, r"k.csv:3: column 'y': '3\x1b]0;pwned\x07' is not a number")


def test_an_unknown_name_in_an_option_is_quoted_escaped(dlab_bin):
    out = run_dlab(dlab_bin, ["wasm", "bench", "--workloads", "fib,f\x1bo", "--no-save"])
    assert out.returncode == 2, out.stderr
    assert r"unknown 'f\x1bo'" in out.stderr and "\x1b" not in out.stderr, out.stderr


# ---- 11: a checkout git refuses is not "no git checkout" -----------------------------------------

@pytest.fixture
def as_nobody(tmp_path):
    """Runs a command as the user nobody (so git finds the root-owned checkout 'dubious'), with a
    HOME without git configuration; skipped where that cannot be arranged."""
    if os.geteuid() != 0:
        pytest.skip("needs root, to run dlab as another user than the checkout's owner")
    try:
        nobody = pwd.getpwnam("nobody")
    except KeyError:
        pytest.skip("no user nobody")
    if REPO.stat().st_uid == nobody.pw_uid:
        pytest.skip("the checkout belongs to nobody")
    shared = Path(tempfile.mkdtemp(prefix="dlab-nobody-"))
    shared.chmod(0o777)
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(shared), "TMPDIR": str(shared)}

    def run(argv):
        return subprocess.run(argv, capture_output=True, text=True, timeout=TIMEOUT, env=env, user=nobody.pw_uid,
                              group=nobody.pw_gid, extra_groups=[])
    probe = run(["git", "-C", str(REPO), "rev-parse", "HEAD"])
    if probe.returncode == 0 or "dubious ownership" not in probe.stderr:
        shutil.rmtree(shared, ignore_errors=True)
        pytest.skip(f"git does not refuse this checkout to nobody here: {probe.stderr.strip()[:200]}")
    yield run, shared
    shutil.rmtree(shared, ignore_errors=True)


def test_a_checkout_git_refuses_says_so_and_why(dlab_bin, as_nobody):
    run, _ = as_nobody
    out = run([str(dlab_bin), "machine"])
    assert out.returncode == 0, out.stderr
    commit = next(line for line in out.stdout.splitlines() if line.startswith("commit"))
    assert "git refused to read" in commit and "detected dubious ownership" in commit, commit
    assert "safe.directory" in commit, commit
    assert "no git checkout" not in commit, commit


def test_a_run_of_a_checkout_git_refuses_is_not_named_nogit(dlab_bin, as_nobody):
    run, shared = as_nobody
    out = run([str(dlab_bin), "new-run", "--results", str(shared / "results")])
    assert out.returncode == 0, out.stderr
    name = Path(out.stdout.strip()).name
    assert name.endswith("-gitrefused"), name
    assert "nogit" not in name, name


# ---- 12: standard output that cannot be written ---------------------------------------------------

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


# ---- 14: output folders and option values in messages -------------------------------------------

ADD = '(module (func (export "f") (result i32) (i32.const 1)))'


def test_an_output_in_a_missing_directory_names_it(dlab_bin, tmp_path, wat):
    missing = tmp_path / "missing"
    out = run_dlab(dlab_bin, ["wasm", "profile", str(wat(ADD)), "--invoke", "f", "--json", str(missing / "x.json")])
    assert_one_error(out, 1, f"the directory {missing} does not exist (create it first)")
    assert not missing.exists()


def test_an_output_under_a_file_says_it_is_not_a_directory(dlab_bin, tmp_path, wat):
    (tmp_path / "file").write_text("")
    out = run_dlab(dlab_bin, ["wasm", "profile", str(wat(ADD)), "--invoke", "f", "--json", str(tmp_path / "file" / "x.json")])
    assert_one_error(out, 1, f"{tmp_path / 'file'} is not a directory")


@pytest.mark.parametrize("args,text", [
    (["calibrate", "--samples", "abc", "--no-save"], "--samples: 'abc' is not an integer in 1..100000"),
    (["calibrate", "--warmup", "10001", "--no-save"], "--warmup: '10001' is not an integer in 0..10000"),
    (["calibrate", "--samples", "1e3", "--no-save"], "--samples: '1e3' is not an integer in 1..100000"),
    (["wasm", "bench", "--peer-timeout", "0", "--no-save"], "--peer-timeout: '0' is not a number in 1..86400"),
    (["fleet", __file__, "--forks", "0"], "--forks: '0' is not an integer in 1..1000"),
    (["knee", "--csv", "k.csv", "--seed", "abc"], "--seed: 'abc' is not a whole number (0 or more)"),
    (["calibrate", "--samples", "a\x1bb", "--no-save"], r"--samples: 'a\x1bb' is not an integer in 1..100000"),
])
def test_an_option_value_out_of_range_says_option_value_and_range(dlab_bin, args, text):
    out = run_dlab(dlab_bin, args)
    assert out.returncode == 2, out.stderr
    assert out.stderr == text + " (--help lists the options)\n", out.stderr  # one line, as every error
    for raw in RAW:
        assert raw not in out.stderr, out.stderr
