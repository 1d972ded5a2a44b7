"""Collect the RFC table from many machines: Ansible (Debian's ansible-core, plain OpenSSH under it)
runs fleet/playbook.yml over an inventory, in parallel; this module makes the checkout archive,
passes the playbook its variables, brings each host's run directories back into
results/<cpu>/<run>-<host>/ unchanged, and writes results/fleet/<id>/report.md with one column
per run. A host that fails (unreachable, not Debian, a failed bootstrap or job) is reported with
its reason and costs no other host its results.

    python -m dispatchlab_analysis.fleet INVENTORY [--job CMD] [--commit REV] [--results DIR]
    (also: `dlab fleet INVENTORY ...`, `just fleet INVENTORY`)
"""
from __future__ import annotations

import argparse
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
DEFAULT_JOB = "./tools/bootstrap && just rfc"


class FleetError(RuntimeError):
    """The fleet could not be run at all (no Ansible, a bad inventory, no git checkout)."""


@dataclass
class HostOutcome:
    host: str
    status: str = "failed"  # ok | failed | unreachable
    reason: str = ""
    runs: list[str] = field(default_factory=list)  # run directories brought back, relative to the results root


def safe_name(host: str) -> str:
    """An inventory host name as a folder-name suffix: letters, digits, '.', '_' and '-' only."""
    return re.sub(r"[^A-Za-z0-9._-]+", "_", host).strip("._") or "host"


def inventory_hosts(inventory: Path) -> list[str]:
    """Every host of the inventory, as Ansible itself parses it."""
    out = subprocess.run(["ansible-inventory", "-i", str(inventory), "--list"], capture_output=True, text=True)
    if out.returncode != 0:
        raise FleetError(f"{inventory}: Ansible cannot read this inventory: {out.stderr.strip()[-500:]}")
    data = json.loads(out.stdout)
    hosts = sorted(data.get("_meta", {}).get("hostvars", {}).keys())
    if not hosts:
        hosts = sorted({h for g in data.values() if isinstance(g, dict) for h in g.get("hosts", [])})
    if not hosts:
        raise FleetError(f"{inventory}: no hosts")
    return hosts


def checkout_archive(commit: str, dest: Path) -> None:
    """The checkout as `git archive` of one commit: what every host builds and runs."""
    out = subprocess.run(["git", "-C", str(REPO), "archive", "--format=tar.gz", "-o", str(dest), commit],
                         capture_output=True, text=True)
    if out.returncode != 0:
        raise FleetError(f"git archive {commit}: {out.stderr.strip()}")


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
        target = results_root / cpu / f"{run.name}-{safe_name(host)}"
        n = 2
        while target.exists():
            target = results_root / cpu / f"{run.name}-{safe_name(host)}-{n}"
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


def run_fleet(inventory: Path, job: str, commit: str, results_root: Path, forks: int,
              playbook: Path = PLAYBOOK, extra_env: dict | None = None) -> tuple[Path, list[HostOutcome]]:
    if shutil.which("ansible-playbook") is None:
        raise FleetError("ansible-playbook not found: install Debian's ansible-core (./tools/bootstrap does)")
    if not inventory.is_file():
        raise FleetError(f"{inventory}: no such inventory file")
    hosts = inventory_hosts(inventory)
    fleet_id = dt.datetime.now(dt.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    fleet_dir = results_root / "fleet" / fleet_id
    n = 2
    while fleet_dir.exists():
        fleet_dir = results_root / "fleet" / f"{fleet_id}-{n}"
        n += 1
    work = fleet_dir / ".work"
    staging, tree = work / "fetched", work / "last-results"
    for d in [tree] + [staging / h for h in hosts]:  # the playbook's rescue writes into the host's folder
        d.mkdir(parents=True)
    archive = work / "checkout.tar.gz"
    checkout_archive(commit, archive)
    variables = {"fleet_id": fleet_dir.name, "fleet_archive": str(archive.resolve()), "fleet_staging": str(staging.resolve()),
                 "fleet_job": job}
    (work / "vars.json").write_text(json.dumps(variables, indent=2) + "\n")
    env = dict(os.environ, ANSIBLE_CALLBACKS_ENABLED="ansible.builtin.tree", ANSIBLE_CALLBACK_TREE_DIR=str(tree),
               ANSIBLE_RETRY_FILES_ENABLED="False", **(extra_env or {}))
    print(f"[fleet] {len(hosts)} hosts ({', '.join(hosts)}), job: {job}", file=sys.stderr)
    # Ansible's own progress goes to the terminal; its exit status only says that some host failed,
    # which the per-host results below say precisely.
    subprocess.run(["ansible-playbook", "-i", str(inventory), str(playbook), "-e", f"@{work / 'vars.json'}",
                    "--forks", str(forks)], env=env)
    outcomes = []
    for host in hosts:
        o = HostOutcome(host)
        last = tree / host
        status, reason = host_status(staging / host, json.loads(last.read_text()) if last.exists() else None)
        if status == "ok":
            try:
                o.runs = adopt_runs(staging / host / "runs.tgz", host, results_root, work / "unpacked" / safe_name(host))
                if not o.runs:
                    status, reason = "failed", "the fetched archive holds no run directory with machine.json"
            except (FleetError, tarfile.TarError, OSError) as e:
                status, reason = "failed", f"cannot adopt the fetched runs: {e}"
        o.status, o.reason = status, reason
        outcomes.append(o)
    (fleet_dir / "fleet.json").write_text(json.dumps({"fleet_id": fleet_dir.name, "inventory": str(inventory), "job": job,
                                                      "commit": commit, "hosts": [asdict(o) for o in outcomes]}, indent=2) + "\n")
    (fleet_dir / "report.md").write_text(fleet_report(fleet_dir.name, outcomes, results_root))
    if not os.environ.get("DLAB_FLEET_KEEP_WORK"):  # set it to look at what Ansible recorded
        shutil.rmtree(work, ignore_errors=True)
    return fleet_dir, outcomes


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("inventory", type=Path, help="an Ansible inventory (INI or YAML); see the README for its variables")
    ap.add_argument("--job", default=DEFAULT_JOB, help=f"the command each host runs in its checkout (default: {DEFAULT_JOB})")
    ap.add_argument("--commit", default="HEAD", help="the commit each host runs (git archive of it; default HEAD)")
    ap.add_argument("--results", type=Path, default=REPO / "results", help="results root (default: the checkout's results/)")
    ap.add_argument("--forks", type=int, default=16, help="hosts run at once (Ansible forks, 1..1000; default 16)")
    args = ap.parse_args(argv)
    if not 1 <= args.forks <= 1000:
        ap.error("--forks must be in 1..1000")
    try:
        fleet_dir, outcomes = run_fleet(args.inventory, args.job, args.commit, args.results, args.forks)
    except FleetError as e:
        print(f"fleet: error: {e}", file=sys.stderr)
        return 1
    for o in outcomes:
        print(f"{o.host:<24} {o.status:<12} {o.reason or ', '.join(o.runs)}")
    print(f"wrote {fleet_dir / 'report.md'}")
    return 0 if all(o.status == "ok" for o in outcomes) else 1


if __name__ == "__main__":
    sys.exit(main())
