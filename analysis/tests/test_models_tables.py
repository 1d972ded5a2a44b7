import math

import pandas as pd

from dispatchlab_analysis.tables import MODEL_COLUMNS, WASM_COLUMNS, parse_params, wide_markdown


def row(variant, metric, median, n=5, ratio=math.nan, k=math.nan, baseline="A"):
    return dict(variant=variant, baseline=baseline, metric=metric, n=n, median=median, ci95_lo=median * 0.9,
                ci95_hi=median * 1.1, ratio=ratio, ratio_ci95_lo=ratio, ratio_ci95_hi=ratio, smaller_k=k,
                smaller_n=5 if n else math.nan, params=f"dispatch=tail;indirect_jump_sites=514;v={variant}")


def test_params_are_split_into_a_dict():
    assert parse_params("a=1;b=x=y;c=") == {"a": "1", "b": "x=y", "c": ""}


def test_wide_table_has_one_row_per_case_and_only_measured_columns():
    s = pd.DataFrame([
        row("A", "cycles_tsc_estimate", 10.0),
        row("A", "memory_order_flushes", 0.002),
        row("A", "cycles", math.nan, n=0),
        row("B", "cycles_tsc_estimate", 6.6, ratio=0.66, k=5),
        row("B", "memory_order_flushes", 0.004),
        row("B", "cycles", math.nan, n=0),
    ])
    md = wide_markdown(s, "cycles_tsc_estimate", MODEL_COLUMNS).splitlines()
    assert md[0] == "| case | dispatch sites | cycles_tsc_estimate [95% CI] | vs group baseline | flushes/1k |"
    assert md[2] == "| A | 514 | 10 [9, 11] | baseline | 2 |"
    assert md[3] == "| B | 514 | 6.6 [5.94, 7.26] | -34% [-34%, -34%], 5/5 faster | 4 |"
    # cycles was unavailable everywhere: no column at all, rather than a column of blanks or zeros
    assert "| cycles |" not in md[0]


def test_energy_per_call_is_a_column_only_where_it_was_counted():
    counted = pd.DataFrame([
        row("A", "cycles_tsc_estimate", 10.0), row("A", "energy_joules", 2.5e-6),
        row("B", "cycles_tsc_estimate", 5.0, ratio=0.5, k=5), row("B", "energy_joules", 1.25e-6),
    ])
    md = wide_markdown(counted, "cycles_tsc_estimate", WASM_COLUMNS).splitlines()
    assert md[0].endswith("| energy uJ (package) |")
    assert md[2].endswith("| 2.5 |") and md[3].endswith("| 1.25 |")
    absent = pd.DataFrame([row("A", "cycles_tsc_estimate", 10.0), row("A", "energy_joules", math.nan, n=0)])
    assert "energy" not in wide_markdown(absent, "cycles_tsc_estimate", WASM_COLUMNS).splitlines()[0]
