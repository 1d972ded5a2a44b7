"""The commit of a checkout git refuses (another user's: "detected dubious ownership") is not "no
git checkout": the fingerprint says git refused and why, and a run directory is named
`-gitrefused`, not `-nogit` (docs/errors.md, *The rules*). Root only: dlab runs as nobody."""
import os
import pwd
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from dlab_cli import TIMEOUT

REPO = Path(__file__).resolve().parents[3]


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
