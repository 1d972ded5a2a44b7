"""Fixtures of the `dlab wasm` command line's tests: io.c (interpreter/tests/programs/io.c: standard
input, files, folders, writes) built for wasm32-wasi and natively, once per session."""
import subprocess
from pathlib import Path

import pytest

SOURCE = Path(__file__).resolve().parents[1] / "programs" / "io.c"


@pytest.fixture(scope="session")
def io_programs(tmp_path_factory):
    """(io.wasm, io.native): the same C for WASI (Debian's wasi-libc) and for this machine."""
    if not Path("/usr/lib/wasm32-wasi/libc.a").exists():
        pytest.skip("wasi-libc is missing: ./tools/bootstrap installs it")
    out = tmp_path_factory.mktemp("io")
    wasm, native = out / "io.wasm", out / "io.native"
    subprocess.run(["clang-19", "--target=wasm32-wasi", "--sysroot=/usr", "-O2", str(SOURCE), "-o", str(wasm)], check=True)
    subprocess.run(["clang-19", "-O2", str(SOURCE), "-o", str(native)], check=True)
    return wasm, native
