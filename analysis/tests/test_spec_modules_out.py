"""dlab wasm spec --modules-out (the fuzzer's seeds): every module of the suite's binary scripts
as a file, named by the script's path, so scripts of one name in two folders do not collide."""
import subprocess
from pathlib import Path

import pytest

SUITE = Path(__file__).resolve().parents[3] / "shared" / "wasm-spec-3.0"


def test_scripts_of_one_name_in_two_folders_get_their_own_files(dlab_bin, tmp_path):
    if not SUITE.is_dir():
        pytest.skip(f"{SUITE} not here")
    out = tmp_path / "corpus"
    run = subprocess.run([str(dlab_bin), "wasm", "spec", "--suite", str(SUITE), "--only", "memory_grow", "--modules-out", str(out)],
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    names = sorted(p.name for p in out.iterdir())
    assert any(n.startswith("binary_memory_grow-") for n in names), names[:5]
    assert any(n.startswith("binary_multi-memory_memory_grow-") for n in names), names[:5]
    again = subprocess.run([str(dlab_bin), "wasm", "spec", "--suite", str(SUITE), "--only", "memory_grow", "--modules-out", str(out)],
                           capture_output=True, text=True, timeout=120)
    assert again.returncode != 0 and "is not an empty folder" in again.stderr
