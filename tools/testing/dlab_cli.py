"""Helpers for the pytest files that run the dlab binary (analysis/tests, interpreter/tests/cli,
harness/tests/cli; the repository's conftest.py puts this folder on sys.path): the kernels module
beside dlab, one run of it, and the checks the hostile-input tests make of a refusal."""
import subprocess
from pathlib import Path

TIMEOUT = 60  # seconds: a hang is a failure, not a stuck CI

# Text only a library's own message has (an exception that escaped, a container's range check,
# CLI11's or Python's raw words): never part of one of dlab's errors (docs/errors.md). Each check
# below looks for its own list.
RAW = ("terminate called", "std::", "_M_range_check", "Traceback", "basic_string", "vector::")
RAW_ONE_ERROR = ("terminate called", "std::", "Traceback", "basic_string", "not in range", "Could not convert")


def kernels(dlab_bin) -> str:
    """The workload kernels (interpreter/workloads/kernels.c) built for wasm32-wasi beside dlab."""
    return str(Path(dlab_bin).parent / "interpreter" / "workloads" / "kernels.wasm")


def run(dlab_bin, *args, timeout=300):
    """dlab with these arguments (an argument vector, no shell), its output captured as text."""
    return subprocess.run([str(dlab_bin), *args], capture_output=True, text=True, timeout=timeout)


def run_dlab(dlab_bin, args, **kw):
    """dlab with the argument list `args`, its output captured as text (unless kw says otherwise),
    within TIMEOUT."""
    kw.setdefault("capture_output", True)
    return subprocess.run([str(dlab_bin), *args], text=True, timeout=TIMEOUT, **kw)


def alive(pid: int) -> bool:
    """Running (a zombie waiting for a reaper is not)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, IndexError):
        return False
    return state != "Z"


def assert_clean(out, status, text):
    """Exit `status`, `text` on stderr, no raw library text (RAW)."""
    assert out.returncode == status, (out.returncode, out.stderr[-800:])
    assert text in out.stderr, out.stderr[-800:]
    for raw in RAW:
        assert raw not in out.stderr, out.stderr[-800:]


def assert_one_error(out, status, text):
    """Exit `status` and exactly one line on stderr, containing `text`, no raw library text (RAW_ONE_ERROR)."""
    assert out.returncode == status, (out.returncode, out.stderr[-800:])
    lines = out.stderr.splitlines()
    assert len(lines) == 1, out.stderr[-800:]
    assert text in lines[0], out.stderr[-800:]
    for raw in RAW_ONE_ERROR:
        assert raw not in out.stderr, out.stderr[-800:]


def step_csv(path: Path, y_scale: float = 1.0, x_scale: float = 1.0, header: str = "x,y") -> Path:
    """`dlab knee` input: five noisy samples per x of a step from 1 to 3 between x = 19 and 22."""
    rows = [header]
    for i, x in enumerate([5, 8, 11, 13, 15, 17, 19, 22, 26, 30, 35, 40, 45]):
        for k in range(5):
            noise = ((i * 5 + k) * 7919 % 101 - 50) / 1000.0
            rows.append(f"{x * x_scale!r},{((1.0 if x < 20 else 3.0) + noise) * y_scale!r}")
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return path
