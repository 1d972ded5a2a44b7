"""Emulation is never a measurement (issue 33 item 3): runs made under an emulator are marked in
every summary row (`emulated`) and in their fingerprint (`emulation`), and the report, the RFC table,
latest_runs and the fleet report leave them out, saying they did. The last test makes such a run for
real, with qemu-x86_64-static, when it is installed."""
import json
import shutil
import subprocess
from pathlib import Path

import pandas as pd
import pytest

from dispatchlab_analysis import fleet, report
from dispatchlab_analysis.results import (experiment_emulation, latest_runs, load_run, machine_emulation, run_emulation,
                                          without_emulated)
from dispatchlab_analysis.tables import rfc_change_table

FIXTURES = Path(__file__).parent / "fixtures"

EMULATION = {
    "emulated": True,
    "emulator": "qemu-user",
    "reason": "emulated: qemu-user (found by hypervisor-leaf, comm; the fingerprint's emulation.evidence says what each saw): "
              "time is the translator's, not a core's",
    "evidence": [{"method": "hypervisor-leaf", "detail": "CPUID leaf 0x40000000 says TCGTCGTCGTCG", "decisive": True},
                 {"method": "comm", "detail": "/proc/self/comm is 'qemu-x86_64-sta'", "decisive": True}],
}
LABEL = "qemu-user (hypervisor-leaf, comm)"


def emulated_copy(src: Path, dst: Path, in_rows: bool) -> Path:
    """A copy of a recorded run as if made under qemu-user: the fingerprint says so, and (in_rows)
    every summary row carries the `emulated` column the harness writes now."""
    shutil.copytree(src, dst)
    machine = json.loads((dst / "machine.json").read_text())
    machine["emulation"] = EMULATION
    machine["cpu_slug"] = machine.get("cpu_slug", "cpu") + "-emulated"
    (dst / "machine.json").write_text(json.dumps(machine))
    for sidecar_path in dst.glob("*.json"):
        if sidecar_path.name == "machine.json":
            continue
        sidecar = json.loads(sidecar_path.read_text())
        sidecar["machine"] = machine
        if in_rows and "summary" in sidecar.get("schema", {}):
            columns = sidecar["schema"]["summary"]["columns"]
            if not any(c["name"] == "emulated" for c in columns):  # a file written before the harness wrote it
                columns.append({"name": "emulated", "description": "emulator"})
            csv = dst / sidecar_path.name.replace(".json", ".summary.csv")
            frame = pd.read_csv(csv, dtype=str, keep_default_na=False)
            frame["emulated"] = LABEL
            frame.to_csv(csv, index=False)
        sidecar_path.write_text(json.dumps(sidecar))
    return dst


@pytest.fixture
def runs(tmp_path):
    """results/<cpu>/ with a native run and, later, the same run made under emulation."""
    root = tmp_path / "results"
    (root / "README.md").parent.mkdir(parents=True)
    (root / "README.md").write_text("dispatchlab results\n")
    cpu = root / "icx-6-106"
    native = cpu / "20261201T000000Z-aaaaaaaaaaaa"
    shutil.copytree(FIXTURES / "run-models", native)
    emulated = emulated_copy(FIXTURES / "run-models", cpu / "20261202T000000Z-bbbbbbbbbbbb", in_rows=True)
    return root, native, emulated


def test_emulation_is_read_from_rows_and_from_the_fingerprint(runs, tmp_path):
    _, native, emulated = runs
    assert run_emulation(load_run(native)) == ""
    assert machine_emulation(load_run(native).machine) == ""
    run = load_run(emulated)
    assert run_emulation(run) == LABEL
    assert experiment_emulation(run.experiments["models"]) == LABEL
    # A run whose rows predate the column still says so through its fingerprint.
    sidecar_only = load_run(emulated_copy(FIXTURES / "run-models", tmp_path / "sidecar-only", in_rows=False))
    assert "emulated" not in sidecar_only.experiments["models"].summary.columns
    assert run_emulation(sidecar_only) == LABEL
    kept, left_out = without_emulated(run)
    assert kept.experiments == {} and set(left_out) == {"models", "models_valgrind", "models_simulated"}


def test_the_rfc_table_leaves_emulated_runs_out_saying_so(runs):
    _, native, emulated = runs
    table = rfc_change_table([load_run(native), load_run(emulated)], labels=["native", "under-qemu"])
    header = table.splitlines()[0]
    assert "native" in header and "under-qemu" not in header
    assert "under-qemu: left out, made under emulation (qemu-user (hypervisor-leaf, comm)): not a measurement" in table


def test_latest_runs_takes_the_latest_native_run(runs):
    root, native, emulated = runs
    assert emulated.name > native.name  # the emulated run is the newer one
    assert [r.path for r in latest_runs(root)] == [native]


def test_the_report_of_an_emulated_run_has_no_timed_table(runs):
    _, _, emulated = runs
    text = report.write_report(emulated).read_text()
    assert "**yes: qemu-user (hypervisor-leaf, comm)**" in text
    assert "Left out: measured under emulation (qemu-user (hypervisor-leaf, comm))" in text
    assert "## Left out: made under emulation" in text
    assert "### stack" not in text and "## Figures" not in text and "## Knees" not in text
    assert not (emulated / "figures").exists() or not any((emulated / "figures").iterdir())


def test_the_fleet_report_leaves_emulated_runs_out(runs):
    root, native, emulated = runs
    outcomes = [fleet.HostOutcome("real", "ok", "", [str(native.relative_to(root))]),
                fleet.HostOutcome("ci", "ok", "", [str(emulated.relative_to(root))])]
    text = fleet.fleet_report("f1", outcomes, root)
    assert "1 run made under emulation, never a measurement, left out of every table below" in text
    rfc = text.split("## Change against `vec` per run (RFC table)", 1)[1]
    assert "@ real" in rfc and "@ ci" not in rfc


def run(cmd, **kw):
    return subprocess.run([str(c) for c in cmd], capture_output=True, text=True, **kw)


@pytest.mark.skipif(shutil.which("qemu-x86_64-static") is None, reason="qemu-x86_64-static not installed (apt-get install qemu-user-static)")
def test_dlab_under_qemu_user_is_never_a_measurement(dlab_bin, tmp_path):
    """The real check: this x86-64 dlab under qemu-x86_64-static (qemu-user emulating the host's own
    architecture is still emulation)."""
    qemu = shutil.which("qemu-x86_64-static")
    machine = json.loads(run([qemu, dlab_bin, "machine", "--json"], check=True).stdout)
    assert machine["emulation"]["emulated"] is True and machine["emulation"]["emulator"] == "qemu-user"
    methods = {e["method"] for e in machine["emulation"]["evidence"] if e["decisive"]}
    assert {"hypervisor-leaf", "cpuid-vs-cpuinfo", "comm"} <= methods, methods
    assert machine["tsc"]["core_cycles_per_tick_estimate"] is None
    assert machine["tsc"]["estimate_refused"].startswith("emulated: qemu-user (")
    assert machine["tsc"]["cross_check"]["chains"] == []
    assert machine["cpu_slug"].endswith("-emulated")
    # Natively the same binary is not emulated (on this x86-64 host).
    assert json.loads(run([dlab_bin, "machine", "--json"], check=True).stdout)["emulation"]["emulated"] is False

    out = run([qemu, dlab_bin, "calibrate", "--quick", "--iterations", "20000", "--results", tmp_path / "results"], check=True)
    (run_dir,) = (tmp_path / "results").glob("*-emulated/*")
    summary = load_run(run_dir).experiments["calibrate"].summary
    assert (summary["emulated"].str.startswith("qemu-user (")).all()
    est = summary[summary["metric"] == "cycles_tsc_estimate"]
    assert (est["n"] == 0).all() and est["unavailable_reason"].str.contains("emulated: qemu-user").all()
    (tmp_path / "results" / "README.md").write_text("results\n")
    text = report.write_report(run_dir).read_text()
    assert "Left out: measured under emulation (qemu-user (" in text, out.stderr


@pytest.mark.skipif(shutil.which("qemu-x86_64-static") is None, reason="qemu-x86_64-static not installed (apt-get install qemu-user-static)")
def test_wasm_run_under_qemu_user_says_it_is_emulated(dlab_bin):
    kernels = str(Path(dlab_bin).parent / "interpreter" / "workloads" / "kernels_cmd.wasm")
    got = run([shutil.which("qemu-x86_64-static"), dlab_bin, "wasm", "run", kernels, "--", "fib", "10", "1"])
    assert got.returncode == 0, got.stderr
    assert got.stderr.startswith("dlab: note: running under emulation (qemu-user): times here are the translator's")
    assert got.stdout.startswith("checksum ")  # the guest's output is its own
    native = run([dlab_bin, "wasm", "run", kernels, "--", "fib", "10", "1"])
    assert native.stderr == "" and native.stdout == got.stdout


@pytest.mark.skipif(shutil.which("valgrind") is None, reason="valgrind not installed (./tools/bootstrap installs it)")
def test_valgrind_is_named_as_itself_and_its_cachegrind_children_print_no_note(dlab_bin):
    # valgrind answers CPUID with a made-up CPU and maps no vDSO, which alone would read as qemu-user
    got = run(["valgrind", "-q", "--tool=none", dlab_bin, "machine", "--json"])
    assert got.returncode == 0, got.stderr
    emulation = json.loads(got.stdout)["emulation"]
    assert emulation["emulated"] and emulation["emulator"] == "valgrind", emulation
    assert any(e["method"] == "maps" and "vgpreload" in e["detail"] for e in emulation["evidence"])
    kernels = str(Path(dlab_bin).parent / "interpreter" / "workloads" / "kernels_cmd.wasm")
    child = run(["valgrind", "-q", "--tool=none", dlab_bin, "wasm", "run", kernels, "--", "fib", "5", "1"])
    assert child.returncode == 0 and child.stderr == "", child.stderr  # how the cachegrind cases run it
