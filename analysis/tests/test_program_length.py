"""The stack model's program length axis, its dispatch-mode groups, and what the analysis makes of
them, on a small live run of this build (seconds; no machine-specific numbers are asserted)."""
import json
import subprocess
from pathlib import Path

import pytest

from dispatchlab_analysis import compare, figures, tables
from dispatchlab_analysis.results import load_run, research_stack_config, with_params


@pytest.fixture(scope="module")
def sweep_run(dlab_bin, tmp_path_factory):
    root = tmp_path_factory.mktemp("results")
    run_dir = subprocess.run([dlab_bin, "new-run", "--results", root], check=True, capture_output=True, text=True).stdout.strip()
    subprocess.run([dlab_bin, "models", "--model", "stack", "--stack-copies", "2,17", "--statements", "16,64",
                    "--placements", "vec,sp,sp_wt_nr,sp_spill", "--mode-placements", "sp,sp_spill", "--samples", "3", "--warmup", "1",
                    "--dispatches", "20000", "--run-dir", run_dir], check=True, capture_output=True, text=True)
    return Path(run_dir)


def test_rows_record_program_length_and_shape(sweep_run):
    df = with_params(load_run(sweep_run).experiments["models"].summary)
    assert set(df["statements"]) == {16, 64}
    assert (df["distinct_handlers"] > 0).all() and (df["distinct_pairs"] >= df["distinct_handlers"]).all()
    # A longer program of the same seed has more distinct handler pairs.
    pairs = df[(df["copies"] == 17)].groupby("statements")["distinct_pairs"].first()
    assert pairs[64] > pairs[16]
    assert set(df["handlers"].dropna()) == {20, 170}
    assert research_stack_config(df[df["model"] == "stack"]) == (17, 64)


def test_mode_groups_run_every_dispatch_mode_against_switch_and_name_what_is_not_generated(sweep_run):
    run = load_run(sweep_run)
    df = with_params(run.experiments["models"].summary)
    sp_modes = df[(df["placement"] == "sp") & df["baseline"].str.contains("/switch/")]
    assert set(sp_modes["dispatch"]) == {"switch", "tail", "tail_pn", "goto", "goto_nodup"}
    groups = run.experiments["models"].sidecar["groups"]
    assert not any(g["group"].startswith("stack modes sp_spill") for g in groups)
    # sp_spill exists in plain tail calls only: its mode group is reported as not run, with why.
    skipped = {g["group"]: g["why"] for g in run.experiments["models"].sidecar["skipped_groups"]}
    why = skipped["stack modes sp_spill x17 s64"]
    assert "sp_spill/switch is not generated" in why and "no argument is passed" in why


def test_sweep_table_and_figure(sweep_run, tmp_path):
    run = load_run(sweep_run)
    md = tables.length_sweep_table(run)
    assert "| placement | 16 statements | 64 statements |" in md and "distinct pairs" in md
    rfc = tables.rfc_change_table([run])
    assert "(171 handlers, 64 statements)" in rfc.splitlines()[0]
    png = figures.cycles_vs_statements(run, tmp_path)
    assert png.exists() and (tmp_path / "cycles_vs_statements.csv").exists()
    model, label = compare.model_change_by_dispatch(with_params(run.experiments["models"].summary), "cycles_tsc_estimate"
                                                    if "cycles_tsc_estimate" in set(run.experiments["models"].summary["metric"])
                                                    else "tsc_ticks")
    if not model.empty:  # empty only where the estimate is unavailable and the ticks were not chosen
        assert label.startswith("stack model, placement sp, 171 handlers, 64 statements")
        assert set(model["dispatch"]) == {"tail", "tail_pn", "goto", "goto_nodup"}


def test_bad_lengths_are_refused_with_the_option_named(dlab_bin):
    for args, option in ((["--statements", "0"], "--statements"), (["--statements", "64,x"], "--statements"),
                         (["--length", "-1"], "--length"), (["--stack-copies", "65"], "--stack-copies")):
        out = subprocess.run([dlab_bin, "models", "--no-save", *args], capture_output=True, text=True)
        assert out.returncode != 0
        assert option in out.stderr, out.stderr
