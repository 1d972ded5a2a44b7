"""The cycle model joins each case's measured cycles (models) with its ideal bound and simulated
mispredicts (models_simulated, a real `dlab models --predict` run in the fixture) and the penalty
`dlab calibrate` wrote; cases missing from either side, or without an ideal bound, are left out."""
import json
import shutil
from pathlib import Path

import pytest

from dispatchlab_analysis import report
from dispatchlab_analysis.cycle_model import CONDITIONAL_ROW, FALLBACK_INDIRECT_ROW, cycle_model, cycle_model_markdown, indirect_row
from dispatchlab_analysis.results import load_run, with_params

FIXTURES = Path(__file__).parent / "fixtures"
INDIRECT_ROW = "ittage_zen4"  # the fixture's Zen 4 row (run_dir)


@pytest.fixture
def run_dir(tmp_path):
    dst = tmp_path / "run"
    shutil.copytree(FIXTURES / "run-models", dst)
    for suffix in (".summary.csv", ".samples.csv", ".json"):
        shutil.copy(FIXTURES / "run-icx" / f"calibrate{suffix}", dst / f"calibrate{suffix}")
    sidecar = json.loads((dst / "calibrate.json").read_text())
    sidecar["mispredict_penalty"] = {"cycles_per_mispredict": 20.0, "ci95_lo": 19.0, "ci95_hi": 21.0,
                                     "metric": "cycles_tsc_estimate", "assumed_mispredicts_per_call": 15 / 16}
    (dst / "calibrate.json").write_text(json.dumps(sidecar))
    # A Zen 4 fingerprint of before CPUs named their predictor rows: the CPU table's row of its key
    # (ittage_zen4, which the fixture's simulation has) is the one charged.
    machine = json.loads((dst / "machine.json").read_text())
    machine["microarchitecture"].update({"key": "zen4", "name": "Zen 4"})
    (dst / "machine.json").write_text(json.dumps(machine))
    return dst


def test_predicted_is_the_ideal_bound_plus_mispredicts_times_the_penalty(run_dir):
    run = load_run(run_dir)
    table, notes = cycle_model(run)
    s = run.experiments["models_simulated"].summary
    # The fixture's simulated cases in tail dispatch are all timed in its models experiment too
    # (matched by parameters: the older run names its cases without the length).
    assert sorted(table["case"]) == sorted(set(s["case"]))
    m = with_params(run.experiments["models"].summary)
    for r in table.itertuples():
        sim = s[s["case"] == r.case].set_index("metric")["median"]
        ideal = sim[[k for k in sim.index if k.startswith("ideal_cycles[")][0]]
        mispredicts = sim[f"simulated_indirect_mispredicts[{INDIRECT_ROW}]"] + sim[f"simulated_conditional_mispredicts[{CONDITIONAL_ROW}]"]
        p = with_params(s[s["case"] == r.case]).iloc[0]
        same = m[(m["metric"] == "cycles_tsc_estimate") & (m["model"] == p["model"]) & (m["placement"] == p["placement"])
                 & (m["copies"] == p["copies"]) & (m["dispatch"] == p["dispatch"])]
        same = same[(same["length"] == p["length"]) if p["model"] != "stack" else (same["statements"] == p["statements"])]
        if p["model"] != "stack":
            same = same[same["order"] == p["order"]]
        assert len(same) == 1, r.case
        assert r.measured == pytest.approx(same["median"].iloc[0])
        assert r.predicted == pytest.approx(ideal + 20.0 * mispredicts)
        assert r.error == pytest.approx(r.predicted / r.measured - 1)
        assert r.ideal_share + r.mispredict_share == pytest.approx(1)
    assert any(n.startswith("memory-order flushes: not in the model") for n in notes)
    # The fixture's simulation is from before the ordered bound: its column is empty, and said so.
    assert table["predicted_ordered"].isna().all() and any(n.startswith("ordered: not in this run") for n in notes)


def test_the_report_has_the_cycle_model_and_none_without_a_penalty(run_dir):
    assert "## Cycle model, checked against measured cycles" in report.analysis_markdown(load_run(run_dir))
    sidecar = json.loads((run_dir / "calibrate.json").read_text())
    sidecar["mispredict_penalty"] = {"unavailable_reason": "no cycle metric here", "metric": ""}
    (run_dir / "calibrate.json").write_text(json.dumps(sidecar))
    assert cycle_model_markdown(load_run(run_dir)) is None


def test_the_flush_penalty_fit_recovers_a_known_slope(run_dir, monkeypatch):
    """residual = 2 + 30 x flushes exactly for one row: F = 30 with a zero-width interval and R2 1;
    a row whose flushes never change is said to have nothing to fit; stack cases are left out."""
    import pandas as pd
    from dispatchlab_analysis import cycle_model as cm
    flushes = [0.0, 0.001, 0.01, 0.5]
    table = pd.DataFrame({"case": [f"k{i}" for i in range(4)] + ["s"], "model": ["kcopy_u", "kcopy_u", "kcopy_o", "kcopy_o", "stack"],
                          "predicted": [3.0] * 5, "measured": [3.0 + 2 + 30 * f for f in flushes] + [100.0],
                          "simulated_memory_order_flushes[store_sets]": flushes + [9.0],
                          "simulated_memory_order_flushes[never_speculate]": [0.0] * 5})
    monkeypatch.setattr(cm, "cycle_model", lambda run: (table, []))
    fits, notes = cm.flush_penalty_fits(load_run(run_dir))
    s = fits.set_index("row")
    assert s.loc["store_sets", "cases"] == 4
    assert s.loc["store_sets", "penalty"] == pytest.approx(30)
    assert s.loc["store_sets", "intercept"] == pytest.approx(2)
    assert s.loc["store_sets", "r2"] == pytest.approx(1)
    assert s.loc["store_sets", "ci95_hi"] - s.loc["store_sets", "ci95_lo"] == pytest.approx(0, abs=1e-9)
    assert s.loc["store_sets", "vs_mispredict"] == pytest.approx(30 / 20.0)  # the fixture's calibrate penalty
    assert "nothing to fit" in s.loc["never_speculate", "why"]
    assert any(n.startswith("FITTED, not measured") for n in notes)
    # noise widens the interval: Student's t with n - 2 degrees of freedom
    table.loc[1, "measured"] += 0.5
    fits, _ = cm.flush_penalty_fits(load_run(run_dir))
    lo, hi = fits.set_index("row").loc["store_sets", ["ci95_lo", "ci95_hi"]]
    assert lo < 30 < hi


def test_the_report_has_the_flush_penalty_fit(run_dir):
    text = report.analysis_markdown(load_run(run_dir))
    assert "## Flush penalty, fitted on the K-copy series" in text
    assert "| always_speculate |" in text[text.index("## Flush penalty"):]


def test_the_indirect_row_is_the_cpus_named_one_or_the_papers(run_dir):
    """The CPU table names ittage_zen3 for Zen 3 and ittage_zen4 for Zen 4 and 5 (published sizes);
    a fingerprint's own `predictors` wins; a CPU with no published size gets the CBP-3 row, said so."""
    run = load_run(run_dir)
    assert indirect_row(run)[0] == "ittage_zen4" and "CPU table" in indirect_row(run)[1]
    run.machine["microarchitecture"] = {"key": "zen3", "name": "Zen 3"}
    assert indirect_row(run)[0] == "ittage_zen3"
    run.machine["microarchitecture"] = {"key": "zen5", "name": "Zen 5", "predictors": {"indirect": "btb_512x1", "why": "a test"}}
    assert indirect_row(run) == ("btb_512x1", "the row Zen 5 is closest to by its fingerprint: a test")
    run.machine["microarchitecture"] = {"key": "icx", "name": "Ice Lake-SP"}
    row, why = indirect_row(run)
    assert row == FALLBACK_INDIRECT_ROW == "ittage_64kb" and "no published size" in why
    # The fixture's simulation has no ittage_64kb: no model rather than a wrong one.
    assert cycle_model(run) is None


def test_the_kernels_check_refutes_a_row_whose_mispredicts_outlast_the_dispatch(tmp_path):
    """wasm (cycles per call) beside wasm_simulated (dispatches per call, mispredicts per dispatch):
    a case of 1,000 dispatches taking 4,000 cycles is 4 cycles a dispatch; a row mispredicting every
    dispatch at 20 cycles charges 20 (refuted, marked !), one mispredicting 1 in 100 charges 0.2; the
    conditional row adds to both. A timed case of another size, and one not simulated, are left out."""
    import pandas as pd
    from dispatchlab_analysis.cycle_model import kernel_mispredict_check, kernel_mispredict_markdown
    from dispatchlab_analysis.results import Experiment, Run

    def rows(case, params, metrics):
        return [{"case": case, "params": params, "metric": m, "median": v, "n": 1} for m, v in metrics]
    engine = "dispatch=switch;placement=sp;size=24;workload=fib"
    timed = pd.DataFrame(rows("fib/switch", engine, [("cycles_tsc_estimate", 4000.0)])
                         + rows("fib/tail", engine.replace("switch", "tail").replace("size=24", "size=30"), [("cycles_tsc_estimate", 9.0)])
                         + rows("sort/switch", "dispatch=switch;size=5;workload=sort", [("cycles_tsc_estimate", 9.0)]))
    simulated = pd.DataFrame(rows("fib/switch", engine + ";dispatches=1000",
                                  [("simulated_indirect_mispredicts[btb_512x1]", 1.0), ("simulated_indirect_mispredicts[ittage_64kb]", 0.01),
                                   ("simulated_conditional_mispredicts[tage_62kbit]", 0.001)])
                             + rows("fib/tail", engine.replace("switch", "tail") + ";dispatches=1000",
                                    [("simulated_indirect_mispredicts[btb_512x1]", 0.0), ("simulated_indirect_mispredicts[ittage_64kb]", 0.0),
                                     ("simulated_conditional_mispredicts[tage_62kbit]", 0.0)]))
    run = Run(tmp_path, {}, None, {
        "wasm": Experiment("wasm", timed, pd.DataFrame(), {}),
        "wasm_simulated": Experiment("wasm_simulated", simulated, pd.DataFrame(), {}),
        "calibrate": Experiment("calibrate", pd.DataFrame(), pd.DataFrame(),
                                {"mispredict_penalty": {"cycles_per_mispredict": 20.0, "metric": "cycles_tsc_estimate"}}),
    })
    table, notes = kernel_mispredict_check(run)
    assert list(table["case"]) == ["fib/switch"]  # fib/tail timed at another size; sort not simulated
    r = table.iloc[0]
    assert r["measured"] == pytest.approx(4.0)
    assert r["btb_512x1"] == pytest.approx(20 * 1.001) and r["ittage_64kb"] == pytest.approx(20 * 0.011)
    md = kernel_mispredict_markdown(run)
    assert "| fib/switch | 4.00 | 20.02 ! | 0.22 |" in md
    assert "`btb_512x1` 1 of 1, `ittage_64kb` 0 of 1" in md
    # Without the conditional row: the indirect mispredicts alone, said so, never a 0 put in its place.
    run.experiments["wasm_simulated"].summary = simulated[~simulated["metric"].str.startswith("simulated_conditional")]
    table, notes = kernel_mispredict_check(run)
    assert table.iloc[0]["btb_512x1"] == pytest.approx(20.0)
    assert any("not simulated in this run" in n for n in notes)


def test_the_kernels_cycle_model_charges_the_cpus_row_on_the_ideal_bound(tmp_path):
    """The cycle model on the kernels: a tail case of 1,000 dispatches timed at 5,000 cycles a call is
    5 cycles a dispatch; its ideal bound 3, the CPU's row (the fallback ITTAGE: no CPU named) 0.05
    and TAGE 0.01 per dispatch at 20 cycles: 3 + 1.2 = 4.2 predicted, -16%; the ordered and resource
    bounds give the upper and lower ends. The switch case has no ideal bound (one loop function):
    left out, never a 0 put in."""
    import pandas as pd
    from dispatchlab_analysis.cycle_model import kernel_cycle_model, kernel_cycle_model_markdown
    from dispatchlab_analysis.results import Experiment, Run

    def rows(case, params, metrics):
        return [{"case": case, "params": params, "metric": m, "median": v, "n": 0 if v is None else 1} for m, v in metrics]
    tail = "dispatch=tail;placement=sp;size=24;workload=fib"
    switch = tail.replace("tail", "switch")
    timed = pd.DataFrame(rows("fib/tail", tail, [("cycles_tsc_estimate", 5000.0)]) + rows("fib/switch", switch, [("cycles_tsc_estimate", 6000.0)]))
    mispredicts = [(f"simulated_indirect_mispredicts[{FALLBACK_INDIRECT_ROW}]", 0.05), (f"simulated_conditional_mispredicts[{CONDITIONAL_ROW}]", 0.01)]
    simulated = pd.DataFrame(
        rows("fib/tail", tail + ";dispatches=1000", mispredicts + [("ideal_cycles[llvm-mca-19 znver4]", 3.0),
                                                                   ("ideal_cycles_ordered[llvm-mca-19 znver4]", 9.0),
                                                                   ("ideal_cycles_resources[llvm-mca-19 znver4]", 2.0)])
        + rows("fib/switch", switch + ";dispatches=1000", mispredicts + [("ideal_cycles[llvm-mca-19 znver4]", None)]))
    run = Run(tmp_path, {}, None, {
        "wasm": Experiment("wasm", timed, pd.DataFrame(), {}),
        "wasm_simulated": Experiment("wasm_simulated", simulated, pd.DataFrame(), {}),
        "calibrate": Experiment("calibrate", pd.DataFrame(), pd.DataFrame(),
                                {"mispredict_penalty": {"cycles_per_mispredict": 20.0, "metric": "cycles_tsc_estimate"}}),
    })
    table, notes = kernel_cycle_model(run)
    assert list(table["case"]) == ["fib/tail"]
    r = table.iloc[0]
    assert r["measured"] == pytest.approx(5.0) and r["predicted"] == pytest.approx(4.2) and r["error"] == pytest.approx(-0.16)
    assert r["predicted_ordered"] == pytest.approx(10.2) and r["predicted_resources"] == pytest.approx(3.2)
    assert r["ideal_share"] == pytest.approx(3 / 4.2)
    assert "| fib/tail | 5.00 | 3.00 | 60.0 | 4.20 | -16% | 3.20 | 10.20 | 71% | 29% |" in kernel_cycle_model_markdown(run)
    assert any(n.startswith("mispredicts: SIMULATED") for n in notes)
    # Without the CPU's row simulated: no model (a missing row is not zero mispredicts).
    run.experiments["wasm_simulated"].summary = simulated[~simulated["metric"].str.startswith("simulated_indirect")]
    assert kernel_cycle_model(run) is None
