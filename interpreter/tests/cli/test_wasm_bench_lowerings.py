"""The lowering's speed techniques as a bench axis: a small live run (seconds) and what the report
makes of it. No machine-specific number is asserted."""
import subprocess
from pathlib import Path

import pytest

from dispatchlab_analysis import tables
from dispatchlab_analysis.results import load_run, with_params


@pytest.fixture(scope="module")
def lowering_run(dlab_bin, tmp_path_factory):
    root = tmp_path_factory.mktemp("results")
    run_dir = subprocess.run([dlab_bin, "new-run", "--results", root], check=True, capture_output=True, text=True).stdout.strip()
    subprocess.run([dlab_bin, "wasm", "bench", "--quick", "--lowerings", "plain,fold,fuse,fold+fuse", "--dispatch", "tail", "--placements",
                    "sp_wt", "--workloads", "crc32,coremix", "--samples", "3", "--name", "wasm_lowering", "--run-dir", run_dir],
                   check=True, capture_output=True, text=True)
    return Path(run_dir)


@pytest.mark.compared
def test_every_lowering_runs_with_equal_checksums_and_is_recorded(lowering_run):
    run = load_run(lowering_run)
    df = with_params(run.experiments["wasm_lowering"].summary)
    engines = df[df["dispatch"] != "native"]
    assert set(engines["lowering"]) == {"plain", "fold", "fuse", "fold+fuse"}
    for g in run.experiments["wasm_lowering"].sidecar["groups"]:
        assert g["baseline"].endswith("/tail/plain")
        assert len(set(df[df["workload"] == g["workload"]]["checksum"])) == 1


@pytest.mark.compared
def test_the_report_gives_each_technique_its_change_and_every_configuration_its_speed_against_native(lowering_run):
    md = tables.lowering_markdown(load_run(lowering_run))
    assert "| engine/lowering | crc32 | coremix |" in md
    assert "| engine/lowering | crc32 | coremix | geomean |" in md
    plain = next(line for line in md.splitlines() if line.startswith("| tail/plain |"))
    assert "baseline" in plain
    speed = [line for line in md.splitlines() if line.startswith("| tail/fold+fuse |")][-1]
    assert speed.count("| 1/") == 3  # two workloads and the geometric mean
