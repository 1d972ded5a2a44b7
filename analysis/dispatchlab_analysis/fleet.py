"""Collect the RFC table from many machines: Ansible (Debian's ansible-core, plain OpenSSH under it)
runs fleet/playbook.yml over an inventory, in parallel; this module makes the checkout archive,
passes the playbook its variables, brings each host's run directories back into
results/<cpu>/<run>-<host>/ unchanged, and writes results/fleet/<id>/report.md with one column
per run. A host that fails (unreachable, not Debian, a failed bootstrap or job) is reported with
its reason and costs no other host its results.

    python -m dispatchlab_analysis.fleet INVENTORY [--job CMD] [--commit REV] [--results DIR]
    (also: `dlab fleet INVENTORY ...`, `just fleet INVENTORY`)

Exit status: 0 every host brought its runs back; 1 the fleet failed (a host, Ansible, git, a
folder that cannot be written); 2 the command line or the inventory it names is wrong, found
before anything was run or written. Every error is one line, "dlab fleet: error: ...".
"""
from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
from dataclasses import asdict, dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PLAYBOOK = REPO / "fleet" / "playbook.yml"
# A host measures; it has no spec suite beside its checkout (a git archive), so it configures with
# DLAB_WASM_TESTSUITE=none unless its environment names one (`just rfc` runs no spec test).
DEFAULT_JOB = './tools/bootstrap && DLAB_WASM_TESTSUITE="${DLAB_WASM_TESTSUITE:-none}" just rfc'
PROG = "dlab fleet"

# Without these Ansible only warns about an inventory it cannot parse, goes on with an empty one
# and the message is lost behind "no hosts"; with them it fails and says which line is wrong.
# ansible-playbook gets them too, so that it parses the inventory exactly as it was checked.
STRICT_INVENTORY = {"ANSIBLE_INVENTORY_UNPARSED_FAILED": "True", "ANSIBLE_INVENTORY_ANY_UNPARSED_IS_FAILED": "True"}

# A host's name becomes part of paths on this machine (its staging folder, Ansible's record of its
# last result), so only names that are one plain folder name are run.
HOST_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,252}")
HOST_RULE = ("a host name must be 1 to 253 letters, digits, '.', '_' or '-', start with a letter or digit "
             "and hold no '..' (give the host such a name and its address as ansible_host)")


class FleetError(RuntimeError):
    """The fleet could not be run at all (no Ansible, no git checkout, a folder it cannot write): exit 1."""


class FleetUsageError(FleetError):
    """The command line or the inventory it names is wrong, found before anything ran: exit 2."""


@dataclass
class HostOutcome:
    host: str
    status: str = "failed"  # ok | failed | unreachable
    reason: str = ""
    runs: list[str] = field(default_factory=list)  # run directories brought back, relative to the results root


def safe_name(host: str) -> str:
    """An inventory host name as a folder-name suffix: letters, digits, '.', '_' and '-' only."""
    return re.sub(r"[^A-Za-z0-9._-]+", "_", host).strip("._") or "host"


def one_line(text: str, limit: int = 1000) -> str:
    """A message from another program (Ansible, git) as one line, its start kept: that is where they say what is wrong."""
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[:limit] + " ..."


def check_host_name(host: str) -> None:
    """Refuses a name the rule does not allow, naming it in full (repr: a newline or a space shows)."""
    if not (HOST_NAME.fullmatch(host) and ".." not in host):
        raise FleetUsageError(f"host {host!r}: {HOST_RULE}")


def inside(folder: Path, name: str) -> Path:
    """folder/name, refused unless it resolves to a path below folder: a name that comes from the
    inventory or from another machine never leads out of the folder it is meant for."""
    path = folder / name
    if not path.resolve().is_relative_to(folder.resolve()) or path.resolve() == folder.resolve():
        raise FleetError(f"{name!r} leads out of {folder}")
    return path


def inventory_hosts(inventory: Path) -> list[str]:
    """Every host of the inventory, as Ansible itself parses it; a name that cannot be a folder name is refused."""
    out = subprocess.run(["ansible-inventory", "-i", str(inventory.resolve()), "--list"], capture_output=True, text=True,
                         env=dict(os.environ, **STRICT_INVENTORY))
    # Ansible's reasons (the file, the line, "No closing quotation") come as warnings before its final error.
    message = one_line(re.sub(r"\[WARNING\]:\s*", "", out.stderr))
    if out.returncode != 0:
        raise FleetUsageError(f"{inventory}: Ansible cannot read this inventory: {message or f'exit status {out.returncode}'}")
    try:
        data = json.loads(out.stdout)
    except ValueError as e:
        raise FleetError(f"{inventory}: ansible-inventory printed no inventory ({e})") from None
    # _meta.hostvars lists only hosts that have variables: a bare host line of a group is in the group alone.
    hosts = sorted(set(data.get("_meta", {}).get("hostvars", {}))
                   | {h for g in data.values() if isinstance(g, dict) for h in g.get("hosts", [])})
    if not hosts:
        raise FleetUsageError(f"{inventory}: no hosts" + (f" (Ansible: {message})" if message else ""))
    for host in hosts:
        check_host_name(host)
    return hosts


def check_job(job: str) -> None:
    # An empty job would run nothing on every host and fail each one late; leaving --job out gives the default.
    if not job.strip():
        raise FleetUsageError(f"--job {job!r}: empty; give the command each host runs, or leave --job out for the default ({DEFAULT_JOB})")


def resolve_commit(commit: str) -> str:
    """The full id of the commit named by --commit, found before anything is made. The name goes to
    git as one argument after --end-of-options; one starting with '-' is refused all the same."""
    if not commit.strip() or commit.startswith("-"):
        raise FleetUsageError(f"--commit {commit!r}: a commit name (HEAD, a branch, a tag, an id) is not empty and "
                              "does not start with '-'")
    git = ["git", "-C", str(REPO), "rev-parse"]
    try:
        # First whether there is a checkout at all (without one this command fails), then whether
        # the name is a commit in it (without one the command line is wrong).
        checkout = subprocess.run(git + ["--git-dir"], capture_output=True, text=True)
        if checkout.returncode != 0:
            raise FleetError(f"{REPO} is not a git checkout, which the hosts' archive is made from: {one_line(checkout.stderr)}")
        out = subprocess.run(git + ["--verify", "--quiet", "--end-of-options", f"{commit}^{{commit}}"], capture_output=True, text=True)
    except OSError as e:
        raise FleetError(f"cannot run git: {e}") from None
    if out.returncode != 0:
        raise FleetUsageError(f"--commit {commit!r}: not a commit of {REPO}" + (f" ({one_line(out.stderr)})" if out.stderr.strip() else ""))
    return out.stdout.strip()


def check_results_root(root: Path) -> None:
    """The results root is a folder this process can write into, or can be made in one: found now,
    not after every host has run. Nothing is created here."""
    existing = root.absolute()
    while not existing.exists() and not existing.is_symlink():
        existing = existing.parent
    if not existing.is_dir():
        where = "" if existing == root.absolute() else f" ({existing} is not a folder)"
        raise FleetError(f"--results {root}: not a folder{where}")
    if not os.access(existing, os.W_OK | os.X_OK):
        raise FleetError(f"--results {root}: cannot write into {existing}: permission denied")


def checkout_archive(commit: str, dest: Path) -> None:
    """The checkout as `git archive` of one commit (a full id from resolve_commit): what every host builds and runs.
    Without the committed run directories (results/<cpu>/<run>/): no job reads them, and they were 19.5 of
    the archive's 20.7 MB (at 6d2ef14), copied to every host; results/probes/ and results/README.md stay."""
    out = subprocess.run(["git", "-C", str(REPO), "archive", "--format=tar.gz", "-o", str(dest.resolve()), commit,
                          "--", ".", ":(exclude,glob)results/*/*/**"],
                         capture_output=True, text=True)
    if out.returncode != 0:
        raise FleetError(f"git archive {commit}: {one_line(out.stderr)}")


def result_details(result: dict) -> str:
    """The useful part of a task result: its message, the tail of its stderr (or stdout), its status."""
    parts = [str(result.get("msg", "")).strip()]
    for key in ("stderr", "module_stderr", "stdout"):
        text = str(result.get(key) or "").strip()
        if text:
            parts.append(f"{key}: {text[-400:]}")
            break
    if result.get("rc") not in (None, 0):
        parts.append(f"exit status {result['rc']}")
    return "; ".join(p for p in parts if p)


def host_status(host_staging: Path, last_result: dict | None) -> tuple[str, str]:
    """(status, reason) of one host: the playbook's own failure record (failed.json, written by its
    rescue), else Ansible's last result for the host (an unreachable host never reaches the rescue)."""
    failed = host_staging / "failed.json"
    if failed.exists():
        record = json.loads(failed.read_text())
        return "failed", f"at '{record.get('task', '?')}': {result_details(record.get('result', {}))}"
    if last_result is None:
        return "failed", "Ansible recorded no result for this host"
    if last_result.get("unreachable"):
        return "unreachable", str(last_result.get("msg") or "unreachable").strip()
    if not (host_staging / "runs.tgz").exists():
        return "failed", "the playbook fetched no run directories: " + (result_details(last_result) or "no reason recorded")
    return "ok", ""


def adopt_runs(archive: Path, host: str, results_root: Path, unpack_dir: Path) -> list[str]:
    """Unpacks a host's runs.tgz and moves each run directory to results/<cpu>/<run>-<host>/,
    never over an existing one. Only complete run directories (with machine.json) are adopted."""
    unpack_dir.mkdir(parents=True, exist_ok=True)
    with tarfile.open(archive) as tar:
        for member in tar.getmembers():  # the archive comes from another machine: no absolute paths, no '..'
            p = Path(member.name)
            if p.is_absolute() or ".." in p.parts or not (member.isfile() or member.isdir()):
                raise FleetError(f"{archive}: unexpected entry {member.name!r}")
        tar.extractall(unpack_dir)
    adopted = []
    for machine in sorted(unpack_dir.glob("results/*/*/machine.json")):
        run = machine.parent
        cpu = run.parent.name
        target = inside(inside(results_root, cpu), f"{run.name}-{safe_name(host)}")
        n = 2
        while target.exists():
            target = inside(inside(results_root, cpu), f"{run.name}-{safe_name(host)}-{n}")
            n += 1
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.move(str(run), str(target))
        adopted.append(str(target.relative_to(results_root)))
    return adopted


def fleet_report(fleet_id: str, outcomes: list[HostOutcome], results_root: Path) -> str:
    from .results import load_run
    from .tables import markdown_table, rfc_change_table
    rows = [[o.host, o.status, o.reason or "", ", ".join(f"`{r}`" for r in o.runs)] for o in outcomes]
    parts = [f"# dispatchlab fleet {fleet_id}\n",
             f"{sum(o.status == 'ok' for o in outcomes)} of {len(outcomes)} hosts brought their runs back.\n",
             markdown_table(["host", "status", "reason", "run directories (under results/)"], rows)]
    runs, labels = [], []
    for o in outcomes:
        for r in o.runs:
            run = load_run(results_root / r)
            runs.append(run)
            labels.append(f"{run.machine.get('cpu_slug', Path(r).parent.name)} @ {o.host}")
    from .results import run_emulation
    emulated = [(label, run_emulation(run)) for run, label in zip(runs, labels) if run_emulation(run)]
    if emulated:
        parts += ["## Left out: made under emulation\n",
                  f"{len(emulated)} run{'s' if len(emulated) > 1 else ''} made under emulation, never a measurement, left out of "
                  "every table below: " + "; ".join(f"{label} ({how})" for label, how in emulated) + ".\n"]
        keep = [i for i, run in enumerate(runs) if not run_emulation(run)]
        runs, labels = [runs[i] for i in keep], [labels[i] for i in keep]
    if runs:
        by_cpu: dict[str, list[str]] = {}
        for run, label in zip(runs, labels):
            by_cpu.setdefault(run.machine.get("cpu_slug", "?"), []).append(label.split(" @ ", 1)[1])
        counts = "; ".join(f"{cpu}: {len(hosts)} run{'s' if len(hosts) > 1 else ''} ({', '.join(hosts)})"
                           for cpu, hosts in by_cpu.items())
        parts += ["## Change against `vec` per run (RFC table)\n",
                  "One column per run, never merged: two hosts with the same CPU are two columns. Runs per CPU: "
                  f"{counts}.\n", rfc_change_table(runs, labels=labels)]
    return "\n".join(parts) + "\n"


def make_fleet_dir(results_root: Path) -> Path:
    """results/fleet/<UTC time>/, or <time>-2, -3 ... if taken: made here, never an existing one."""
    fleet_id = dt.datetime.now(dt.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    (results_root / "fleet").mkdir(parents=True, exist_ok=True)
    fleet_dir, n = results_root / "fleet" / fleet_id, 2
    while True:
        try:
            fleet_dir.mkdir()
            return fleet_dir
        except FileExistsError:
            fleet_dir = results_root / "fleet" / f"{fleet_id}-{n}"
            n += 1


def run_fleet(inventory: Path, job: str, commit: str, results_root: Path, forks: int,
              playbook: Path = PLAYBOOK, extra_env: dict | None = None) -> tuple[Path, list[HostOutcome]]:
    # Everything that can be refused is refused here, before a folder is made or Ansible runs.
    check_job(job)
    if not inventory.is_file():
        raise FleetUsageError(f"{inventory}: no such inventory file")
    check_results_root(results_root)
    commit_id = resolve_commit(commit)
    if shutil.which("ansible-playbook") is None:
        raise FleetError("ansible-playbook not found: install Debian's ansible-core (./tools/bootstrap does)")
    hosts = inventory_hosts(inventory)
    fleet_dir = make_fleet_dir(results_root)
    work = fleet_dir / ".work"
    try:
        outcomes = run_playbook(inventory, hosts, job, commit_id, results_root, fleet_dir, work, forks, playbook, extra_env)
        (fleet_dir / "fleet.json").write_text(json.dumps({"fleet_id": fleet_dir.name, "inventory": str(inventory), "job": job,
                                                          "commit": commit, "commit_id": commit_id,
                                                          "hosts": [asdict(o) for o in outcomes]}, indent=2) + "\n")
        (fleet_dir / "report.md").write_text(fleet_report(fleet_dir.name, outcomes, results_root))
    finally:  # whatever failed, no working folder is left behind (and no empty fleet folder)
        if not os.environ.get("DLAB_FLEET_KEEP_WORK"):  # set it to look at what Ansible recorded
            shutil.rmtree(work, ignore_errors=True)
            with contextlib.suppress(OSError):  # only an empty one goes
                fleet_dir.rmdir()
    return fleet_dir, outcomes


def run_playbook(inventory: Path, hosts: list[str], job: str, commit_id: str, results_root: Path, fleet_dir: Path,
                 work: Path, forks: int, playbook: Path, extra_env: dict | None) -> list[HostOutcome]:
    """Runs the playbook on the hosts (checked names) with everything it needs under work/, and
    reads back each host's outcome, adopting the runs it fetched."""
    staging, tree = work / "fetched", work / "last-results"
    for d in [tree] + [inside(staging, h) for h in hosts]:  # the playbook's rescue writes into the host's folder
        d.mkdir(parents=True)
    archive = work / "checkout.tar.gz"
    checkout_archive(commit_id, archive)
    variables = {"fleet_id": fleet_dir.name, "fleet_archive": str(archive.resolve()), "fleet_staging": str(staging.resolve()),
                 "fleet_job": job}
    (work / "vars.json").write_text(json.dumps(variables, indent=2) + "\n")
    # SSH pipelining: the playbook turns it on after the fact gathering (it says why there).
    env = dict(os.environ, ANSIBLE_CALLBACKS_ENABLED="ansible.builtin.tree", ANSIBLE_CALLBACK_TREE_DIR=str(tree.resolve()),
               ANSIBLE_RETRY_FILES_ENABLED="False", **STRICT_INVENTORY, **(extra_env or {}))
    print(f"[fleet] {len(hosts)} hosts ({', '.join(hosts)}), job: {job}", file=sys.stderr)
    # Ansible's own progress goes to the terminal; its exit status only says that some host failed,
    # which the per-host results below say precisely. --limit keeps the run to the hosts whose names
    # were checked (a script inventory could answer differently the second time it is asked).
    subprocess.run(["ansible-playbook", "-i", str(inventory.resolve()), str(playbook.resolve()),
                    "-e", f"@{(work / 'vars.json').resolve()}", "--forks", str(forks), "--limit", ",".join(hosts)], env=env)
    outcomes = []
    for host in hosts:
        o = HostOutcome(host)
        last = inside(tree, host)
        status, reason = host_status(inside(staging, host), json.loads(last.read_text()) if last.exists() else None)
        if status == "ok":
            try:
                o.runs = adopt_runs(staging / host / "runs.tgz", host, results_root, work / "unpacked" / safe_name(host))
                if not o.runs:
                    status, reason = "failed", "the fetched archive holds no run directory with machine.json"
            except (FleetError, tarfile.TarError, OSError) as e:
                status, reason = "failed", f"cannot adopt the fetched runs: {e}"
        o.status, o.reason = status, reason
        outcomes.append(o)
    return outcomes


def folder_argument(text: str) -> Path:
    if not text.strip():  # Path("") is ".", the current folder: never what an empty --results meant
        raise argparse.ArgumentTypeError("needs a directory")
    return Path(text)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog=PROG, description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("inventory", type=Path, help="an Ansible inventory (INI or YAML); see the README for its variables")
    ap.add_argument("--job", default=DEFAULT_JOB, help=f"the command each host runs in its checkout (default: {DEFAULT_JOB})")
    ap.add_argument("--commit", default="HEAD", help="the commit each host runs (git archive of it; default HEAD)")
    ap.add_argument("--results", type=folder_argument, default=REPO / "results", help="results root (default: the checkout's results/)")
    ap.add_argument("--forks", type=int, default=16, help="hosts run at once (Ansible forks, 1..1000; default 16)")
    args = ap.parse_args(argv)
    if not 1 <= args.forks <= 1000:
        ap.error("--forks must be in 1..1000")
    try:
        fleet_dir, outcomes = run_fleet(args.inventory, args.job, args.commit, args.results, args.forks)
        for o in outcomes:
            print(f"{o.host:<24} {o.status:<12} {o.reason or ', '.join(o.runs)}")
        print(f"wrote {fleet_dir / 'report.md'}")
    except FleetUsageError as e:
        return error(str(e), 2)
    except FleetError as e:
        return error(str(e), 1)
    except KeyboardInterrupt:
        return error("interrupted", 130)
    except Exception as e:  # a bug or an unforeseen failure is still one line, not a traceback
        return error(f"{type(e).__name__}: {e}", 1)
    return 0 if all(o.status == "ok" for o in outcomes) else 1


def error(message: str, status: int) -> int:
    print(f"{PROG}: error: {one_line(message)}", file=sys.stderr)
    return status


if __name__ == "__main__":
    sys.exit(main())
