import os
import shutil
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
