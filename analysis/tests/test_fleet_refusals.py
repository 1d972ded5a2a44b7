"""Hostile input to `dlab fleet` (dispatchlab_analysis.fleet), table-driven (issue 23): a wrong
command line or inventory is refused with one line naming what is wrong (exit status 2; 1 for a
failed command), before anything is run or written, and never with a traceback; any failure leaves
no working folder; and dlab hands the module's refusal over. No row runs a playbook: the rows that
need Ansible only ask ansible-inventory to parse, and every row runs in about a second.
(tools/superinstructions.py's refusals: test_superinstructions_tool.py.)"""
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from dispatchlab_analysis import fleet

TIMEOUT = 60  # seconds: a hang is a failure, not a stuck CI
HAVE_ANSIBLE = shutil.which("ansible-inventory") is not None
needs_ansible = pytest.mark.skipif(not HAVE_ANSIBLE, reason="needs ansible-core (./tools/bootstrap installs it)")

GOOD_HOST = "alpha ansible_host=127.0.0.1\n"

# (inventory text, arguments after it, exit status, text the error must contain). {file} is a plain
# file, which must not be written; --results is a folder that does not exist yet unless a row names one.
FLEET_REFUSALS = [
    (GOOD_HOST, ["--job", ""], 2, "--job '': empty"),
    (GOOD_HOST, ["--job", " \t "], 2, "--job ' \\t ': empty"),
    (GOOD_HOST, ["--commit", "BOGUS"], 2, "--commit 'BOGUS': not a commit of"),
    (GOOD_HOST, ["--commit", "HEAD^{tree}"], 2, "not a commit of"),
    (GOOD_HOST, ["--commit=-h"], 2, "--commit '-h': a commit name"),
    (GOOD_HOST, ["--commit=--output=/tmp/x"], 2, "does not start with '-'"),
    (GOOD_HOST, ["--commit", ""], 2, "--commit '': a commit name"),
    # How dlab hands `--commit=-h` over: two arguments, which argparse refuses itself.
    (GOOD_HOST, ["--commit", "-h"], 2, "argument --commit: expected one argument"),
    (GOOD_HOST, ["--results", "{file}"], 1, "--results {file}: not a folder"),
    (GOOD_HOST, ["--results", "{file}/sub"], 1, "({file} is not a folder)"),
    (GOOD_HOST, ["--results", ""], 2, "argument --results: needs a directory"),
    (GOOD_HOST, ["--forks", "0"], 2, "--forks must be in 1..1000"),
    (GOOD_HOST, ["--forks", "many"], 2, "invalid int value"),
    (None, [], 2, "no such inventory file"),
    pytest.param("../../../../trav ansible_host=127.0.0.1\n", [], 2, "host '../../../../trav': a host name must be",
                 marks=needs_ansible, id="host-traversal"),
    pytest.param("a/b ansible_host=127.0.0.1\n", [], 2, "host 'a/b'", marks=needs_ansible, id="host-slash"),
    pytest.param("a..b ansible_host=127.0.0.1\n", [], 2, "host 'a..b'", marks=needs_ansible, id="host-dotdot"),
    pytest.param(".hidden ansible_host=127.0.0.1\n", [], 2, "host '.hidden'", marks=needs_ansible, id="host-dot"),
    pytest.param("-x ansible_host=127.0.0.1\n", [], 2, "host '-x'", marks=needs_ansible, id="host-dash"),
    # A host line without variables is listed in its group only, not in Ansible's hostvars.
    pytest.param(GOOD_HOST + "[lab]\n../up\n", [], 2, "host '../up'", marks=needs_ansible, id="host-in-group"),
    pytest.param('alpha ansible_host="127.0.0.1\n', [], 2, "No closing quotation", marks=needs_ansible, id="inventory-quote"),
    pytest.param("[lab\nalpha\n", [], 2, "Ansible cannot read this inventory", marks=needs_ansible, id="inventory-group"),
    pytest.param("", [], 2, "no hosts", marks=needs_ansible, id="inventory-empty"),
]


def fleet_ids(rows):
    return [r.id if hasattr(r, "id") else " ".join(r[1]) or "no-inventory" for r in rows]


@pytest.fixture
def checkout(tmp_path, monkeypatch):
    """A git checkout of one commit for --commit to name, in place of this repository (which a test
    may run outside of)."""
    if shutil.which("git") is None:
        pytest.skip("needs git")
    repo = tmp_path / "checkout"
    repo.mkdir()
    git = ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@example.invalid", "-c", "commit.gpgsign=false"]
    subprocess.run(git + ["init", "-q"], check=True)
    (repo / "README").write_text("x\n")
    subprocess.run(git + ["add", "README"], check=True)
    subprocess.run(git + ["commit", "-q", "-m", "one"], check=True)
    monkeypatch.setattr(fleet, "REPO", repo)
    monkeypatch.delenv("DLAB_FLEET_KEEP_WORK", raising=False)
    return repo


def run_fleet_main(argv, capsys):
    """fleet.main in this process: (exit status, stderr). argparse's own refusals exit through SystemExit."""
    try:
        status = fleet.main(argv)
    except SystemExit as e:
        status = e.code
    return status, capsys.readouterr().err


def tree(folder: Path) -> set[str]:
    return {str(p.relative_to(folder)) for p in folder.rglob("*")}


@pytest.fixture
def no_playbook(monkeypatch):
    """A refusal that came too late would run the playbook (the default job, on real addresses): it fails the test instead."""
    monkeypatch.setattr(fleet, "run_playbook", lambda *a, **kw: pytest.fail("the playbook was about to run"))


@pytest.mark.parametrize("inventory,args,status,text", FLEET_REFUSALS, ids=fleet_ids(FLEET_REFUSALS))
def test_fleet_refuses_a_wrong_command_line_or_inventory_before_anything(checkout, no_playbook, tmp_path, capsys, inventory, args,
                                                                          status, text):
    work = tmp_path / "work"
    work.mkdir()
    inv = work / "inventory.ini"
    if inventory is not None:
        inv.write_text(inventory)
    file = work / "file"
    file.write_text("not a folder\n")
    args = [a.replace("{file}", str(file)) for a in args]
    if not any(a.startswith("--results") for a in args):
        args += ["--results", str(work / "results")]
    text = text.replace("{file}", str(file))
    before = tree(tmp_path)
    got, err = run_fleet_main([str(inv), *args], capsys)
    assert got == status, err
    assert text in err, err
    assert "Traceback" not in err
    lines = err.strip().splitlines()
    assert lines[-1].startswith("dlab fleet: error: "), err
    assert len(lines) == 1 or lines[0].startswith("usage: dlab fleet"), err  # argparse's own refusals come with the usage
    # Nothing was made: no results root, no fleet folder, nothing next to or above it (../../../../trav).
    assert tree(tmp_path) == before
    assert not (tmp_path.parent / "trav").exists() and not (tmp_path.parent.parent / "trav").exists()


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into any folder: no unwritable folder to test with")
def test_fleet_refuses_an_unwritable_results_folder_first(checkout, no_playbook, tmp_path, capsys):
    inv = tmp_path / "inventory.ini"
    inv.write_text(GOOD_HOST)
    locked = tmp_path / "locked"
    locked.mkdir(mode=0o500)
    try:
        status, err = run_fleet_main([str(inv), "--results", str(locked / "results")], capsys)
    finally:
        locked.chmod(0o700)
    assert status == 1 and f"cannot write into {locked}" in err and len(err.strip().splitlines()) == 1, err
    assert not (locked / "results").exists()


@pytest.mark.parametrize("host,ok", [
    ("alpha", True), ("web-1.example.org", True), ("10.0.0.7", True), ("a_b", True), ("x" * 253, True),
    ("../../../../trav", False), ("a/b", False), ("..", False), ("a..b", False), (".hidden", False), ("-x", False),
    ("_x", False), ("", False), ("a b", False), ("a\nb", False), ("alpha\n", False), ("x" * 254, False),
    ("h\u00f6st", False), ("a:b", False), ("*", False),
])
def test_host_names_are_one_plain_folder_name(host, ok):
    if ok:
        fleet.check_host_name(host)
    else:
        with pytest.raises(fleet.FleetUsageError, match="a host name must be"):
            fleet.check_host_name(host)


@pytest.mark.parametrize("name", ["../x", "a/../../x", "/etc", "link", ".", ""])
def test_paths_from_names_never_lead_out_of_their_folder(tmp_path, name):
    (tmp_path / "link").symlink_to("/")
    with pytest.raises(fleet.FleetError, match="leads out of"):
        fleet.inside(tmp_path, name)
    assert fleet.inside(tmp_path, "alpha") == tmp_path / "alpha"


def fake_ansible(monkeypatch, hosts):
    """Ansible as far as run_fleet asks before the playbook: present, with these hosts."""
    monkeypatch.setattr(fleet.shutil, "which", lambda name: "/usr/bin/" + name if name.startswith("ansible") else None)
    monkeypatch.setattr(fleet, "inventory_hosts", lambda inventory: hosts)


def raising(error: BaseException):
    def fail(*args, **kwargs):
        raise error
    return fail


# (the step that fails, how, text the error must contain)
FLEET_FAILURES = [
    ("check_results_root", ZeroDivisionError("an unforeseen failure"), "dlab fleet: error: ZeroDivisionError: an unforeseen failure"),
    ("checkout_archive", ZeroDivisionError("an unforeseen failure"), "dlab fleet: error: ZeroDivisionError: an unforeseen failure"),
    ("checkout_archive", OSError(28, "No space left on device"), "dlab fleet: error: OSError: [Errno 28] No space left on device"),
    ("checkout_archive", fleet.FleetError("git archive x: bad\nsecond line"), "dlab fleet: error: git archive x: bad second line"),
    ("run_playbook", KeyError("tree"), "dlab fleet: error: KeyError: 'tree'"),
]


@pytest.mark.parametrize("where,error,text", FLEET_FAILURES, ids=[f"{w}-{type(e).__name__}" for w, e, _ in FLEET_FAILURES])
def test_any_failure_is_one_line_and_leaves_no_working_folder(checkout, tmp_path, capsys, monkeypatch, where, error, text):
    fake_ansible(monkeypatch, ["alpha"])
    monkeypatch.setattr(fleet, where, raising(error))
    inv = tmp_path / "inventory.ini"
    inv.write_text(GOOD_HOST)
    results = tmp_path / "results"
    status, err = run_fleet_main([str(inv), "--job", "true", "--results", str(results)], capsys)
    assert status == 1 and text in err, err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    fleets = results / "fleet"
    assert not fleets.exists() or list(fleets.iterdir()) == []  # neither .work nor an empty fleet folder is left


def test_the_playbook_is_limited_to_the_checked_hosts_and_given_the_resolved_commit(checkout, tmp_path, monkeypatch):
    fake_ansible(monkeypatch, ["alpha", "beta"])
    seen = {}

    def playbook(argv, env):
        seen["argv"], seen["env"] = argv, env
        return subprocess.CompletedProcess(argv, 2)

    real_run = subprocess.run  # git still runs; only the playbook is played
    monkeypatch.setattr(fleet.subprocess, "run", lambda argv, **kw: playbook(argv, kw.get("env")) if argv[0] == "ansible-playbook"
                        else real_run(argv, **kw))
    inv = tmp_path / "inventory.ini"
    inv.write_text(GOOD_HOST)
    fleet_dir, outcomes = fleet.run_fleet(inv, "true", "HEAD", tmp_path / "results", forks=2)
    argv = seen["argv"]
    assert argv[argv.index("--limit") + 1] == "alpha,beta"
    assert all(not a.startswith("-") or a in ("-i", "-e", "--forks", "--limit") for a in argv[1:])
    assert seen["env"]["ANSIBLE_INVENTORY_UNPARSED_FAILED"] == "True"
    assert [o.status for o in outcomes] == ["failed", "failed"]
    head = subprocess.run(["git", "-C", str(checkout), "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
    assert '"commit_id": "' + head + '"' in (fleet_dir / "fleet.json").read_text()
    assert sorted(p.name for p in fleet_dir.iterdir()) == ["fleet.json", "report.md"]


@pytest.mark.parametrize("args,status,text", [
    (["--job", ""], 2, "dlab fleet: error: --job '': empty"),
    (["--commit=-h"], 2, "dlab fleet: error: --commit '-h'"),
    (["--commit", "-h"], 2, "dlab fleet: error: argument --commit: expected one argument"),
])
def test_the_module_run_as_a_program_exits_with_the_status(tmp_path, args, status, text):
    inv = tmp_path / "inventory.ini"
    inv.write_text(GOOD_HOST)
    out = subprocess.run([sys.executable, "-m", "dispatchlab_analysis.fleet", str(inv), *args, "--results", str(tmp_path / "r")],
                         capture_output=True, text=True, timeout=TIMEOUT)
    assert out.returncode == status and text in out.stderr and "Traceback" not in out.stderr, out.stderr
    assert not (tmp_path / "r").exists()


# Through dlab, which hands over to the module: each row ends in a refusal even where dlab drops or
# garbles the option (the fallback after it), so no row can run a job. They need
# harness/cli/fleet_command.cc to pass --job even when empty, to pass values as --opt=VALUE and to
# exit with the module's status (2 stays 2); until then they are expected to fail.
DLAB_FLEET = [
    (["--job", "", "--commit", "BOGUS"], 2, "--job ''"),
    (["--commit=-h"], 2, "--commit '-h'"),
    (["--commit", "BOGUS"], 2, "--commit 'BOGUS': not a commit of"),
]


@pytest.mark.parametrize("args,status,text", DLAB_FLEET, ids=[" ".join(a) for a, _, _ in DLAB_FLEET])
def test_dlab_fleet_hands_the_refusal_over(dlab_bin, tmp_path, args, status, text):
    inv = tmp_path / "inventory.ini"
    inv.write_text("../refused-anyway ansible_host=127.0.0.1\n")  # the last fallback: never a host that runs
    out = subprocess.run([str(dlab_bin), "fleet", str(inv), *args, "--results", str(tmp_path / "r")],
                         capture_output=True, text=True, timeout=TIMEOUT)
    assert out.returncode == status and text in out.stderr, out.stderr
    assert "did not complete on every host" not in out.stderr
    assert not (tmp_path / "r").exists()
