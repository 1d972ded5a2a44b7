"""Fixtures for every pytest folder (pytest.ini's testpaths: analysis/tests, the analysis package's
own tests; interpreter/tests/cli and harness/tests/cli, dlab's command line): the dlab binary and
WebAssembly text assembled by wabt. The helpers those tests import (`dlab_cli`: run, run_dlab,
kernels, assert_clean, ...) live in tools/testing/, put on sys.path here. Fixtures of one folder
only stay in its own conftest.py (analysis/tests: the recorded fixture runs)."""
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent
sys.path.insert(0, str(REPO / "tools" / "testing"))


def _dlab_path() -> Path:
    return Path(os.environ.get("DLAB_BIN", REPO / "build" / "release" / "dlab"))


_compared_built: dict[Path, bool] = {}


def compared_engines_built(dlab: Path) -> bool:
    """Whether this dlab has the engines only the measurements compare: `dlab wasm engines` says
    whether its tail_vec row (one of engines.def's COMPARED rows) is built."""
    if dlab not in _compared_built:
        out = subprocess.run([str(dlab), "wasm", "engines"], capture_output=True, text=True, timeout=60)
        rows = {line.split()[0]: line for line in out.stdout.splitlines()[1:] if line.split()}
        if out.returncode != 0 or "tail_vec" not in rows:
            raise RuntimeError(f"`{dlab} wasm engines` did not list tail_vec: {out.stderr.strip()}")
        _compared_built[dlab] = rows["tail_vec"].split()[5] == "built"
    return _compared_built[dlab]


def pytest_runtest_setup(item):
    if item.get_closest_marker("compared") is None:
        return
    dlab = _dlab_path()
    if dlab.exists() and not compared_engines_built(dlab):
        pytest.skip("needs the engines only the measurements compare, which this build leaves out: "
                    "`just test-compared` builds them and runs this test")


@pytest.fixture(scope="session")
def dlab_bin():
    """The dlab binary: $DLAB_BIN (set by `just test`) or the release build."""
    path = _dlab_path()
    if not path.exists():
        pytest.skip(f"{path} not built; run `just build` (or `just test`, which builds first)")
    return path


@pytest.fixture
def wat(tmp_path):
    """wat(source, name) -> a .wasm assembled from WebAssembly text by wabt's wat2wasm, in tmp_path."""
    def build(source: str, name: str = "m") -> Path:
        src, out = tmp_path / f"{name}.wat", tmp_path / f"{name}.wasm"
        src.write_text(source)
        subprocess.run(["wat2wasm", str(src), "-o", str(out)], check=True)
        return out
    return build
