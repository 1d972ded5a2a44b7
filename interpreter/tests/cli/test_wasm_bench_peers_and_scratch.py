"""What `dlab wasm bench` starts and makes (docs/errors.md, *Temporaries and child processes*):
a peer is an untrusted program (a wrong checksum, exit status or output, or too much of it, fails
the bench and writes nothing; one that never exits is killed at its time limit with what it
started, and killing dlab kills it), and the D-binop scratch folder is private and gone after an
interrupt. Nothing here depends on this CPU, its counters or its speed (TIMEOUT only turns a hang
into a failure)."""
import os
import signal
import stat
import subprocess
import time
from pathlib import Path

import pytest

from dlab_cli import TIMEOUT, alive, assert_clean, run_dlab


# ---- the D-binop scratch folder: private, and gone after an interrupt ------------------------

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


# ---- peers: untrusted programs ---------------------------------------------------------------

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
    # the peer's bytes escaped: no control sequence of its own reaches the terminal
    ("printf 'checksum \\033[31mX\\033]0;pwned\\007\\n'", "the line 'checksum \\x1b[31mX\\x1b]0;pwned\\x07' is not"),
])
def test_a_misbehaving_peer_fails_the_bench_and_writes_nothing(dlab_bin, peer_script, tmp_path, body, text):
    out = run_dlab(dlab_bin, ["wasm", "bench", "--workloads", "fib", "--dispatch", "switch", "--quick", "--no-native",
                              "--samples", "2", "--warmup", "0", "--results", str(tmp_path / "res"),
                              "--peer", peer_script(body)])
    assert_clean(out, 1, text)
    assert "\x1b" not in out.stderr and "\x07" not in out.stderr
    assert not list((tmp_path / "res").rglob("wasm.summary.csv"))


def test_a_peer_that_leaves_a_process_holding_its_output_fails_in_seconds(dlab_bin, peer_script, tmp_path):
    # `setsid` takes the sleeper out of the peer's process group, where no kill of the group reaches
    # it, and it inherits the peer's stdout: the bench used to read that pipe until the sleeper
    # ended (600 s), past --peer-timeout.
    pidfile = tmp_path / "sleeper.pid"
    spec = peer_script(f'setsid sh -c \'echo $$ > {pidfile}; exec sleep 600\' &\nrun "$@"')
    try:
        out = bench_with_peer(dlab_bin, spec, "--peer-timeout", "60")
        assert_clean(out, 1, "still held its standard output 2 s later")
    finally:
        if pidfile.exists():
            subprocess.run(["kill", pidfile.read_text().strip()], check=False)


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
    # The kill reaches the sleeper at once; under load (ctest beside four pytest processes) it can
    # take longer than a fixed pause to be reaped: a bounded wait, not a sleep.
    deadline = time.time() + 10
    while alive(pid) and time.time() < deadline:
        time.sleep(0.05)
    assert not alive(pid)


def test_a_good_peer_still_runs(dlab_bin, peer_script):
    out = bench_with_peer(dlab_bin, peer_script('run "$@"'))
    assert out.returncode == 0, out.stderr[-800:]
    assert "fib/peer:p x5" in out.stdout


# ---- a peer under cachegrind: counted as a whole process beside the engines ----------------

def test_a_peer_under_valgrind_is_counted_with_n_and_2n_calls_beside_the_engines(dlab_bin, tmp_path):
    """The peer's command line gets {calls} = N and 2N (here a script that logs it and exits, so the
    counts are the shell's: this checks the plumbing, not a peer's speed)."""
    if subprocess.run(["valgrind", "--version"], capture_output=True).returncode != 0:
        pytest.skip("valgrind is not installed (./tools/bootstrap installs it)")
    log = tmp_path / "calls.log"
    peer = tmp_path / "peer.sh"
    peer.write_text(f"#!/bin/sh\necho \"$2 $3 $4\" >> {log}\n")
    peer.chmod(0o755)
    r = run_dlab(dlab_bin, ["wasm", "bench", "--valgrind", "--workloads", "fib", "--dispatch", "tail", "--no-save",
                            "--peer", f"fake={peer} {{module}} {{workload}} {{size}} {{calls}}"])
    assert r.returncode == 0, r.stderr
    assert any(line.split()[0] == "fib/fake" for line in r.stdout.splitlines() if line.strip()), r.stdout
    assert sorted(log.read_text().split("\n")[:-1]) == ["fib 24 1", "fib 24 2"]
