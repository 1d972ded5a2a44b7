"""The cycle model joins each case's measured cycles (models) with its ideal bound and simulated
mispredicts (models_simulated, a real `dlab models --predict` run in the fixture) and the penalty
`dlab calibrate` wrote; cases missing from either side, or without an ideal bound, are left out."""
import json
import shutil
from pathlib import Path

import pytest

from dispatchlab_analysis import report
from dispatchlab_analysis.cycle_model import CONDITIONAL_ROW, INDIRECT_ROW, cycle_model, cycle_model_markdown
from dispatchlab_analysis.results import load_run, with_params

FIXTURES = Path(__file__).parent / "fixtures"


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
    assert any("not in the model yet" in n for n in notes)


def test_the_report_has_the_cycle_model_and_none_without_a_penalty(run_dir):
    assert "## Cycle model, checked against measured cycles" in report.analysis_markdown(load_run(run_dir))
    sidecar = json.loads((run_dir / "calibrate.json").read_text())
    sidecar["mispredict_penalty"] = {"unavailable_reason": "no cycle metric here", "metric": ""}
    (run_dir / "calibrate.json").write_text(json.dumps(sidecar))
    assert cycle_model_markdown(load_run(run_dir)) is None
