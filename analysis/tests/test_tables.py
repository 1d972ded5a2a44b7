import math

import pandas as pd

from dispatchlab_analysis.results import load_run
from dispatchlab_analysis.tables import (counters_markdown, fmt_change, markdown_table, summary_markdown,
                                         unavailable_markdown)


def test_change_is_written_as_a_signed_percentage():
    assert fmt_change(0.66) == "-34%"
    assert fmt_change(1.05) == "+5%"
    assert fmt_change(1.001) == "0%"
    assert fmt_change(float("nan")) == ""


def test_markdown_table_escapes_pipes_and_newlines():
    t = markdown_table(["a", "b"], [["x|y", "1\n2"]])
    assert t.splitlines() == ["| a | b |", "|---|---|", "| x\\|y | 1 2 |"]


def test_counters_table_shows_the_selected_backend_or_every_reason(fixture_run):
    run = load_run(fixture_run)
    md = counters_markdown(run.counters)
    rows = {line.split("|")[1].strip(): line for line in md.splitlines()[2:]}
    assert "**unavailable**" in rows["cycles"]
    assert "no hardware PMU" in rows["cycles"]
    assert "papi:" in rows["cycles"]  # every candidate's reason is listed
    assert "| available | perf_event |" in rows["task_clock"]
    assert "| estimated | tsc |" in rows["cycles_tsc_estimate"]


def test_summary_lists_measured_rows_and_unavailable_ones_separately(fixture_run):
    run = load_run(fixture_run)
    s = run.experiments["calibrate"].summary
    md = summary_markdown(s)
    assert "| add_chain | tsc_ticks |" in md
    assert "cycles_tsc_estimate (estimate)" in md
    assert "| add_chain | cycles |" not in md  # unavailable: not a number in the table
    gaps = unavailable_markdown(s)
    assert "| cycles |" in gaps and "no hardware PMU" in gaps


def test_ratio_row_reports_spread_and_k_of_n():
    s = pd.DataFrame([
        dict(variant="A", baseline="A", metric="m", estimated=False, n=5, median=10.0, ci95_lo=9.0, ci95_hi=11.0,
             mad=0.5, unit="x/op", ratio=math.nan, ratio_ci95_lo=math.nan, ratio_ci95_hi=math.nan,
             smaller_k=math.nan, smaller_n=math.nan),
        dict(variant="B", baseline="A", metric="m", estimated=False, n=5, median=6.6, ci95_lo=6.0, ci95_hi=7.0,
             mad=0.2, unit="x/op", ratio=0.66, ratio_ci95_lo=0.6, ratio_ci95_hi=0.7, smaller_k=5, smaller_n=5),
    ])
    md = summary_markdown(s)
    assert "| B | m | 6.6 | [6, 7] | 0.2 | x/op | -34% [-40%, -30%], 5/5 smaller |" in md
    assert "| A | m | 10 | [9, 11] | 0.5 | x/op | baseline |" in md
