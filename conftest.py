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


@pytest.fixture(scope="session")
def dlab_bin():
    """The dlab binary: $DLAB_BIN (set by `just test`) or the release build."""
    path = Path(os.environ.get("DLAB_BIN", REPO / "build" / "release" / "dlab"))
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
