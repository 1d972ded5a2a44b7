"""tools/time_budget.py: the set-up time report read from a build folder's own logs (.ninja_log,
CTestCostData.txt, pytest's JUnit XML, `just test`'s phases file). Run on small made-up folders:
nothing is timed here."""
import json
import subprocess
import sys
from pathlib import Path

import pytest

TOOL = Path(__file__).resolve().parents[2] / "tools" / "time_budget.py"
sys.path.insert(0, str(TOOL.parent))
import time_budget  # noqa: E402

NINJA_LOG = """# ninja log v5
0\t30000\t1\tinterpreter/CMakeFiles/dlab_wasm.dir/generated/dispatch_goto.cc.o\th1
0\t5000\t1\tharness/CMakeFiles/dlab_harness.dir/src/knee.cc.o\th2
5000\t7000\t1\tharness/tests/CMakeFiles/knee_test.dir/knee_test.cc.o\th3
7000\t8000\t1\tharness/CMakeFiles/dlab_harness.dir/src/knee.cc.o\th4
8000\t8500\t1\tdlab\th5
"""


def build_folder(tmp_path, ninja=NINJA_LOG):
    b = tmp_path / "build"
    (b / "Testing" / "Temporary").mkdir(parents=True)
    (b / ".ninja_log").write_text(ninja)
    (b / "Testing" / "Temporary" / "CTestCostData.txt").write_text(
        "interpreter.spec_tail 1 12.5\nharness.knee 3 0.25\n"
        "Every/RuntimeTest.Words/switch  # GetParam() = 1-byte object <00> 1 0.035\n---\ninterpreter.spec_tail\n")
    (b / "pytest-junit.xml").write_text(
        '<testsuites><testsuite><testcase classname="t.a" name="x" time="2.5"/>'
        '<testcase classname="t.b" name="y" time="0.5"/></testsuite></testsuites>')
    (b / "test-phases.txt").write_text("build 400\nctest 90.5\npytest 60\n")
    return b


def test_areas_steps_and_the_last_entry_per_output(tmp_path):
    report = time_budget.collect(build_folder(tmp_path))
    areas = {a: (n, sec) for a, n, sec in time_budget.by_area(report.steps)}
    assert areas["interpreter engines (generated dispatch TUs)"] == (1, 30.0)
    # knee.cc was built twice: only its last build (1 s) counts
    assert areas["harness library"] == (1, 1.0)
    assert areas["harness tests"] == (1, 2.0)
    assert areas["links"] == (1, 0.5)
    assert report.ctest == [("interpreter.spec_tail", 12.5), ("harness.knee", 0.25),
                           ("Every/RuntimeTest.Words/switch  # GetParam() = 1-byte object <00>", 0.035)]
    assert report.pytest == [("t.a::x", 2.5), ("t.b::y", 0.5)]
    assert report.phases == {"build": 400.0, "ctest": 90.5, "pytest": 60.0}


def test_the_report_names_the_machine_the_phases_and_the_slowest(tmp_path):
    out = subprocess.run([sys.executable, str(TOOL), str(build_folder(tmp_path)), "--top", "1",
                          "--json", str(tmp_path / "b.json")], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("Machine running this report: ")
    assert "| **all** | **9 min 10 s** |" in out.stdout
    assert "| `interpreter/CMakeFiles/dlab_wasm.dir/generated/dispatch_goto.cc.o` | 30.0 |" in out.stdout
    assert "knee.cc.o` |" not in out.stdout  # --top 1
    assert "| `interpreter.spec_tail` | 12.5 |" in out.stdout
    data = json.loads((tmp_path / "b.json").read_text())
    assert data["build"]["step_seconds"] == pytest.approx(33.5)
    assert data["ctest"]["harness.knee"] == 0.25


def test_missing_logs_are_said_not_invented(tmp_path):
    b = tmp_path / "empty"
    b.mkdir()
    out = subprocess.run([sys.executable, str(TOOL), str(b)], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert "no " + str(b / ".ninja_log") in out.stdout
    assert "step-seconds" not in out.stdout


@pytest.mark.parametrize("log,where", [
    ("not a log\n", ".ninja_log:1: not a ninja log"),
    ("# ninja log v5\n0\t10\t1\tx.o\n", ".ninja_log:2: expected 5 tab-separated fields"),
    ("# ninja log v5\n0\tten\t1\tx.o\th\n", ".ninja_log:2: start and end must be integers"),
    ("# ninja log v5\n10\t5\t1\tx.o\th\n", ".ninja_log:2: ends (5 ms) before it starts"),
])
def test_a_malformed_log_is_an_error_with_its_line(tmp_path, log, where):
    out = subprocess.run([sys.executable, str(TOOL), str(build_folder(tmp_path, log))], capture_output=True, text=True)
    assert out.returncode == 1
    assert where in out.stderr
    assert "Traceback" not in out.stderr


def test_a_pytest_case_without_its_time_is_an_error_not_zero(tmp_path):
    b = build_folder(tmp_path)
    (b / "pytest-junit.xml").write_text('<testsuites><testsuite><testcase classname="t.a" name="x"/></testsuite></testsuites>')
    out = subprocess.run([sys.executable, str(TOOL), str(b)], capture_output=True, text=True)
    assert out.returncode == 1
    assert "pytest-junit.xml: test case 't.a::x' has no time in seconds" in out.stderr


def test_a_missing_folder_and_a_bad_option_are_usage_errors(tmp_path):
    out = subprocess.run([sys.executable, str(TOOL), str(tmp_path / "nope")], capture_output=True, text=True)
    assert out.returncode == 2 and "is not a folder" in out.stderr
    out = subprocess.run([sys.executable, str(TOOL), str(tmp_path), "--top", "0"], capture_output=True, text=True)
    assert out.returncode == 2 and "--top must be at least 1" in out.stderr


def test_phases_that_ran_side_by_side_count_once_in_the_total(tmp_path):
    b = build_folder(tmp_path)
    (b / "test-phases.txt").write_text("build 400\ntests 150\nctest 100 within tests\npytest 140 within tests\n")
    report = time_budget.collect(b)
    assert report.within == {"ctest": "tests", "pytest": "tests"}
    text = time_budget.markdown(report)
    assert "| **all** | **9 min 10 s** |" in text  # 400 + 150: ctest and pytest are inside `tests`
    assert "| pytest (within tests) | 2 min 20 s |" in text


@pytest.mark.parametrize("text", ["build 400 within\n", "ctest 10 within tests\n", "a 1\nb 2 within a\nc 3 within b\n",
                                  "build 4 beside x\n"])
def test_a_malformed_phases_file_says_where(tmp_path, text):
    (tmp_path / "p.txt").write_text(text)
    with pytest.raises(time_budget.BudgetError, match="p.txt"):
        time_budget.read_phases(tmp_path / "p.txt")
