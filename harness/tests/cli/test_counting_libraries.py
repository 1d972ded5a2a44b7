"""libpfm4 and PAPI are opened when dlab first counts (harness/src/shared_library.h), not at its
start-up: a command that counts nothing, such as `dlab wasm run`, never loads them (they carry
most of the dynamic loader's work at start-up), and one that counts still finds them."""
import os
import shutil
import subprocess

import pytest

from dlab_cli import TIMEOUT

# (module (func (export "_start"))): a WASI command that does nothing
START_MODULE = bytes.fromhex("0061736d01000000" "010401600000" "03020100" "070a01065f73746172740000" "0a040102000b")


def loaded_libraries(dlab_bin, args, tmp_path):
    # glibc's LD_DEBUG=files names every shared object the process loads, dlopen included
    out = subprocess.run([str(dlab_bin), *args], capture_output=True, text=True, timeout=TIMEOUT,
                         env={**os.environ, "LD_DEBUG": "files", "LD_DEBUG_OUTPUT": str(tmp_path / "ld")}, cwd=tmp_path)
    logs = "".join(p.read_text() for p in tmp_path.glob("ld.*"))
    if "file=" not in logs:
        pytest.skip("this C library does not write LD_DEBUG=files (not glibc)")
    return out, logs


def test_the_counting_libraries_are_not_needed_at_start_up(dlab_bin):
    if not shutil.which("readelf"):
        pytest.skip("no readelf")
    dynamic = subprocess.run(["readelf", "-d", str(dlab_bin)], capture_output=True, text=True, timeout=60).stdout
    needed = [line for line in dynamic.splitlines() if "(NEEDED)" in line]
    assert needed, dynamic[:500]
    assert not [n for n in needed if "libpfm" in n or "libpapi" in n], needed


def test_running_a_module_loads_neither_and_counting_loads_both(dlab_bin, tmp_path):
    (tmp_path / "start.wasm").write_bytes(START_MODULE)
    out, logs = loaded_libraries(dlab_bin, ["wasm", "run", "start.wasm"], tmp_path)
    assert out.returncode == 0, out.stderr
    assert "libpfm" not in logs and "libpapi" not in logs
    for p in tmp_path.glob("ld.*"):
        p.unlink()
    out, logs = loaded_libraries(dlab_bin, ["counters"], tmp_path)
    assert out.returncode == 0, out.stderr
    assert "libpfm" in logs and "libpapi" in logs
    assert "could not be loaded" not in out.stdout + out.stderr
