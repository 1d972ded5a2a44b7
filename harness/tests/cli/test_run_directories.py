"""Run directories and result folders (docs/errors.md, *Results are never half-written*): an
experiment that exists already, a run directory that is missing and an output folder that cannot
be made are refused before anything is measured, and a run directory's name reaches a child
program as an argument, never as shell text."""
import json
import os
import subprocess
from pathlib import Path

import pytest

from dlab_cli import run_dlab


def test_an_existing_experiment_is_refused_before_measuring_and_nothing_is_written(dlab_bin, tmp_path):
    run_dir = Path(run_dlab(dlab_bin, ["new-run", "--results", str(tmp_path)]).stdout.strip())
    assert (run_dir / "machine.json").exists()  # a run directory is born with its fingerprint
    (run_dir / "calibrate.json").write_text("{}\n")
    out = run_dlab(dlab_bin, ["calibrate", "--quick", "--run-dir", str(run_dir)])
    assert out.returncode == 1 and "calibrate.json exists" in out.stderr
    assert "[calibrate] sample" not in out.stderr  # refused before the first sample
    assert sorted(p.name for p in run_dir.iterdir()) == ["calibrate.json", "machine.json"]


def test_a_missing_run_dir_is_refused_before_measuring(dlab_bin, tmp_path):
    out = run_dlab(dlab_bin, ["models", "--valgrind", "--model", "kcopy", "--copies", "1", "--run-dir", str(tmp_path / "missing")])
    assert out.returncode == 1 and "is not a run directory" in out.stderr
    assert "[models --valgrind]" not in out.stderr


def test_probes_refuse_an_unwritable_output_folder_first(dlab_bin, tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    out = run_dlab(dlab_bin, ["probes", "--targets", "x86_64-linux-gnu", "--skip-placement", "--out", str(blocker / "sub")])
    assert out.returncode == 1 and "cannot create" in out.stderr
    assert "[probes] register budget" not in out.stderr


def test_gbench_run_directory_is_passed_as_an_argument_not_shell_text(dlab_bin, tmp_path):
    hostile = tmp_path / "a';touch INJECTED;'"
    hostile.mkdir()
    out = run_dlab(dlab_bin, ["models", "--gbench", "--model", "stack", "--stack-copies", "1", "--statements", "16",
                              "--mode-placements", "none", "--placements", "sp", "--samples", "1", "--run-dir", str(hostile)],
                   cwd=tmp_path)
    assert out.returncode == 0, out.stderr[-500:]
    assert not (tmp_path / "INJECTED").exists()
    assert (hostile / "models.gbench.json").exists()


def _tree_is_dirty() -> bool:
    repo = Path(__file__).resolve().parents[3]
    out = subprocess.run(["git", "-C", str(repo), "status", "--porcelain", "--untracked-files=no"],
                         capture_output=True, text=True, timeout=60)
    if out.returncode != 0:
        pytest.skip(f"git cannot read the checkout: {out.stderr.strip()[:200]}")
    return bool(out.stdout.strip())


def test_new_run_require_clean_refuses_exactly_a_dirty_tree(dlab_bin, tmp_path):
    # What the publishing recipes pass (Justfile's new_run): a run from uncommitted changes
    # could not be re-taken, so none is started; a clean tree's run is named without -dirty.
    out = run_dlab(dlab_bin, ["new-run", "--require-clean", "--results", str(tmp_path)])
    if _tree_is_dirty():
        assert out.returncode == 1 and "uncommitted changes" in out.stderr and "DLAB_ALLOW_DIRTY=1" in out.stderr
        assert not any(tmp_path.iterdir()), "nothing is created"
    else:
        assert out.returncode == 0, out.stderr
        assert not out.stdout.strip().endswith("-dirty")


def test_every_sidecar_records_the_command_that_wrote_it(dlab_bin, tmp_path):
    run_dir = Path(run_dlab(dlab_bin, ["new-run", "--results", str(tmp_path)]).stdout.strip())
    out = run_dlab(dlab_bin, ["counters", "--run-dir", str(run_dir)], env={**os.environ, "DLAB_RECIPE": "rfc",
                                                                          "DLAB_RECIPE_STEP": "counters"})
    assert out.returncode == 0, out.stderr
    command = json.loads((run_dir / "counters.json").read_text())["command"]
    assert command["argv"][1:] == ["counters", "--run-dir", str(run_dir)]
    assert (command["recipe"], command["recipe_step"]) == ("rfc", "counters")
