"""Helpers for the tests that run the dlab binary: the kernels module beside it, and one run."""
import subprocess
from pathlib import Path


def kernels(dlab_bin) -> str:
    """The workload kernels (interpreter/workloads/kernels.c) built for wasm32-wasi beside dlab."""
    return str(Path(dlab_bin).parent / "interpreter" / "workloads" / "kernels.wasm")


def run(dlab_bin, *args, timeout=300):
    """dlab with these arguments (an argument vector, no shell), its output captured as text."""
    return subprocess.run([str(dlab_bin), *args], capture_output=True, text=True, timeout=timeout)
