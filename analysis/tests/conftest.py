import os
import shutil
import subprocess
from pathlib import Path

import pytest

FIXTURES = Path(__file__).parent / "fixtures"
REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def fixture_run(tmp_path):
    """A copy of a real run directory (recorded on an Ice Lake VM without a PMU)."""
    dst = tmp_path / "run-icx"
    shutil.copytree(FIXTURES / "run-icx", dst)
    return dst


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
