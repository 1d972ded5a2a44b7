"""The analysis package's own fixtures: recorded run directories. The fixtures every test folder
uses (dlab_bin, wat) are in the repository's conftest.py."""
import shutil
from pathlib import Path

import pytest

FIXTURES = Path(__file__).parent / "fixtures"


@pytest.fixture
def fixture_run(tmp_path):
    """A copy of a real run directory (recorded on an Ice Lake VM without a PMU)."""
    dst = tmp_path / "run-icx"
    shutil.copytree(FIXTURES / "run-icx", dst)
    return dst
