"""Every run the README or docs/findings.md quotes (issue 49: "every published number re-takeable")
is committed under results/, was made from a clean tree (no -dirty in its name), and records the
command that wrote it in a sidecar (`command`, with the recipe step where a recipe ran it). A
quoted run is written out whole, results/<cpu>/<timestamp>-<commit>, so that this test finds it."""
import json
import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
QUOTING = ["README.md", "docs/findings.md"]
RUN = re.compile(r"results/[a-z0-9][a-z0-9-]*/\d{8}T\d{6}Z-[0-9a-f]+(?:-dirty)?")
# An abbreviated run name ("...T154428Z-6c06d569f656") that no path-based check would find.
ABBREVIATED = re.compile(r"\.\.\.T?\d{6}Z-[0-9a-f]{6,}")


def quoted_runs(text: str) -> list[str]:
    return sorted(set(RUN.findall(text)))


def recorded_command(run_dir: Path) -> dict | None:
    """The first sidecar's `command` (every experiment's sidecar has one since they were recorded)."""
    for sidecar in sorted(run_dir.glob("*.json")):
        if sidecar.name == "machine.json":
            continue
        command = json.loads(sidecar.read_text()).get("command")
        if command:
            return command
    return None


@pytest.mark.parametrize("doc", QUOTING)
def test_every_quoted_run_is_committed_clean_and_says_its_command(doc):
    text = (REPO / doc).read_text()
    for run in quoted_runs(text):  # the README may quote none (its tables point to findings.md)
        assert not run.endswith("-dirty"), f"{doc} quotes {run}, made from a tree with uncommitted changes"
        path = REPO / run
        assert path.is_dir(), f"{doc} quotes {run}, which is not under results/"
        command = recorded_command(path)
        assert command and command.get("argv"), f"{doc} quotes {run}, whose sidecars record no command"
    assert not ABBREVIATED.search(text), f"{doc} abbreviates a run's name: write results/<cpu>/<run> whole"


def test_findings_quotes_runs():
    assert quoted_runs((REPO / "docs" / "findings.md").read_text())


def test_the_check_finds_runs_and_refuses_what_it_should(tmp_path):
    text = ("`results/zen5-26-2/20261207T154349Z-6c06d569f656` and results/icx/20260101T000000Z-abc123-dirty, "
            "then ...T154428Z-6c06d569f656")
    assert quoted_runs(text) == ["results/icx/20260101T000000Z-abc123-dirty", "results/zen5-26-2/20261207T154349Z-6c06d569f656"]
    assert ABBREVIATED.search(text)
    run = tmp_path / "run"
    run.mkdir()
    (run / "machine.json").write_text("{}")
    (run / "models.json").write_text(json.dumps({"schema": 3}))
    assert recorded_command(run) is None
    (run / "wasm.json").write_text(json.dumps({"command": {"argv": ["dlab", "wasm", "bench"]}}))
    assert recorded_command(run) == {"argv": ["dlab", "wasm", "bench"]}
