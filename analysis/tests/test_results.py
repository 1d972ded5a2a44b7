import math

import pytest

from dispatchlab_analysis.results import ResultFormatError, load_run


def test_loads_every_table_of_a_run(fixture_run):
    run = load_run(fixture_run)
    assert run.machine["cpu_slug"] == "icx-6-106"
    assert set(run.experiments) == {"calibrate"}
    exp = run.experiments["calibrate"]
    assert set(exp.summary["case"]) == {"add_chain", "store_load_chain"}
    assert len(exp.samples) == exp.summary["n"].max() * len(exp.summary)


def test_unavailable_values_stay_missing_never_zero(fixture_run):
    s = load_run(fixture_run).experiments["calibrate"].summary
    cycles = s[(s.metric == "cycles") & (s.case == "add_chain")].iloc[0]
    assert math.isnan(cycles["median"])
    assert cycles["n"] == 0
    assert "no hardware PMU" in cycles["unavailable_reason"]
    faults = s[(s.metric == "page_faults") & (s.case == "add_chain")].iloc[0]
    assert faults["median"] == 0  # measured zero is a value, and is kept


def test_a_header_that_does_not_match_the_sidecar_is_rejected(fixture_run):
    p = fixture_run / "calibrate.summary.csv"
    text = p.read_text().replace("median", "mean", 1)
    p.write_text(text)
    with pytest.raises(ResultFormatError):
        load_run(fixture_run)


def test_missing_directory_is_a_clear_error(tmp_path):
    with pytest.raises(FileNotFoundError):
        load_run(tmp_path / "nope")
