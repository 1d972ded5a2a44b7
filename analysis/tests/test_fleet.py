"""`dlab fleet` against a real sshd on a loopback port: two inventory entries that both reach this
machine (distinct names) bring their run directories back intact and side by side in the merged
table; an unreachable entry and one whose job fails are reported with their reasons and cost the
others nothing. (About half a minute: Ansible's own start-up dominates.)"""
import getpass
import json
import os
import shutil
import socket
import subprocess
import time
from pathlib import Path

import pytest

from dispatchlab_analysis import fleet

# Without an sftp subsystem every Ansible file transfer first waits for sftp and then scp to fail
# (scp speaks sftp too) before it falls back to a pipe: the test took 158 s without it, 115 s with
# it, 81 s with SSH pipelining after the fact gathering and the archive without the committed
# run directories (run alone on a 2-vCPU Zen 5 guest).
SFTP_SERVER = Path("/usr/lib/openssh/sftp-server")
SSHD = Path("/usr/sbin/sshd")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def sshd(tmp_path):
    if not SSHD.exists() or shutil.which("ansible-playbook") is None:
        pytest.skip("needs openssh-server and ansible-core (./tools/bootstrap installs both)")
    keys = tmp_path / "keys"
    keys.mkdir()
    for name in ("host", "client"):
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(keys / name)], check=True)
    shutil.copy(keys / "client.pub", keys / "authorized_keys")
    port = free_port()
    config = keys / "sshd_config"
    config.write_text(f"""Port {port}
ListenAddress 127.0.0.1
HostKey {keys / 'host'}
AuthorizedKeysFile {keys / 'authorized_keys'}
PasswordAuthentication no
KbdInteractiveAuthentication no
PubkeyAuthentication yes
PermitRootLogin prohibit-password
StrictModes no
UsePAM no
PidFile {keys / 'sshd.pid'}
""" + (f"Subsystem sftp {SFTP_SERVER}\n" if SFTP_SERVER.exists() else ""))
    if os.geteuid() == 0:
        Path("/run/sshd").mkdir(exist_ok=True)  # the privilege-separation folder sshd needs as root
    proc = subprocess.Popen([str(SSHD), "-D", "-e", "-f", str(config)], stderr=subprocess.PIPE, text=True)
    for _ in range(100):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            break
        except OSError:
            if proc.poll() is not None:
                pytest.fail(f"sshd did not start: {proc.stderr.read()}")
            time.sleep(0.1)
    yield port, keys / "client"
    proc.terminate()
    proc.wait(timeout=10)


def test_fleet_brings_back_every_reachable_hosts_runs_and_reports_the_others(sshd, tmp_path, dlab_bin):
    port, key = sshd
    remote = tmp_path / "remote"
    inventory = tmp_path / "inventory.ini"
    inventory.write_text(f"""[lab]
alpha ansible_host=127.0.0.1 ansible_port={port}
beta  ansible_host=127.0.0.1 ansible_port={port}
gone  ansible_host=127.0.0.1 ansible_port={free_port()}
broken ansible_host=127.0.0.1 ansible_port={port} dlab_job="echo 'bootstrap: cannot reach the mirror' >&2; exit 3"
macmini ansible_host=127.0.0.1 ansible_port={port} dlab_os_family=Darwin

[lab:vars]
ansible_user={getpass.getuser()}
ansible_ssh_private_key_file={key}
ansible_ssh_common_args=-o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null
ansible_python_interpreter=/usr/bin/python3
dlab_job_poll=1
dlab_dir={remote}/{{{{ inventory_hostname }}}}
""")
    # A job much smaller than `just rfc`, with this build's dlab: a run directory with a stack group.
    job = (f"run=$({dlab_bin} new-run --results results) && {dlab_bin} models --model stack --stack-copies 17 "
           f"--statements 64 --mode-placements none --placements vec,sp --samples 3 --warmup 1 --dispatches 20000 --run-dir $run")
    results = tmp_path / "results"
    fleet_dir, outcomes = fleet.run_fleet(inventory, job, "HEAD", results, forks=4)
    by_host = {o.host: o for o in outcomes}
    assert by_host["alpha"].status == "ok" and by_host["beta"].status == "ok", outcomes
    assert by_host["gone"].status == "unreachable" and "Connection refused" in by_host["gone"].reason
    assert by_host["broken"].status == "failed"
    assert "at 'run the job'" in by_host["broken"].reason and "cannot reach the mirror" in by_host["broken"].reason
    assert by_host["macmini"].status == "failed" and "not Debian" in by_host["macmini"].reason and "dlab_setup" in by_host["macmini"].reason
    # Both run directories came back unchanged, kept apart by host, each with its fingerprint.
    for host in ("alpha", "beta"):
        (rel,) = by_host[host].runs
        run = results / rel
        assert run.name.endswith(f"-{host}")
        assert {p.name for p in run.iterdir()} == {"machine.json", "models.json", "models.samples.csv", "models.summary.csv"}
        sidecar = json.loads((run / "models.json").read_text())
        assert run.name.startswith(sidecar["run_id"])  # the run's own id, the host appended to the folder only
        original = remote / host / "results" / run.parent.name / sidecar["run_id"]
        for f in original.iterdir():
            assert (run / f.name).read_bytes() == f.read_bytes(), f.name
    report = (fleet_dir / "report.md").read_text()
    header = next(line for line in report.splitlines() if line.startswith("| placement |"))
    assert "@ alpha" in header and "@ beta" in header
    assert "2 runs (alpha, beta)" in report
    assert "| gone | unreachable |" in report and "| broken | failed |" in report
    record = json.loads((fleet_dir / "fleet.json").read_text())
    assert [h["host"] for h in record["hosts"]] == ["alpha", "beta", "broken", "gone", "macmini"]
    assert not (fleet_dir / ".work").exists()


def test_a_missing_inventory_is_a_clear_error(tmp_path):
    with pytest.raises(fleet.FleetError, match="no such inventory file"):
        fleet.run_fleet(tmp_path / "nope.ini", "true", "HEAD", tmp_path, forks=1)
