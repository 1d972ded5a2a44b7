"""runs_diff: a deterministic metric compared case by case across two runs."""
import pandas as pd
import pytest

from dispatchlab_analysis import runs_diff


def frame(rows, params="size=24"):
    return pd.DataFrame([{"case": v, "params": params, "metric": m, "backend": b, "n": 1, "median": x} for v, m, b, x in rows])


def test_change_per_case_and_cases_in_one_run_only():
    before = frame([("fib/tail", "cg_instructions", "valgrind", 100.0), ("sort/tail", "cg_instructions", "valgrind", 200.0),
                    ("gone/tail", "cg_instructions", "valgrind", 5.0)])
    after = frame([("fib/tail", "cg_instructions", "valgrind", 101.0), ("sort/tail", "cg_instructions", "valgrind", 190.0)])
    d = runs_diff.diff(before, after, "cg_instructions").set_index("case")
    assert d.loc["fib/tail", "change"] == pytest.approx(0.01)
    assert d.loc["sort/tail", "change"] == pytest.approx(-0.05)
    assert "gone/tail" not in d.index
    assert runs_diff.unmatched(before, after, "cg_instructions") == (["gone/tail"], [])
    assert "| fib/tail | 100 | 101 | +1.00% |" in runs_diff.markdown(d.reset_index())


def test_a_timed_metric_is_refused_across_runs():
    timed = frame([("fib/tail", "ns_per_call", "tsc", 10.0)])
    with pytest.raises(ValueError, match="does not compare across runs"):
        runs_diff.diff(timed, timed, "ns_per_call")
    assert len(runs_diff.diff(timed, timed, "ns_per_call", allow_timed=True)) == 1


def test_a_metric_with_no_rows_is_an_error():
    with pytest.raises(ValueError, match="no measured rows"):
        runs_diff.diff(frame([("a", "x", "valgrind", 1.0)]), frame([("a", "y", "valgrind", 1.0)]), "y")


def test_cli_exit_codes(tmp_path, capsys):
    assert runs_diff.main([str(tmp_path / "none"), str(tmp_path / "none"), "--experiment", "e", "--metric", "m"]) == 2
    assert "is not a run directory" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        runs_diff.main([str(tmp_path), str(tmp_path), "--experiment", "e", "--metric", "m", "--worse-than", "-1"])


def test_a_parameter_recorded_only_later_still_matches_but_a_changed_one_does_not():
    before = frame([("fib/tail", "cg_instructions", "valgrind", 100.0)], "size=24")
    assert len(runs_diff.diff(before, frame([("fib/tail", "cg_instructions", "valgrind", 99.0)], "clock=real;size=24"), "cg_instructions")) == 1
    assert runs_diff.diff(before, frame([("fib/tail", "cg_instructions", "valgrind", 99.0)], "size=12"), "cg_instructions").empty
