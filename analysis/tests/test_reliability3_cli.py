"""Hostile input against what was added since the second reliability pass (issue 23), table-driven:
peers, profile, D-binop, outputs, spec, knee, WASI exit codes, stderr that cannot be written.
Every case holds on any machine: nothing here depends on this CPU, its counters or its speed
(TIMEOUT only turns a hang into a failure)."""
import os
import signal
import stat
import subprocess
import time
from pathlib import Path

import pytest

TIMEOUT = 60
RAW = ("terminate called", "std::", "_M_range_check", "Traceback", "basic_string", "vector::")


def run_dlab(dlab_bin, args, **kw):
    kw.setdefault("capture_output", True)
    return subprocess.run([str(dlab_bin), *args], text=True, timeout=TIMEOUT, **kw)


def alive(pid: int) -> bool:
    """Running (a zombie waiting for a reaper is not)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, IndexError):
        return False
    return state != "Z"


def assert_clean(out, status, text):
    assert out.returncode == status, (out.returncode, out.stderr[-800:])
    assert text in out.stderr, out.stderr[-800:]
    for raw in RAW:
        assert raw not in out.stderr, out.stderr[-800:]


TRAPS = '(module (func (export "f") unreachable))'
EXIT_WITH = ('(module (import "wasi_snapshot_preview1" "proc_exit" (func $e (param i32))) (memory (export "memory") 1)'
             ' (func (export "_start") (call $e (i32.const {code}))))')


# ---- the command line: refused with status 2, nothing run, nothing created ----------------------

USAGE = [
    (["wasm", "bench", "--dbinop", ",", "--no-save"], "--dbinop: an empty list"),
    (["wasm", "bench", "--dbinop", "", "--no-save"], "--dbinop: an empty list"),
    (["wasm", "bench", "--workloads", "", "--no-save"], "--workloads: an empty list"),
    (["wasm", "bench", "--workloads", ",", "--no-save"], "--workloads: an empty list"),
    (["wasm", "bench", "--valgrind", "--peer", "x=true", "--no-save"], "does not apply with --valgrind"),
    (["wasm", "bench", "--valgrind", "--samples", "7", "--no-save"], "--samples: does not apply with --valgrind"),
    (["wasm", "bench", "--valgrind", "--quick", "--no-save"], "--quick: does not apply with --valgrind"),
    (["wasm", "bench", "--peer-calls", "3", "--no-save"], "--peer-calls: applies only with --peer"),
    (["wasm", "bench", "--peer-timeout", "3", "--no-save"], "--peer-timeout: applies only with --peer"),
    (["wasm", "bench", "--valgrind-calls", "3", "--no-save"], "--valgrind-calls: applies only with --valgrind"),
    (["wasm", "bench", "--peer", "a=true", "--peer", "a=false", "--no-save"], "the name 'a' is given twice"),
    (["wasm", "bench", "--peer", "s", "--no-save"], "'s' is not NAME=COMMAND"),
    (["wasm", "bench", "--no-save", "--run-dir", "/tmp"], "excludes"),
    (["calibrate", "--no-save", "--results", "/tmp"], "excludes"),
    (["models", "--no-save", "--run-dir", "/tmp"], "excludes"),
    (["probes", "--no-save", "--out", "/tmp/x"], "excludes"),
]


@pytest.mark.parametrize("args,text", USAGE, ids=[" ".join(a)[:60] for a, _ in USAGE])
def test_a_wrong_command_line_is_refused_with_status_2(dlab_bin, args, text):
    assert_clean(run_dlab(dlab_bin, args), 2, text)


def test_a_refused_command_line_creates_no_run_directory(dlab_bin, tmp_path):
    out = run_dlab(dlab_bin, ["wasm", "bench", "--workloads", "fib", "--peer", "s", "--results", str(tmp_path / "res")])
    assert_clean(out, 2, "is not NAME=COMMAND")
    assert not (tmp_path / "res").exists()


# ---- stderr closed or full: the error is not a second failure ------------------------------------

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


# ---- wasm bench on a module whose workload export is wrong -----------------------------------------

BAD_WORKLOADS = [
    ('(module (global (export "fib") i32 (i32.const 1)))', "the export fib is not a function"),
    ('(module (func (export "fib") (param i32)))', "the export fib takes 1 parameters and returns 0 results"),
    ('(module (func (export "fib") (result i32) (i32.const 1)))', "the export fib takes 0 parameters and returns 1 results"),
    ('(module (func (export "fib") (param i64) (result i32) (i32.const 1)))', "a workload is a function (i32 size) -> (i32 checksum)"),
    ('(module (func (export "fib") (param i32) (result i32) unreachable))', "fib(24) trapped in switch"),
    ('(module (func (export "_initialize") unreachable) (func (export "fib") (param i32) (result i32) (i32.const 1)))',
     "cannot instantiate it in switch"),
    ('(module (func (export "other") (param i32) (result i32) (i32.const 1)))', "has no export fib"),
]


@pytest.mark.parametrize("source,text", BAD_WORKLOADS, ids=[t for _, t in BAD_WORKLOADS])
def test_a_bad_workload_export_is_named_with_module_export_and_problem(dlab_bin, wat, tmp_path, source, text):
    module = wat(source)
    out = run_dlab(dlab_bin, ["wasm", "bench", "--module", str(module), "--workloads", "fib", "--dispatch", "switch", "--quick",
                              "--no-native", "--samples", "1", "--results", str(tmp_path / "res")])
    assert_clean(out, 1, text)
    assert str(module) in out.stderr
    assert not (tmp_path / "res").exists()  # checked before a run directory is made


# ---- inputs that are not regular files ----------------------------------------------------------

@pytest.mark.parametrize("args,text", [
    (["wasm", "decode", "/dev/zero"], "cannot read /dev/zero: not a regular file"),
    (["knee", "--csv", "/dev/zero"], "cannot read /dev/zero: not a regular file"),
    (["wasm", "run", "/dev/zero"], "not a regular file"),
])
def test_a_device_is_refused_as_an_input_not_read_forever(dlab_bin, args, text):
    assert_clean(run_dlab(dlab_bin, args), 1, text)


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


def test_knee_on_20000_rows_finishes(dlab_bin, tmp_path):
    rows = ["x,y"] + [f"{i % 2000},{1.0 if i % 2000 < 600 else 3.0}" for i in range(20000)]
    f = tmp_path / "k.csv"
    f.write_text("\n".join(rows) + "\n")
    out = run_dlab(dlab_bin, ["knee", "--csv", str(f)])
    assert out.returncode == 0, out.stderr
    assert "steps up" in out.stdout


# ---- WASI exit codes ----------------------------------------------------------------------------

@pytest.mark.parametrize("code,status,text", [(0, 0, ""), (3, 3, ""), (255, 255, ""), (256, 1, "outside 0..255"),
                                              (4294967295, 1, "exited with code 4294967295")])
def test_proc_exit_statuses_outside_a_byte_are_a_failure(dlab_bin, wat, code, status, text):
    out = run_dlab(dlab_bin, ["wasm", "run", str(wat(EXIT_WITH.format(code=code)))])
    assert out.returncode == status, (out.returncode, out.stderr)
    assert text in out.stderr


# ---- outputs: never a device, a link's target or an existing file replaced -------------------------

def test_profile_json_writes_into_dev_null_and_leaves_it_a_device(dlab_bin, wat):
    module = wat('(module (func (export "f") (result i32) (i32.const 1)))')
    out = run_dlab(dlab_bin, ["wasm", "profile", str(module), "--invoke", "f", "--json", "/dev/null"])
    assert out.returncode == 0, out.stderr
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)


def test_profile_json_to_dev_full_fails_with_the_reason(dlab_bin, wat):
    module = wat('(module (func (export "f") (result i32) (i32.const 1)))')
    out = run_dlab(dlab_bin, ["wasm", "profile", str(module), "--invoke", "f", "--json", "/dev/full"])
    assert_clean(out, 1, "No space left on device")
    assert stat.S_ISCHR(os.stat("/dev/full").st_mode)


def test_profile_json_refuses_a_symlink_and_an_existing_file_unless_forced(dlab_bin, wat, tmp_path):
    module = wat('(module (func (export "f") (result i32) (i32.const 1)))')
    target = tmp_path / "precious.txt"
    target.write_text("keep me\n")
    link = tmp_path / "link.json"
    link.symlink_to(target)
    out = run_dlab(dlab_bin, ["wasm", "profile", str(module), "--invoke", "f", "--json", str(link)])
    assert_clean(out, 1, "is a symbolic link")
    assert target.read_text() == "keep me\n" and link.is_symlink()
    out = run_dlab(dlab_bin, ["wasm", "profile", str(module), "--invoke", "f", "--json", str(target)])
    assert_clean(out, 1, "exists: not replaced (give --force to replace it)")
    assert target.read_text() == "keep me\n"
    out = run_dlab(dlab_bin, ["wasm", "profile", str(module), "--invoke", "f", "--json", str(target), "--force"])
    assert out.returncode == 0, out.stderr
    assert '"dispatches"' in target.read_text()


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


def test_the_committed_pair_profile_has_no_pair_from_unreachable():
    csv = Path(__file__).resolve().parents[2] / "interpreter" / "src" / "engines" / "handlers" / "superinstructions.pairs.csv"
    lines = csv.read_text().splitlines()
    assert not [line for line in lines[1:] if line.split(",")[1:2] == ["unreachable"]]


# ---- the D-binop scratch folder: private, and gone after an interrupt ------------------------------

def test_dbinop_scratch_folder_is_private_and_removed_on_sigint(dlab_bin, tmp_path):
    env = dict(os.environ, TMPDIR=str(tmp_path))
    p = subprocess.Popen([str(dlab_bin), "wasm", "bench", "--dbinop", "5", "--dispatch", "switch", "--samples", "100000",
                          "--no-save"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.time() + TIMEOUT
        scratch = []
        while time.time() < deadline and not scratch:
            scratch = [d for d in tmp_path.iterdir() if d.name.startswith("dlab-dbinop-")]
            time.sleep(0.05)
        assert scratch, "the bench made no scratch folder"
        assert stat.S_IMODE(scratch[0].stat().st_mode) == 0o700
        assert not scratch[0].name.endswith(str(p.pid))  # mkdtemp's name, not the pid
        time.sleep(0.3)
        p.send_signal(signal.SIGINT)
        p.wait(timeout=TIMEOUT)
    finally:
        if p.poll() is None:
            p.kill()
    assert p.returncode == -signal.SIGINT
    assert list(tmp_path.iterdir()) == []


# ---- peers: untrusted programs -------------------------------------------------------------------

@pytest.fixture
def peer_script(dlab_bin, tmp_path):
    """A peer written as a shell script around dlab itself (so its checksum is right), with `body`
    deciding what it does: $1 module, $2 workload, $3 size, $4 calls."""
    cmd_module = Path(dlab_bin).parent / "interpreter" / "workloads" / "kernels_cmd.wasm"
    if not cmd_module.exists():
        pytest.skip("kernels_cmd.wasm not built (needs wasi-libc)")

    def make(body: str) -> str:
        script = tmp_path / "peer.sh"
        script.write_text(f"#!/bin/sh\nrun() {{ '{dlab_bin}' wasm run \"$1\" \"$2\" \"$3\" \"$4\"; }}\n{body}\n")
        script.chmod(0o755)
        return f"p={script} {{module}} {{workload}} {{size}} {{calls}}"
    return make


def bench_with_peer(dlab_bin, spec, *extra, **kw):
    return run_dlab(dlab_bin, ["wasm", "bench", "--workloads", "fib", "--dispatch", "switch", "--quick", "--no-native",
                               "--samples", "2", "--warmup", "0", "--no-save", "--peer", spec, *extra], **kw)


@pytest.mark.parametrize("body,text", [
    ('[ "$4" -gt 1 ] && exit 1\nrun "$@"', "exited with status 1 (a timed run of 5 calls)"),
    ('echo "checksum 00000000"; exit 3', "exited with status 3"),
    ('run "$@" | sed "s/\\$/junk/"', "is not \"checksum\" and eight hex digits"),
    ('run "$@" | sed "s/\\$/1/"', "is not \"checksum\" and eight hex digits"),
    ('run "$@"; run "$@"', "2 checksum lines"),
    ('echo "checksum 12345678"', "checksum 12345678 where dlab computed"),
    ('echo hello', "no checksum line in its output"),
    ('yes', "printed more than 1048576 bytes; killed"),
])
def test_a_misbehaving_peer_fails_the_bench_and_writes_nothing(dlab_bin, peer_script, tmp_path, body, text):
    out = run_dlab(dlab_bin, ["wasm", "bench", "--workloads", "fib", "--dispatch", "switch", "--quick", "--no-native",
                              "--samples", "2", "--warmup", "0", "--results", str(tmp_path / "res"),
                              "--peer", peer_script(body)])
    assert_clean(out, 1, text)
    assert not list((tmp_path / "res").rglob("wasm.summary.csv"))


def test_a_peer_that_never_exits_is_killed_at_its_time_limit(dlab_bin, peer_script, tmp_path):
    pidfile = tmp_path / "sleeper.pid"
    spec = peer_script(f'[ "$4" -gt 1 ] && {{ sleep 300 & echo $! > {pidfile}; wait; }}\nrun "$@"')
    out = bench_with_peer(dlab_bin, spec, "--peer-timeout", "2")
    assert_clean(out, 1, "did not finish within 2 s (--peer-timeout); killed")
    pid = int(pidfile.read_text())
    time.sleep(0.2)
    assert not alive(pid)  # the peer's own child went with its process group


def test_killing_dlab_kills_the_peer(dlab_bin, peer_script, tmp_path):
    pidfile = tmp_path / "sleeper.pid"
    spec = peer_script(f'[ "$4" -gt 1 ] && {{ sleep 300 & echo $! > {pidfile}; wait; }}\nrun "$@"')
    p = subprocess.Popen([str(dlab_bin), "wasm", "bench", "--workloads", "fib", "--dispatch", "switch", "--quick", "--no-native",
                          "--samples", "2", "--warmup", "0", "--no-save", "--peer", spec],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.time() + TIMEOUT
        while time.time() < deadline and not (pidfile.exists() and pidfile.read_text().strip()):
            time.sleep(0.05)
        assert pidfile.exists(), "the peer never reached its timed runs"
        pid = int(pidfile.read_text())
        p.send_signal(signal.SIGTERM)
        p.wait(timeout=TIMEOUT)
    finally:
        if p.poll() is None:
            p.kill()
    time.sleep(0.2)
    assert not alive(pid)


def test_a_good_peer_still_runs(dlab_bin, peer_script):
    out = bench_with_peer(dlab_bin, peer_script('run "$@"'))
    assert out.returncode == 0, out.stderr[-800:]
    assert "fib/peer:p x5" in out.stdout
