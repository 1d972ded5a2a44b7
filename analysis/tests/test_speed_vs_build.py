"""tools/speed_vs_build.py: two dlab builds' benches alternated and compared case by case. Run
against fake dlab binaries (scripts that write a summary file), so nothing is timed here."""
import subprocess
import sys
from pathlib import Path

import pytest

TOOL = Path(__file__).resolve().parents[2] / "tools" / "speed_vs_build.py"

FAKE = """#!{python}
import sys, pathlib
a = sys.argv[1:]
if a[0] == "new-run":
    d = pathlib.Path(a[a.index("--results") + 1]) / "run"
    d.mkdir(parents=True, exist_ok=True)
    print(d)
    sys.exit(0)
name, run = a[a.index("--name") + 1], pathlib.Path(a[a.index("--run-dir") + 1])
(run / (name + ".summary.csv")).write_text("variant,metric,median\\nfib/tail,tsc_ticks,{ticks}\\nfib/native,tsc_ticks,50\\n")
"""


def fake(tmp_path, name, ticks):
    p = tmp_path / name
    p.write_text(FAKE.format(python=sys.executable, ticks=ticks))
    p.chmod(0o755)
    return str(p)


@pytest.mark.parametrize("after_ticks,code", [(101, 0), (99, 0), (110, 1)])
def test_change_per_case_and_the_exit_status(tmp_path, after_ticks, code):
    out = subprocess.run([sys.executable, str(TOOL), "--before", fake(tmp_path, "old", 100), "--after", fake(tmp_path, "new", after_ticks),
                          "--rounds", "2", "--results", str(tmp_path / "results"), "--absolute", "--", "--quick"], capture_output=True, text=True)
    assert out.returncode == code, out.stderr
    change = after_ticks / 100 - 1
    assert f"| fib/tail | {change:+.2%} |" in out.stdout
    assert (tmp_path / "results" / "run" / "speed_vs_build.md").exists()
    assert (tmp_path / "results" / "run" / "wasm_speed_before_2.summary.csv").exists()


def test_bad_input_is_refused(tmp_path):
    out = subprocess.run([sys.executable, str(TOOL), "--before", str(tmp_path / "none"), "--after", str(tmp_path / "none")],
                         capture_output=True, text=True)
    assert out.returncode == 2 and "is not a file" in out.stderr
    old = fake(tmp_path, "old", 100)
    out = subprocess.run([sys.executable, str(TOOL), "--before", old, "--after", old, "--rounds", "0"], capture_output=True, text=True)
    assert out.returncode == 2 and "--rounds" in out.stderr


def test_per_native_divides_by_the_runs_native_case(tmp_path):
    # after: tail 110 but native also 10% slower (55): no change once divided by native
    new = fake(tmp_path, "new", 110).replace("", "")
    text = Path(new).read_text().replace("fib/native,tsc_ticks,50", "fib/native,tsc_ticks,55")
    Path(new).write_text(text)
    out = subprocess.run([sys.executable, str(TOOL), "--before", fake(tmp_path, "old", 100), "--after", new, "--rounds", "1",
                          "--results", str(tmp_path / "results")], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert "| fib/tail | +0.00% |" in out.stdout and "fib/native" not in out.stdout.split("|---|")[1]
